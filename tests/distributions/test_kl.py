"""ember.distributions.kl_divergence held to torch's: every registered pair (values and gradients in both
distributions' parameters), the Bregman route for exponential families, the registry's dispatch (most
specific pair, memoised, ambiguity warning) and its errors.
"""

import warnings

import numpy as np
import pytest
import torch
from compare import assert_same_error, check

import ember

_R = np.random.default_rng(31)


def _u(lo, hi, shape=(3,)):
    return _R.uniform(lo, hi, shape)


def _spd(*batch, n=3):
    a = _R.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _d(name):
    return lambda lib, *p: getattr(lib.distributions, name)(*p)


# name -> (build(lib, *params), params of p, params of q). Scalar families have batch shape (3,), the
# categorical ones (3,) with 4 events, the multivariate normals (2,) with event size 3. Values are chosen so
# that the pairs with support conditions meet both the finite and the infinite case.
SPECS = {
    "Bernoulli": (_d("Bernoulli"), [np.array([0.2, 0.5, 0.9])], [np.array([0.3, 0.6, 0.4])]),
    "Beta": (_d("Beta"), [_u(0.5, 3), _u(0.5, 3)], [_u(0.5, 3), _u(0.5, 3)]),
    "Binomial": (
        _d("Binomial"),
        [np.array([10.0, 10.0, 7.0]), _u(0.1, 0.9)],
        [np.array([10.0, 6.0, 7.0]), _u(0.1, 0.9)],
    ),
    "Categorical": (_d("Categorical"), [_u(0.1, 1, (3, 4))], [_u(0.1, 1, (3, 4))]),
    "Cauchy": (_d("Cauchy"), [_u(-2, 2), _u(0.5, 2)], [_u(-2, 2), _u(0.5, 2)]),
    "ContinuousBernoulli": (
        _d("ContinuousBernoulli"),
        [np.array([0.2, 0.4995, 0.8])],
        [np.array([0.7, 0.3, 0.6])],
    ),
    "Dirichlet": (_d("Dirichlet"), [_u(0.5, 3, (3, 4))], [_u(0.5, 3, (3, 4))]),
    "Exponential": (_d("Exponential"), [_u(0.5, 3)], [_u(0.5, 3)]),
    "Gamma": (_d("Gamma"), [_u(0.5, 3), _u(0.5, 3)], [_u(0.5, 3), _u(0.5, 3)]),
    "Geometric": (_d("Geometric"), [_u(0.1, 0.9)], [_u(0.1, 0.9)]),
    "Gumbel": (_d("Gumbel"), [_u(-1, 1), _u(0.5, 2)], [_u(-1, 1), _u(0.5, 2)]),
    "HalfNormal": (_d("HalfNormal"), [_u(0.5, 2)], [_u(0.5, 2)]),
    "Independent": (
        lambda lib, m, s: lib.distributions.Independent(lib.distributions.Normal(m, s), 1),
        [_u(-1, 1, (3, 2)), _u(0.5, 2, (3, 2))],
        [_u(-1, 1, (3, 2)), _u(0.5, 2, (3, 2))],
    ),
    "Laplace": (_d("Laplace"), [_u(-1, 1), _u(0.5, 2)], [_u(-1, 1), _u(0.5, 2)]),
    "LowRankMultivariateNormal": (
        _d("LowRankMultivariateNormal"),
        [_u(-1, 1, (2, 3)), _u(-1, 1, (2, 3, 2)), _u(0.5, 2)],
        [_u(-1, 1, (2, 3)), _u(-1, 1, (3, 1)), _u(0.5, 2, (2, 3))],
    ),
    "MultivariateNormal": (_d("MultivariateNormal"), [_u(-1, 1, (2, 3)), _spd(2)], [_u(-1, 1, (3,)), _spd()]),
    "Normal": (_d("Normal"), [_u(-1, 1), _u(0.5, 2)], [_u(-1, 1), _u(0.5, 2)]),
    "OneHotCategorical": (_d("OneHotCategorical"), [_u(0.1, 1, (3, 4))], [_u(0.1, 1, (3, 4))]),
    "Pareto": (
        _d("Pareto"),
        [np.array([1.0, 0.5, 2.0]), np.array([0.8, 1.5, 3.0])],
        [np.array([0.7, 1.0, 1.5]), np.array([2.0, 2.5, 1.2])],
    ),
    "Poisson": (_d("Poisson"), [_u(0.5, 5)], [_u(0.5, 5)]),
    "TransformedDistribution": (_d("LogNormal"), [_u(-1, 1), _u(0.5, 2)], [_u(-1, 1), _u(0.5, 2)]),
    "Uniform": (
        _d("Uniform"),
        [np.array([0.1, -0.5, 0.3]), np.array([0.6, 0.9, 1.5])],
        [np.array([0.05, -1.0, 0.0]), np.array([0.9, 1.0, 1.2])],
    ),
}
_EXP_FAMILY = ("ExponentialFamily", "ExponentialFamily")
PAIRS = sorted((p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY)


def test_the_registry_has_torchs_pairs():
    assert sorted((p.__name__, q.__name__) for p, q in ember.distributions.kl._KL_REGISTRY) == PAIRS


def _kl_fn(name_p, name_q, n_p):
    build_p, build_q = SPECS[name_p][0], SPECS[name_q][0]

    def fn(lib, *params):
        return lib.distributions.kl_divergence(build_p(lib, *params[:n_p]), build_q(lib, *params[n_p:]))

    return fn


@pytest.mark.parametrize("pair", [p for p in PAIRS if p != _EXP_FAMILY], ids="-".join)
def test_kl_pair(pair):
    name_p, name_q = pair
    p_params, q_params = SPECS[name_p][1], SPECS[name_q][2]
    check(
        _kl_fn(name_p, name_q, len(p_params)),
        *p_params,
        *q_params,
        grad=True,
        rtol=1e-6,
        atol=1e-7,
        check_stride=False,
    )


def test_exponential_families_without_a_pair_take_the_bregman_divergence():
    def fn(lib, df_p, cov_p, df_q, cov_q):
        wishart = lib.distributions.Wishart
        return lib.distributions.kl_divergence(wishart(df_p, cov_p), wishart(df_q, cov_q))

    check(
        fn,
        np.array([4.0, 5.5]),
        _spd(2),
        np.array([3.5, 6.0]),
        _spd(2),
        grad=True,
        rtol=1e-6,
        check_stride=False,
    )


def _both(lib, a, b):
    return lib.distributions.kl_divergence(a, b)


ERRORS = [
    (
        "unregistered",
        lambda lib, x: _both(lib, lib.distributions.Normal(x, 1.0), lib.distributions.Categorical(x.abs())),
    ),
    (
        "unregistered_reversed",
        lambda lib, x: _both(lib, lib.distributions.Categorical(x.abs()), lib.distributions.Normal(x, 1.0)),
    ),
    (
        "cross_exponential_families",
        lambda lib, x: _both(
            lib, lib.distributions.Poisson(x.abs()), lib.distributions.Dirichlet(x.abs() + 1)
        ),
    ),
    (
        "binomial_counts",
        lambda lib, x: _both(
            lib, lib.distributions.Binomial(2, x.abs() / 3), lib.distributions.Binomial(3, x.abs() / 3)
        ),
    ),
    (
        "independent_ndims",
        lambda lib, x: _both(
            lib,
            lib.distributions.Independent(lib.distributions.Normal(x.view(1, 3), 1.0), 1),
            lib.distributions.Independent(lib.distributions.Normal(x.view(1, 3), 1.0), 2),
        ),
    ),
    (
        "transforms_differ",
        lambda lib, x: _both(
            lib,
            lib.distributions.TransformedDistribution(
                lib.distributions.Normal(x, 1.0), lib.distributions.ExpTransform()
            ),
            lib.distributions.TransformedDistribution(
                lib.distributions.Normal(x, 1.0), lib.distributions.AffineTransform(0.0, 2.0)
            ),
        ),
    ),
    (
        "mvn_event",
        lambda lib, x: _both(
            lib,
            lib.distributions.MultivariateNormal(x, lib.eye(3, dtype=x.dtype)),
            lib.distributions.MultivariateNormal(x[:2], lib.eye(2, dtype=x.dtype)),
        ),
    ),
    (
        "lowrank_event",
        lambda lib, x: _both(
            lib,
            lib.distributions.LowRankMultivariateNormal(x, x.view(3, 1), x.abs() + 1),
            lib.distributions.LowRankMultivariateNormal(x[:2], x[:2].view(2, 1), x[:2].abs() + 1),
        ),
    ),
    (
        "mvn_lowrank_event",
        lambda lib, x: _both(
            lib,
            lib.distributions.MultivariateNormal(x, lib.eye(3, dtype=x.dtype)),
            lib.distributions.LowRankMultivariateNormal(x[:2], x[:2].view(2, 1), x[:2].abs() + 1),
        ),
    ),
    (
        "lowrank_mvn_event",
        lambda lib, x: _both(
            lib,
            lib.distributions.LowRankMultivariateNormal(x[:2], x[:2].view(2, 1), x[:2].abs() + 1),
            lib.distributions.MultivariateNormal(x, lib.eye(3, dtype=x.dtype)),
        ),
    ),
    ("register_not_a_type", lambda lib, x: lib.distributions.register_kl(3, lib.distributions.Normal)),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c[0])
def test_errors_are_torchs(case):
    assert_same_error(case[1], np.array([0.3, -1.2, 0.8]))


def test_infinite_and_zero_branches():
    """Probabilities of exactly 0 and 1 hit the masked assignments (inf where q has no mass, 0 where p has
    none)."""

    def fn(lib, a, b, c, e):
        kl = lib.distributions.kl_divergence
        dist = lib.distributions
        return kl(dist.Bernoulli(a), dist.Bernoulli(b)), kl(dist.Categorical(c), dist.Categorical(e))

    check(
        fn,
        np.array([0.0, 1.0, 0.5, 0.0]),
        np.array([0.5, 0.5, 0.0, 0.0]),
        np.array([[0.0, 0.5, 0.5], [0.2, 0.3, 0.5]]),
        np.array([[0.3, 0.0, 0.7], [0.2, 0.3, 0.5]]),
    )


class _Sub:
    """Two subclasses of Normal registered against each other's base from opposite sides: an ambiguous
    lookup, in either library."""

    def __init__(self, lib):
        self.lib = lib
        dist = lib.distributions
        self.a = type("SubA", (dist.Normal,), {})
        self.b = type("SubB", (dist.Normal,), {})
        self.keys = [(self.a, dist.Normal), (dist.Normal, self.b)]

    def __enter__(self):
        dist = self.lib.distributions
        dist.register_kl(*self.keys[0])(lambda p, q: self.lib.zeros(1))
        dist.register_kl(*self.keys[1])(lambda p, q: self.lib.ones(1))
        return self

    def __exit__(self, *exc):
        kl = self.lib.distributions.kl
        for k in self.keys:
            kl._KL_REGISTRY.pop(k)
        kl._KL_MEMOIZE.clear()


def test_ambiguous_lookup_warns_and_takes_the_first_argument_first():
    results = []
    for lib in (torch, ember):
        with _Sub(lib) as sub, warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            value = lib.distributions.kl_divergence(sub.a(0.0, 1.0), sub.b(0.0, 1.0))
            again = lib.distributions.kl_divergence(sub.a(0.0, 1.0), sub.b(0.0, 1.0))  # memoised: no warning
        results.append((value.tolist(), again.tolist(), [(x.category.__name__, str(x.message)) for x in w]))
    assert results[0] == results[1]
    assert len(results[0][2]) == 1


def test_a_new_registration_replaces_the_memoised_choice():
    for lib in (torch, ember):
        dist = lib.distributions
        sub = type("SubN", (dist.Normal,), {})
        p = sub(lib.tensor([0.0]), lib.tensor([1.0]))
        first = dist.kl_divergence(p, dist.Normal(lib.tensor([1.0]), lib.tensor([1.0])))
        dist.register_kl(sub, dist.Normal)(lambda p, q: lib.full((1,), 7.0))
        try:
            second = dist.kl_divergence(p, dist.Normal(lib.tensor([1.0]), lib.tensor([1.0])))
        finally:
            dist.kl._KL_REGISTRY.pop((sub, dist.Normal))
            dist.kl._KL_MEMOIZE.clear()
        assert first.tolist() == [0.5] and second.tolist() == [7.0]


def test_kl_divergence_documents_the_pairs():
    def pairs(lib):
        doc = lib.distributions.kl_divergence.__doc__
        return doc[doc.index("following distribution pairs:") :].replace(lib.__name__ + ".", "")

    assert pairs(ember) == pairs(torch)

"""ember.distributions' discrete families (Bernoulli, Binomial, Categorical, Geometric, NegativeBinomial,
Poisson, Multinomial, OneHotCategorical and its straight-through form) and the relaxed ones (RelaxedBernoulli,
LogitRelaxedBernoulli, RelaxedOneHotCategorical, ExpRelaxedCategorical), held to torch.distributions.

FAMILIES is the table; each test runs over it in both libraries (see family_checks.py): statistics with their
gradients, shapes/support/expand, enumerate_support, seeded samples equal to torch's (the count samplers run
torch's own rejection algorithms, ember/_ops/discrete_sampling.py), reparameterized gradients, repr, and the
argument checks with torch's errors.
"""

import numpy as np
import pytest
from compare import assert_same_error, check
from family_checks import (
    STATS,
    Family,
    check_enumerate_support,
    check_repr,
    check_samples,
    check_shapes,
    check_stat,
    d,
)

_R = np.random.default_rng(11)
_P = np.array([0.2, 0.5, 0.9])
_SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
_LOGITS = _R.uniform(-2, 2, (2, 3))


def _f32(a):
    return a.astype(np.float32)


FAMILIES = [
    Family("Bernoulli", d("Bernoulli"), [_P], np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])),
    Family(
        "Bernoulli_logits",
        lambda lib, x: lib.distributions.Bernoulli(logits=x),
        [np.array([-1.0, 0.0, 3.0])],
        np.array([0.0, 1.0, 1.0]),
    ),
    Family("Bernoulli_f32", d("Bernoulli"), [_f32(_P)], _f32(np.array([0.0, 1.0, 1.0]))),
    Family("Binomial", d("Binomial"), [np.array([10.0, 10.0, 10.0]), _P], np.array([0.0, 4.0, 10.0])),
    Family(
        "Binomial_large",
        d("Binomial"),
        [np.array([40.0, 200.0, 35.0]), np.array([0.4, 0.05, 0.8])],
        np.array([16.0, 9.0, 30.0]),
    ),
    Family(
        "Binomial_logits_f32",
        lambda lib, n, x: lib.distributions.Binomial(n, logits=x),
        [_f32(np.array([6.0, 6.0, 6.0])), _f32(np.array([-1.0, 0.5, 2.0]))],
        _f32(np.array([1.0, 3.0, 6.0])),
    ),
    Family("Categorical", d("Categorical"), [_SIMPLEX], np.array([[0, 2], [1, 1]])),
    Family(
        "Categorical_logits",
        lambda lib, x: lib.distributions.Categorical(logits=x),
        [_LOGITS],
        np.array([2, 0]),
    ),
    Family("Categorical_1d", d("Categorical"), [np.array([0.1, 0.6, 0.3])], np.array([1, 2, 0])),
    Family("Geometric", d("Geometric"), [_P], np.array([[0.0, 3.0, 1.0], [7.0, 0.0, 2.0]])),
    Family(
        "Geometric_logits",
        lambda lib, x: lib.distributions.Geometric(logits=x),
        [np.array([-1.0, 0.0, 2.0])],
        np.array([0.0, 3.0, 1.0]),
    ),
    Family(
        "NegativeBinomial",
        d("NegativeBinomial"),
        [np.array([2.0, 5.0, 3.5]), _P * 0.9],
        np.array([0.0, 3.0, 12.0]),
    ),
    Family(
        "NegativeBinomial_logits",
        lambda lib, n, x: lib.distributions.NegativeBinomial(n, logits=x),
        [np.array([1.0, 4.0, 0.5]), np.array([-1.0, 0.3, 1.5])],
        np.array([[0.0, 3.0, 12.0]]),
    ),
    Family(
        "Poisson", d("Poisson"), [np.array([0.5, 4.0, 25.0])], np.array([[0.0, 3.0, 30.0], [1.0, 4.0, 21.0]])
    ),
    Family("Poisson_f32", d("Poisson"), [_f32(np.array([0.0, 9.5, 12.0]))], _f32(np.array([0.0, 3.0, 11.0]))),
    Family(
        "Multinomial",
        d("Multinomial", total_count=6),
        [_SIMPLEX],
        np.array([[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]]),
    ),
    Family(
        "Multinomial_logits",
        lambda lib, x: lib.distributions.Multinomial(4, logits=x),
        [_LOGITS],
        np.array([[1.0, 1.0, 2.0], [0.0, 4.0, 0.0]]),
    ),
    Family(
        "OneHotCategorical", d("OneHotCategorical"), [_SIMPLEX], np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    ),
    Family(
        "OneHotCategorical_logits",
        lambda lib, x: lib.distributions.OneHotCategorical(logits=x),
        [_LOGITS],
        np.array([[0.0, 1.0, 0.0]]),
    ),
    Family(
        "OneHotCategoricalStraightThrough",
        d("OneHotCategoricalStraightThrough"),
        [_SIMPLEX],
        np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
    ),
    Family("RelaxedBernoulli", d("RelaxedBernoulli"), [np.array(0.7), _P], np.array([[0.1, 0.5, 0.7]])),
    Family(
        "RelaxedBernoulli_logits",
        lambda lib, t, x: lib.distributions.RelaxedBernoulli(t, logits=x),
        [np.array([0.5, 1.0, 2.0]), np.array([-1.0, 0.0, 2.0])],
        np.array([0.3, 0.5, 0.9]),
    ),
    Family(
        "LogitRelaxedBernoulli",
        lambda lib, t, p: lib.distributions.relaxed_bernoulli.LogitRelaxedBernoulli(t, p),
        [np.array(0.7), _P],
        np.array([-1.0, 0.5, 2.0]),
    ),
    Family(
        "RelaxedOneHotCategorical",
        d("RelaxedOneHotCategorical"),
        [np.array(0.7), _SIMPLEX],
        np.array([[0.2, 0.3, 0.5], [0.1, 0.8, 0.1]]),
    ),
    Family(
        "RelaxedOneHotCategorical_logits",
        lambda lib, t, x: lib.distributions.RelaxedOneHotCategorical(t, logits=x),
        [np.array([1.5, 0.5]), _LOGITS],
        np.array([[0.2, 0.3, 0.5]]),
    ),
    Family(
        "ExpRelaxedCategorical",
        lambda lib, t, p: lib.distributions.relaxed_categorical.ExpRelaxedCategorical(t, p),
        [np.array(0.7), _SIMPLEX],
        np.log(np.array([[0.2, 0.3, 0.5], [0.1, 0.8, 0.1]])),
    ),
]
_BY_ID = {f.id: f for f in FAMILIES}
ENUMERABLE = [
    "Bernoulli",
    "Bernoulli_logits",
    "Binomial",
    "Categorical",
    "Categorical_1d",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Binomial_logits_f32",
]
RSAMPLE = [
    "RelaxedBernoulli",
    "RelaxedBernoulli_logits",
    "LogitRelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "RelaxedOneHotCategorical_logits",
    "ExpRelaxedCategorical",
    "OneHotCategoricalStraightThrough",
]


@pytest.mark.parametrize("name", STATS)
@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.id)
def test_statistics_and_their_gradients(fam, name):
    check_stat(fam, name)


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.id)
def test_shapes_support_and_expand(fam):
    check_shapes(fam)


@pytest.mark.parametrize("expand", [True, False])
@pytest.mark.parametrize("name", ENUMERABLE)
def test_enumerate_support(name, expand):
    check_enumerate_support(_BY_ID[name], expand)


@pytest.mark.parametrize("shape", [(), (2,), (3, 2)])
@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.id)
def test_seeded_samples_are_torchs(fam, shape):
    check_samples(fam, "sample", shape)


@pytest.mark.parametrize("name", RSAMPLE)
def test_rsample_gradients(name):
    check_samples(_BY_ID[name], "rsample", (4,), grad=True)


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.id)
def test_repr(fam):
    check_repr(fam)


def test_probs_and_logits_convert_both_ways():
    def fn(lib, p, x):
        a, b = lib.distributions.Bernoulli(p), lib.distributions.Categorical(logits=x)
        return a.logits, a.param_shape, b.probs, b.param_shape, lib.distributions.Geometric(p).logits

    check(fn, _P, _LOGITS, grad=[0, 1])


def test_binomial_draws_in_every_regime():
    """Large counts (BTRS), probabilities above 1/2 (count minus the complement's draw), 0 and 1, float32."""

    def fn(lib, n, p):
        lib.manual_seed(1)
        return lib.distributions.Binomial(n, p).sample((50,)), lib.rand(2, dtype=lib.float64)

    n = np.array([0.0, 3.0, 30.0, 30.0, 500.0, 500.0, 12.0, 7.0])
    p = np.array([0.5, 0.0, 0.6, 0.2, 0.5, 0.97, 1.0, 0.3])
    check(fn, n, p)
    check(fn, _f32(n), _f32(p))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_count_samplers_match_torch_over_a_sweep(dtype):
    """A thousand (count, prob) and rate values across every branch of the rejection samplers."""
    rng = np.random.default_rng(3)
    n = np.floor(rng.uniform(0, 300, 1000)).astype(dtype)
    n[::7] += 0.5  # (non-integral counts take the float32 rounding steps)
    p, rate = rng.random(1000).astype(dtype), rng.uniform(0, 60, 1000).astype(dtype)

    def fn(lib, n, p, rate):
        lib.manual_seed(7)
        return lib.binomial(n, p), lib.poisson(rate), lib.rand(2, dtype=lib.float64)
    check(fn, n, p, rate)


def test_extreme_parameters_give_torchs_draws():
    """Infinite and huge rates and counts go through C's conversions (an out-of-range int64 is INT64_MIN)."""
    def fn(lib, rate, n, p):
        lib.manual_seed(2)
        return lib.poisson(rate), lib.binomial(n, p), lib.rand(2, dtype=lib.float64)
    big = np.finfo(np.float32).max
    check(fn, np.array([np.inf, 3.3e38, 1e-40, 0.0, 9.3e18], np.float32),
          np.array([np.inf, np.inf, big, big, 5.0, 5.0, 0.0], np.float32),
          np.array([0.5, 0.7, 0.5, 1e-30, np.nan, 1e-40, 0.5], np.float32))


def test_poisson_gradient_is_zero():
    check(lambda lib, r: lib.poisson(r), np.array([0.5, 20.0]), grad=[0])


def test_binomial_has_no_derivative():
    def fn(lib, n, p):
        lib.binomial(n, p.requires_grad_()).sum().backward()

    assert_same_error(fn, np.array([3.0]), np.array([0.5]))


# ---- argument validation ----------------------------------------------------------------------------------

D = "distributions"
INVALID = [
    ("Bernoulli_range", lambda lib, a: lib.distributions.Bernoulli(a.abs() + 1.5)),
    ("Bernoulli_both", lambda lib, a: lib.distributions.Bernoulli(a, logits=a)),
    ("Bernoulli_neither", lambda lib, a: lib.distributions.Bernoulli()),
    ("Bernoulli_support", lambda lib, a: lib.distributions.Bernoulli(a.abs() / 3).log_prob(a.abs() + 0.5)),
    ("Binomial_count", lambda lib, a: lib.distributions.Binomial(a.abs() + 0.5, a.abs() / 3)),
    ("Binomial_support", lambda lib, a: lib.distributions.Binomial(3, a.abs() / 3).log_prob(a.abs() * 0 + 4)),
    (
        "Binomial_entropy",
        lambda lib, a: lib.distributions.Binomial(lib.tensor([2.0, 3.0, 4.0]), a.abs() / 3).entropy(),
    ),
    (
        "Binomial_enumerate",
        lambda lib, a: lib.distributions.Binomial(
            lib.tensor([2.0, 3.0, 4.0]), a.abs() / 3
        ).enumerate_support(),
    ),
    ("Categorical_0d", lambda lib, a: lib.distributions.Categorical(a.sum())),
    ("Categorical_logits_0d", lambda lib, a: lib.distributions.Categorical(logits=a.sum())),
    ("Categorical_simplex", lambda lib, a: lib.distributions.Categorical(a)),
    ("Categorical_support", lambda lib, a: lib.distributions.Categorical(a.abs()).log_prob(lib.tensor([3]))),
    ("Categorical_both", lambda lib, a: lib.distributions.Categorical(a, a)),
    ("Geometric_zero", lambda lib, a: lib.distributions.Geometric(a.abs() * 0)),
    ("Geometric_range", lambda lib, a: lib.distributions.Geometric(a.abs() + 1.5)),
    ("Poisson", lambda lib, a: lib.distributions.Poisson(-a.abs())),
    ("Poisson_support", lambda lib, a: lib.distributions.Poisson(a.abs()).log_prob(a.abs() + 0.5)),
    ("NegativeBinomial_probs", lambda lib, a: lib.distributions.NegativeBinomial(2.0, a.abs() * 0 + 1)),
    ("NegativeBinomial_count", lambda lib, a: lib.distributions.NegativeBinomial(-a.abs() - 1, a.abs() / 3)),
    ("Multinomial_count", lambda lib, a: lib.distributions.Multinomial(lib.tensor(3), a.abs())),
    (
        "Multinomial_support",
        lambda lib, a: lib.distributions.Multinomial(3, a.abs()).log_prob(a.abs() * 0 + 2),
    ),
    ("Multinomial_mode", lambda lib, a: lib.distributions.Multinomial(3, a.abs()).mode),
    ("OneHot_support", lambda lib, a: lib.distributions.OneHotCategorical(a.abs()).log_prob(a.abs() * 0 + 1)),
    (
        "RelaxedBernoulli_probs",
        lambda lib, a: lib.distributions.RelaxedBernoulli(lib.tensor(0.5), a.abs() + 2),
    ),
    (
        "RelaxedOneHot_support",
        lambda lib, a: lib.distributions.RelaxedOneHotCategorical(lib.tensor(0.5), a.abs()).log_prob(
            a.abs() + 1
        ),
    ),
    ("Categorical_sample_shape", lambda lib, a: lib.distributions.Categorical(a.abs()).sample(3)),
]


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c[0])
def test_validation_errors_are_torchs(case):
    assert_same_error(case[1], np.array([0.3, -1.2, 0.8]))


@pytest.mark.parametrize(
    "case",
    [
        ("poisson_negative", lambda lib, r: lib.poisson(r), np.array([1.0, -1.0])),
        ("binomial_int", lambda lib, n, p: lib.binomial(n, p), np.array([3, 4]), np.array([0.5, 0.5])),
        (
            "binomial_dtypes",
            lambda lib, n, p: lib.binomial(n, p),
            np.array([3.0], np.float32),
            np.array([0.5]),
        ),
        (
            "binomial_half",
            lambda lib, n, p: lib.binomial(n, p),
            np.array([3.0], np.float16),
            np.array([0.5], np.float16),
        ),
    ],
    ids=lambda c: c[0],
)
def test_sampler_errors_are_torchs(case):
    assert_same_error(case[1], *case[2:])


def test_poisson_error_leaves_the_generator_where_torch_does():
    def fn(lib, r):
        lib.manual_seed(0)
        try:
            lib.poisson(r)
        except RuntimeError:
            pass
        return lib.rand(3, dtype=lib.float64)

    check(fn, np.array([2.0, 30.0, -1.0, 4.0]))

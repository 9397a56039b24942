"""ember.distributions' continuous families, the wrappers (Independent, TransformedDistribution,
MixtureSameFamily) and the argument checks, held to torch.distributions.

One table, FAMILIES, gives each family a constructor and parameters (NumPy arrays, within the parameter
constraints) and a value in its support; every test runs over it in both libraries through `check`:
the statistics (mean, mode, variance, stddev, entropy, log_prob, cdf, icdf, with the gradients in the
parameters), shapes, support and expand, seeded sampling (same numbers as torch after the same seed) and
reparameterized gradients, validate_args errors, and repr.
"""

import warnings

import numpy as np
import pytest
import torch
from compare import assert_same_error, check

import ember

_R = np.random.default_rng(7)


def _pos(shape, lo=0.5, hi=3.0, dtype="float64"):
    return _R.uniform(lo, hi, shape).astype(dtype)


def _real(shape, lo=-2.0, hi=2.0, dtype="float64"):
    return _R.uniform(lo, hi, shape).astype(dtype)


class Family:
    """A family's row: `build(lib, *params)` makes the distribution; `value` is a point of its support
    (broadcastable with its batch shape); `quantile` a probability for icdf; `exact`: seeded samples equal
    torch's bit for bit (else only shape and dtype are compared)."""

    def __init__(self, id, build, params, value, quantile=None, exact=True, rsample=True, rtol=None,
                 cdf_grad=True):
        self.id, self.build, self.params, self.value = id, build, params, value
        self.cdf_grad = cdf_grad  # (torch's igamma has no derivative in its first argument)
        self.quantile = np.array([0.2, 0.5, 0.9]) if quantile is None else quantile
        self.exact, self.rsample, self.rtol = exact, rsample, rtol


def _d(name):
    return lambda lib, *p, **k: getattr(lib.distributions, name)(*p, **k)


_SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])

FAMILIES = [
    Family("Normal", _d("Normal"), [_real((3,)), _pos((3,))], _real((2, 3))),
    Family("Normal_f32", _d("Normal"), [_real((2, 3), dtype="float32"), _pos((3,), dtype="float32")],
           _real((2, 3), dtype="float32")),
    Family("Normal_numbers", _d("Normal"), [0.5, 2.0], _real((2, 3), dtype="float32")),
    Family("Gumbel_numbers", _d("Gumbel"), [0.5, 2.0], _real((2, 3), dtype="float32")),
    Family("Beta_numbers", _d("Beta"), [0.5, 2.0], _pos((2, 3), 0.1, 0.9, "float32")),
    Family("Gamma_numbers", _d("Gamma"), [1.5, 2.0], _pos((2, 3), dtype="float32"), cdf_grad=False),
    Family("Uniform", _d("Uniform"), [_real((3,), -2, -1), _pos((3,), 1, 2)], _real((3,), -0.9, 0.9)),
    Family("Exponential", _d("Exponential"), [_pos((3,))], _pos((2, 3))),
    Family("Laplace", _d("Laplace"), [_real((3,)), _pos((3,))], _real((2, 3))),
    Family("Cauchy", _d("Cauchy"), [_real((3,)), _pos((3,))], _real((2, 3))),
    Family("Gumbel", _d("Gumbel"), [_real((3,)), _pos((3,))], _real((2, 3))),
    Family("LogNormal", _d("LogNormal"), [_real((3,), -1, 1), _pos((3,))], _pos((2, 3))),
    Family("HalfNormal", _d("HalfNormal"), [_pos((3,))], _pos((2, 3))),
    Family("HalfCauchy", _d("HalfCauchy"), [_pos((3,))], _pos((2, 3))),
    Family("Weibull", _d("Weibull"), [_pos((3,)), _pos((3,), 1.2, 3)], _pos((2, 3))),
    Family("Pareto", _d("Pareto"), [_pos((3,), 0.5, 1), _pos((3,), 2.5, 4)], _pos((2, 3), 1.0, 3)),
    Family("GeneralizedPareto", _d("GeneralizedPareto"),
           [_real((3,), -1, 0), _pos((3,)), np.array([0.3, 0.0, 0.1])], _pos((2, 3), 0.1, 2)),
    Family("Kumaraswamy", _d("Kumaraswamy"), [_pos((3,), 1.2, 3), _pos((3,), 1.2, 3)], _pos((2, 3), 0.1, 0.9),
           rtol=1e-6),
    Family("StudentT", _d("StudentT"), [np.array([0.8, 1.5, 4.0]), _real((3,)), _pos((3,))], _real((2, 3))),
    Family("Chi2", _d("Chi2"), [_pos((3,), 1, 4)], _pos((2, 3)), cdf_grad=False),
    Family("Gamma", _d("Gamma"), [_pos((3,), 0.3, 4), _pos((3,))], _pos((2, 3)), cdf_grad=False),
    Family("Gamma_f32", _d("Gamma"), [_pos((2, 3), 0.3, 4, "float32"), _pos((3,), dtype="float32")],
           _pos((2, 3), dtype="float32"), cdf_grad=False),
    Family("InverseGamma", _d("InverseGamma"), [_pos((3,), 2.5, 4), _pos((3,))], _pos((2, 3)),
           cdf_grad=False),
    Family("Beta", _d("Beta"), [_pos((3,)), _pos((3,))], _pos((2, 3), 0.1, 0.9), rtol=1e-6),
    Family("Dirichlet", _d("Dirichlet"), [_pos((2, 3))], _SIMPLEX, rtol=1e-6),
    Family("Dirichlet_f32", _d("Dirichlet"), [_pos((2, 5), 0.3, 3, "float32")],
           np.full((2, 5), 0.2, np.float32), rtol=1e-5),
    Family("Beta_f32", _d("Beta"), [_pos((3,), dtype="float32"), _pos((3,), dtype="float32")],
           _pos((2, 3), 0.1, 0.9, "float32"), rtol=1e-5),
    Family("StudentT_f32", _d("StudentT"), [_pos((3,), 2.5, 5, "float32")], _real((2, 3), dtype="float32")),
    Family("VonMises_f32", _d("VonMises"), [_real((3,), dtype="float32"), _pos((3,), dtype="float32")],
           _real((2, 3), dtype="float32"), rsample=False),
    Family("Exponential_f32", _d("Exponential"), [_pos((3,), dtype="float32")],
           _pos((2, 3), dtype="float32")),
    Family("Laplace_f32", _d("Laplace"), [_real((3,), dtype="float32"), _pos((3,), dtype="float32")],
           _real((2, 3), dtype="float32")),
    Family("FisherSnedecor", _d("FisherSnedecor"), [np.array([1.5, 3.0, 6.0]), np.array([1.5, 4.5, 8.0])],
           _pos((2, 3))),
    Family("VonMises", _d("VonMises"), [_real((3,)), _pos((3,))], _real((2, 3)), rsample=False),
    Family("ContinuousBernoulli", _d("ContinuousBernoulli"), [np.array([0.2, 0.4995, 0.8])],
           _pos((2, 3), 0.05, 0.95)),
    Family("ContinuousBernoulli_logits", lambda lib, x: lib.distributions.ContinuousBernoulli(logits=x),
           [np.array([-1.0, 0.0, 2.0])], _pos((2, 3), 0.05, 0.95)),
    Family("LogisticNormal", _d("LogisticNormal"), [_real((2, 3), -1, 1), _pos((2, 3))],
           np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25]])),
    Family("Independent", lambda lib, m, s: lib.distributions.Independent(lib.distributions.Normal(m, s), 1),
           [_real((2, 3)), _pos((2, 3))], _real((4, 2, 3))),
    Family("TransformedDistribution", lambda lib, m, s: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(m, s),
        [lib.distributions.ExpTransform(), lib.distributions.AffineTransform(1.0, 2.0)]),
        [_real((3,)), _pos((3,))], _pos((2, 3), 1.5, 4)),
    Family("TransformedDistribution_sigmoid", lambda lib, m, s: lib.distributions.TransformedDistribution(
        lib.distributions.Uniform(m, s), lib.distributions.SigmoidTransform().inv),
        [_pos((3,), 0.1, 0.3), _pos((3,), 0.7, 0.9)], _real((2, 3), -0.5, 0.5)),
]

STATS = ["mean", "mode", "variance", "stddev", "entropy", "log_prob", "cdf", "icdf", "perplexity"]


def _stat(fam, name):
    def fn(lib, value, quantile, *params):
        d = fam.build(lib, *params)
        if name in ("log_prob", "cdf"):
            return getattr(d, name)(value)
        if name == "icdf":
            return d.icdf(quantile)
        if name in ("entropy", "perplexity"):
            return getattr(d, name)()
        return getattr(d, name)
    return fn


@pytest.mark.parametrize("name", STATS)
@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.id)
def test_statistics_and_their_gradients(fam, name):
    value = fam.value
    grad = [2 + i for i, p in enumerate(fam.params) if isinstance(p, np.ndarray)]
    if name == "cdf" and not fam.cdf_grad:
        grad = [0]
    check(_stat(fam, name), value, fam.quantile.astype(value.dtype), *fam.params, grad=grad, rtol=fam.rtol,
          check_stride=False)


def _text(lib, obj):
    """repr(obj) with the library's name taken out (`torch.float64` and `ember.float64` read the same)."""
    return repr(obj).replace(lib.__name__ + ".", "")


def _shapes(fam):
    def fn(lib, *params):
        d = fam.build(lib, *params)
        big = d.expand((4,) + tuple(d.batch_shape))
        return (d.batch_shape, d.event_shape, _text(lib, d.support), d.has_rsample, big.batch_shape,
                big.event_shape, type(big).__name__, big.mean, _text(lib, big.support))
    return fn


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.id)
def test_shapes_support_and_expand(fam):
    check(_shapes(fam), *fam.params, check_stride=False, rtol=fam.rtol)


def _samples(fam, method, shape):
    def fn(lib, *params):
        d = fam.build(lib, *params)
        lib.manual_seed(5)
        x = getattr(d, method)(shape)
        after = lib.rand(2, dtype=lib.float64)  # the generator ends where torch's does
        if not fam.exact:
            return x.shape, x.dtype
        return x, after
    return fn


@pytest.mark.parametrize("shape", [(), (2,), (3, 2)])
@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.id)
def test_seeded_samples_are_torchs(fam, shape):
    check(_samples(fam, "sample", shape), *fam.params, rtol=fam.rtol, check_stride=False)


@pytest.mark.parametrize("fam", [f for f in FAMILIES if f.rsample], ids=lambda f: f.id)
def test_rsample_gradients(fam):
    grad = [i for i, p in enumerate(fam.params) if isinstance(p, np.ndarray)]
    check(_samples(fam, "rsample", (4,)), *fam.params, grad=grad, rtol=fam.rtol or 1e-6, atol=1e-6,
          check_stride=False)


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.id)
def test_repr(fam):
    check(lambda lib, *p: _text(lib, fam.build(lib, *p)), *fam.params)


# ---- argument validation ----------------------------------------------------------------------------------

INVALID = [
    ("Normal", lambda lib, a: lib.distributions.Normal(a, -a.abs() - 1)),
    ("Normal_nan", lambda lib, a: lib.distributions.Normal(a * float("nan"), 1.0)),
    ("Uniform", lambda lib, a: lib.distributions.Uniform(a + 1, a)),
    ("Exponential", lambda lib, a: lib.distributions.Exponential(-a.abs())),
    ("Gamma", lambda lib, a: lib.distributions.Gamma(a.abs() + 1, -a.abs())),
    ("Beta", lambda lib, a: lib.distributions.Beta(-a.abs(), a.abs() + 1)),
    ("Dirichlet", lambda lib, a: lib.distributions.Dirichlet(a)),
    ("Dirichlet_0d", lambda lib, a: lib.distributions.Dirichlet(a.sum())),
    ("StudentT", lambda lib, a: lib.distributions.StudentT(-a.abs())),
    ("HalfNormal", lambda lib, a: lib.distributions.HalfNormal(-a.abs())),
    ("Pareto", lambda lib, a: lib.distributions.Pareto(a.abs() + 1, -a.abs())),
    ("VonMises", lambda lib, a: lib.distributions.VonMises(a, -a.abs())),
    ("ContinuousBernoulli", lambda lib, a: lib.distributions.ContinuousBernoulli(a.abs() + 1.5,
                                                                                validate_args=True)),
    ("ContinuousBernoulli_both", lambda lib, a: lib.distributions.ContinuousBernoulli(a, a)),
    ("Independent", lambda lib, a: lib.distributions.Independent(lib.distributions.Normal(a, 1.0), 2)),
    ("Transformed_list", lambda lib, a: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(a, 1.0), [lib.distributions.ExpTransform(), 3])),
    ("Transformed_type", lambda lib, a: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(a, 1.0), 3)),
    ("log_prob_support", lambda lib, a: lib.distributions.Exponential(a.abs() + 1).log_prob(-a.abs() - 1)),
    ("log_prob_shape", lambda lib, a: lib.distributions.Normal(a, 1.0).log_prob(lib.zeros(5))),
    ("log_prob_event", lambda lib, a: lib.distributions.Dirichlet(a.abs() + 1).log_prob(lib.ones(2))),
    ("log_prob_not_tensor", lambda lib, a: lib.distributions.Normal(a, 1.0).log_prob(0.5)),
    ("cdf_support", lambda lib, a: lib.distributions.Gamma(a.abs() + 1, 1.0).cdf(-a.abs() - 1)),
    ("Uniform_log_prob", lambda lib, a: lib.distributions.Uniform(0.0, 1.0).log_prob(a + 5)),
    ("broadcast_all", lambda lib, a: lib.distributions.Normal(a, "1")),
    ("entropy_missing", lambda lib, a: lib.distributions.Pareto(a.abs() + 1, 2.0).cdf(a.abs() + 1) * 0
     + lib.distributions.VonMises(a, 1.0).entropy()),
    ("mode_missing", lambda lib, a: lib.distributions.Cauchy(a, 1.0).expand((2, 3)).mode
     + lib.distributions.TransformedDistribution(lib.distributions.Normal(a, 1.0), []).mode),
]


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c[0])
def test_validation_errors_are_torchs(case):
    assert_same_error(case[1], _real((3,)))


def _subclass(lib, name, base, **attrs):
    return type(name, (getattr(lib.distributions, base),), attrs)


def test_subclass_checks_and_warnings_are_torchs():
    def custom_init(lib, a):
        cls = _subclass(lib, "MyNormal", "Normal",
                        __init__=lambda self, loc: lib.distributions.Normal.__init__(self, loc, 1.0))
        return cls(a).expand((2, 3))
    assert_same_error(custom_init, _real((3,)))

    def warned(lib, a):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            bare = _subclass(lib, "Bare", "Distribution")
            bare(validate_args=True)
            unsupported = _subclass(lib, "Unsupported", "Distribution", arg_constraints={},
                                    log_prob=lambda self, v: self._validate_sample(v))
            unsupported(validate_args=True).log_prob(a)
            lib.distributions.Normal(a, 1.0).sample_n(2)
        return [(w.category.__name__, str(w.message).replace(lib.__name__ + ".", "")) for w in caught]
    check(warned, _real((3,)))


def test_gamma_cdf_has_no_gradient_in_the_concentration():
    def fn(lib, a, x):
        lib.distributions.Gamma(a.requires_grad_(), 1.0).cdf(x).sum().backward()
    assert_same_error(fn, _pos((3,)).astype(np.float64), _pos((3,)))


def test_validation_can_be_turned_off():
    check(lambda lib, a: lib.distributions.Normal(a, -a.abs() - 1, validate_args=False).log_prob(a),
          _real((3,)))
    for lib in (torch, ember):
        lib.distributions.Distribution.set_default_validate_args(False)
        try:
            lib.distributions.Exponential(lib.tensor([-1.0]))  # no error
        finally:
            lib.distributions.Distribution.set_default_validate_args(True)
    assert_same_error(lambda lib: lib.distributions.Distribution.set_default_validate_args(3))


# ---- MixtureSameFamily ------------------------------------------------------------------------------

def _mixture(lib, logits, loc, scale):
    mix = lib.distributions.Categorical(logits=logits)
    return lib.distributions.MixtureSameFamily(mix, lib.distributions.Normal(loc, scale))


@pytest.mark.parametrize("what", ["mean", "variance", "log_prob", "cdf", "sample", "expand", "repr",
                                  "support"])
def test_mixture_same_family(what):
    def fn(lib, logits, loc, scale, x):
        m = _mixture(lib, logits, loc, scale)
        if what in ("log_prob", "cdf"):
            return getattr(m, what)(x)
        if what == "sample":
            lib.manual_seed(3)
            return m.sample((4,)).shape, m.batch_shape, m.event_shape
        if what == "expand":
            return m.expand((5, 2)).mean
        if what in ("repr", "support"):
            return _text(lib, m if what == "repr" else m.support)
        return getattr(m, what)
    check(fn, _real((2, 4)), _real((2, 4)), _pos((2, 4)), _real((3, 2)), grad=[0, 1, 2], check_stride=False)


def test_mixture_same_family_errors():
    assert_same_error(lambda lib, a: lib.distributions.MixtureSameFamily(lib.distributions.Normal(a, 1.0),
                                                                         lib.distributions.Normal(a, 1.0)),
                      _real((3,)))
    assert_same_error(lambda lib, a: lib.distributions.MixtureSameFamily(
        lib.distributions.Categorical(logits=a), lib.distributions.Normal(lib.zeros(4), 1.0)), _real((3,)))

"""ember.special against torch beyond the OpInfo table (op_db_special.py): values over wide ranges (large,
small and negative arguments, poles, NaN and inf) in float64 and float32, the aliases torch.special
re-exports, integer promotion, torch's "not implemented" derivative errors and non-differentiable outputs."""

import numpy as np
import pytest
import torch
from compare import assert_same_error, check

import ember

rng = np.random.default_rng(0)
EDGES = [0.0, -0.0, 1e-30, -1e-30, 1e-8, 0.5, 1.0, 2.0, 2.09, -2.09, 5.0, 8.0, -8.0, 30.0, -30.0, 103.9, 200.0,
         700.0, 710.0, -745.0, np.inf, -np.inf, np.nan]
WIDE = np.concatenate([rng.uniform(-40, 40, 400), rng.uniform(-3, 3, 400), 10 ** rng.uniform(-12, 3, 200),
                       -10 ** rng.uniform(-12, 3, 200), EDGES])

ONE = ["i0", "i0e", "i1", "i1e", "erfcx", "entr", "log_ndtr", "ndtr", "sinc", "bessel_j0", "bessel_j1", "bessel_y0",
       "bessel_y1", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
       "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai"]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ONE)
def test_wide_range(name, dtype):
    # float32: torch evaluates in float32 and ember rounds a float64 value, so each may be an ulp or two off the
    # correctly rounded result; near a zero of the function that is relative, hence the absolute floor
    tol = dict(rtol=1e-12, atol=1e-300) if dtype == "float64" else dict(rtol=2e-6, atol=1e-6)
    check(lambda lib, x: getattr(lib.special, name)(x), WIDE.astype(dtype), **tol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_ndtri_wide(dtype):
    p = np.concatenate([rng.uniform(0, 1, 500), 10.0 ** -rng.uniform(1, 300 if dtype == "float64" else 37, 200),
                        [0.0, 1.0, -0.1, 1.1, np.nan, 0.5, 0.135, 0.865]]).astype(dtype)
    check(lambda lib, x: lib.special.ndtri(x), p, rtol=1e-13 if dtype == "float64" else 2e-6, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_wide(name, dtype):
    a = np.concatenate([10 ** rng.uniform(-3, 3, 600), rng.uniform(20, 300, 300), [0, 0, 1, np.inf, 2, -1, np.nan]])
    x = np.concatenate([10 ** rng.uniform(-3, 3, 600), a[600:900] * rng.uniform(0.8, 1.2, 300),
                        [0, 1, 0, 1, np.inf, 1, 1]])
    check(lambda lib, a, x: getattr(lib.special, name)(a, x), a.astype(dtype), x.astype(dtype),
          rtol=1e-10 if dtype == "float64" else 2e-6, atol=1e-300 if dtype == "float64" else 1e-6)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_zeta_wide(dtype):
    x = np.concatenate([rng.uniform(0.5, 30, 500), [1, 2, 3, 2, 2.5, 4, 1.0000001]])
    q = np.concatenate([rng.uniform(-20, 30, 500), [1, -1, -2.5, 0, -0.5, 1e-5, 1.0]])
    # (float32: torch's first term pow(q, -x) is a float pow, an ulp off among subnormal results)
    check(lambda lib, x, q: lib.special.zeta(x, q), x.astype(dtype), q.astype(dtype),
          rtol=1e-13 if dtype == "float64" else 2e-6, atol=0 if dtype == "float64" else 3e-45)


POLYS = [f"{s}chebyshev_polynomial_{c}" for s in ("", "shifted_") for c in "tuvw"] + \
    ["hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYS)
def test_polynomials_high_degree(name):
    x = np.concatenate([rng.uniform(-1.5, 1.5, 300), [1.0, -1.0, 0.0, 0.5, 0.25]])
    n = np.concatenate([rng.integers(-3, 40, 300), [30, 31, 33, 40, 600]]).astype(np.float64)
    check(lambda lib, x, n: getattr(lib.special, name)(x, n), x, n, rtol=1e-10, atol=1e-12)
    check(lambda lib, x: getattr(lib.special, name)(x, 3), x)  # a Python degree
    check(lambda lib, n: getattr(lib.special, name)(0.3, n), n[:50])  # a Python x


@pytest.mark.parametrize("name,args", [
    ("expit", 1), ("gammaln", 1), ("psi", 1), ("digamma", 1), ("erf", 1), ("erfc", 1), ("erfinv", 1), ("exp2", 1),
    ("expm1", 1), ("log1p", 1), ("logit", 1), ("round", 1), ("xlogy", 2), ("softmax", "dim"),
    ("log_softmax", "dim"), ("logsumexp", "dim"), ("polygamma", "n"), ("multigammaln", "p")])
def test_aliases(name, args):
    x = rng.uniform(0.1, 0.9, (3, 4))
    fn = getattr
    if args == 1:
        check(lambda lib, x: fn(lib.special, name)(x), x, grad=name != "round")
    elif args == 2:
        check(lambda lib, x, y: fn(lib.special, name)(x, y), x, x + 1, grad=True)
    elif args == "dim":
        check(lambda lib, x: fn(lib.special, name)(x, 1), x, grad=True)
    elif args == "n":
        check(lambda lib, x: lib.special.polygamma(2, x), x, grad=True)
    else:
        check(lambda lib, x: lib.special.multigammaln(x + 2, 3), x, grad=True)


@pytest.mark.parametrize("name", ["i0e", "i1", "entr", "sinc", "ndtr", "log_ndtr", "erfcx", "bessel_j0", "airy_ai"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_integer_inputs_promote(name, dtype):
    check(lambda lib, x: getattr(lib.special, name)(x), np.array([0, 1, 2, 3]).astype(dtype))


NO_GRAD = ["bessel_j0", "bessel_y1", "modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
           "airy_ai"]


@pytest.mark.parametrize("name", NO_GRAD)
def test_not_differentiable(name):
    """torch's output of these does not require grad even when the input does."""
    for lib in (torch, ember):
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        r = getattr(lib.special, name)(x)
        assert not r.requires_grad and r.grad_fn is None


@pytest.mark.parametrize("fn", [
    lambda lib, a, x: lib.special.zeta(a, x),  # zeta's first argument
    lambda lib, a, x: lib.special.gammainc(a, x), lambda lib, a, x: lib.special.gammaincc(a, x),
    lambda lib, a, x: lib.igamma(a, x)])
def test_derivative_not_implemented(fn):
    def run(lib, a, x):
        a.requires_grad_()
        return fn(lib, a, x).sum().backward()
    assert_same_error(run, np.array([2.0, 3.0]), np.array([1.5, 2.5]))


def test_mvlgamma_errors():
    assert_same_error(lambda lib, x: lib.mvlgamma(x, 0), np.array([2.0, 3.0]))
    assert_same_error(lambda lib, x: lib.mvlgamma(x > 0, 2), np.array([2.0, 3.0]))
    assert_same_error(lambda lib, x: x.long().mvlgamma_(2), np.array([2.0, 3.0]))


def test_igamma_dtype_errors():
    assert_same_error(lambda lib, x: lib.igamma(x.long(), x.long()), np.array([2.0, 3.0]))
    assert_same_error(lambda lib, x: lib.special.zeta(x.half(), x.half()), np.array([2.0, 3.0]))


def test_no_numpy_warning_reaches_user():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ONE:
            getattr(ember.special, name)(ember.from_numpy(WIDE.astype(np.float32)))
        ember.special.zeta(ember.from_numpy(WIDE), ember.from_numpy(WIDE[::-1].copy()))
        ember.special.gammainc(ember.from_numpy(WIDE), ember.from_numpy(WIDE[::-1].copy()))

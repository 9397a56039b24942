"""The table-driven tests that test_discrete.py and test_multivariate.py run over their families.

A `Family` row gives a constructor `build(lib, *params)`, parameters (NumPy arrays) and a value in the
support; each test builds the distribution in ember and in torch from the same arrays and compares through
`check`: statistics with their gradients in the parameters, shapes, support and expand, enumerate_support,
seeded samples (the same numbers as torch after the same seed, and the generator left where torch leaves it),
reparameterized gradients, and repr.
"""

import warnings

import numpy as np
from compare import check

STATS = ["mean", "mode", "variance", "stddev", "entropy", "perplexity", "log_prob", "cdf", "icdf"]


class Family:
    """One row: `value` is a point of the support (broadcastable with the batch shape); `exact`: seeded
    samples equal torch's bit for bit (else shape and dtype only); `rtol`: where float64 sums are
    reassociated (matrix products, solves)."""

    def __init__(self, id, build, params, value, exact=True, rtol=None, grad=True):
        self.id, self.build, self.params, self.value = id, build, params, value
        self.exact, self.rtol, self.grad = exact, rtol, grad

    def grads(self, offset=0):
        if not self.grad:
            return []
        return [offset + i for i, p in enumerate(self.params) if p.dtype.kind == "f"]


def d(name, **fixed):
    """A builder of `lib.distributions.<name>(*params, **fixed)`."""
    return lambda lib, *p: getattr(lib.distributions, name)(*p, **fixed)


def text(lib, obj):
    """repr(obj) with the library's name taken out."""
    return repr(obj).replace(lib.__name__ + ".", "")


def _quiet(fn):
    def run(lib, *a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (Wishart's singular-sample warning is torch's too)
            return fn(lib, *a)

    return run


def check_stat(fam, name):
    def fn(lib, value, quantile, *params):
        dist = fam.build(lib, *params)
        if name in ("log_prob", "cdf"):
            return getattr(dist, name)(value)
        if name == "icdf":
            return dist.icdf(quantile)
        if name in ("entropy", "perplexity"):
            return getattr(dist, name)()
        return getattr(dist, name)

    check(fn, fam.value, np.array([0.3]), *fam.params, grad=fam.grads(2), rtol=fam.rtol, check_stride=False)


def check_shapes(fam):
    def fn(lib, *params):
        dist = fam.build(lib, *params)
        big = dist.expand((4,) + tuple(dist.batch_shape))
        return (
            dist.batch_shape,
            dist.event_shape,
            text(lib, dist.support),
            dist.has_rsample,
            dist.has_enumerate_support,
            big.batch_shape,
            big.event_shape,
            type(big).__name__,
            big.log_prob(lib.as_tensor(fam.value)),
            text(lib, big.support),
        )

    check(fn, *fam.params, check_stride=False, rtol=fam.rtol)


def check_enumerate_support(fam, expand):
    check(lambda lib, *p: fam.build(lib, *p).enumerate_support(expand=expand), *fam.params)


def check_samples(fam, method, shape, grad=False):
    def fn(lib, *params):
        dist = fam.build(lib, *params)
        lib.manual_seed(5)
        x = getattr(dist, method)(shape)
        after = lib.rand(2, dtype=lib.float64)  # the generator ends where torch's does
        if not fam.exact:
            return x.shape, x.dtype
        return x, after

    check(
        _quiet(fn),
        *fam.params,
        grad=fam.grads() if grad else None,
        rtol=fam.rtol or (1e-6 if grad else None),
        atol=1e-6 if grad else None,
        check_stride=False,
    )


def check_repr(fam):
    check(lambda lib, *p: text(lib, fam.build(lib, *p)), *fam.params)

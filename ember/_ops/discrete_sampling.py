"""Samplers whose draws are counts: `poisson` and `binomial`, as torch's CPU kernels draw them.

torch's kernels are rejection samplers (aten/src/ATen/native/Distributions.cpp and Distributions.h): each
element consumes a data-dependent number of `uniform_real_distribution<double>` draws from the generator,
elements in the output's C order, one after the other. ember runs the same algorithms element by element in
Python, with the same IEEE arithmetic and the C library's log/exp/lgamma, so after the same seed it gives
torch's numbers and leaves the generator where torch leaves it (NOTE [ Counting draws ]).
"""

import ctypes
import ctypes.util
import math
import struct
import warnings

import numpy as np

from .._argparse import call_error
from .._dispatch import FLOATING, POINTWISE, dispatch, dtype_word
from .._meta import broadcast_shapes, like_strides, meta_array
from .._tensor import Tensor
from ._util import method, public
from .random import _gen, _no_meta, _seeded

__all__ = ["poisson", "binomial"]

# NOTE [ Counting draws ]
# A rejection sampler cannot know beforehand how many uniforms it needs. Drawing them one at a time from
# NumPy's MT19937 costs a few microseconds each, so `_Uniforms` draws a block ahead and, once the kernel is
# done, puts the engine back where it was and advances it by exactly the words consumed: the generator ends
# in torch's state whatever the block size was.


class _Uniforms:
    """torch's `uniform_real_distribution<double>(0, 1)` draws from generator `gen`, read one at a time."""

    def __init__(self, gen, hint):
        self._gen = gen
        self._saved = gen._engine.state
        self._fresh = gen._fresh
        self._block = max(64, 2 * hint)
        self._used = 0
        self._buf = []
        self._i = 0

    def __call__(self):
        if self._i == len(self._buf):
            self._buf = self._gen._uniform_double(self._block).tolist()
            self._i = 0
        self._i += 1
        self._used += 1
        return self._buf[self._i - 1]

    def close(self):
        """Rewind the engine and advance it by the draws actually used (NOTE [ Counting draws ])."""
        gen = self._gen
        gen._engine.state = self._saved
        gen._fresh = self._fresh
        gen._random(2 * self._used)


_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or ctypes.util.find_library("c"))
_LIBM.lgamma.restype, _LIBM.lgamma.argtypes = ctypes.c_double, [ctypes.c_double]
_lgamma = _LIBM.lgamma  # (math.lgamma is CPython's own approximation, not the C library's)


def _int64(x):
    """C's `(int64_t)std::floor(x)` on x86-64: out of range (an infinite or NaN rate) gives INT64_MIN."""
    return math.floor(x) if -(2.0**63) <= x < 2.0**63 else -(2**63)


def _floor(x):
    """C's floor: infinities and NaN stay as they are (math.floor raises on them)."""
    return math.floor(x) if -math.inf < x < math.inf else x


def _log(x):
    """The C library's log (math.log calls it) with C's answers at 0 and below."""
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


# ---- poisson ---------------------------------------------------------------------------------------------


def _poisson_one(lam, u):
    """One draw of torch's `sample_poisson` (Hoermann's transformed rejection for rate >= 10, else the
    product of uniforms)."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), _log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            big_u = u() - 0.5
            v = u()
            us = 0.5 - abs(big_u)
            if us == 0:  # (C's 2a/0 is inf: k is INT64_MIN, rejected below)
                continue
            k = _int64((2 * a / us + b) * big_u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if _log(v) + _log(invalpha) - _log(a / (us * us) + b) <= -lam + k * loglam - _lgamma(k + 1.0):
                return k
    if lam == 0:
        return 0
    enlam, x, prod = math.exp(-lam), 0, 1.0
    while True:
        prod *= u()
        if prod > enlam:
            x += 1
        else:
            return x


@_seeded("poisson", "PoissonBackward0", POINTWISE, saves="none", dtypes=FLOATING, error="poisson_cpu")
def _poisson(rates, gen):
    """torch's `_s_poisson_cpu`: one `sample_poisson` per element, in the output's C order."""
    _no_meta(rates)
    lams = np.ascontiguousarray(rates, np.float64).reshape(-1)
    bad = ~(lams >= 0)
    if bad.any():  # (torch checks each rate as it reaches it: the first negative or NaN one stops it)
        bad = int(np.argmax(bad))
        _poisson_values(lams[:bad], gen)
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _poisson_values(lams, gen).astype(rates.dtype).reshape(rates.shape)


def _poisson_values(lams, gen):
    u = _Uniforms(gen, lams.size)
    try:
        return np.array([_poisson_one(lam, u) for lam in lams.tolist()], np.float64)
    finally:
        u.close()


@_poisson.derivative_
def _(g, rates, gen):
    return g.new_zeros(g.shape)


# (torch's CPU kernel writes a fresh contiguous tensor; its meta kernel keeps the input's layout)
_poisson.meta_(
    lambda rates, gen: meta_array(
        rates.shape, rates._data.dtype, like_strides(rates) if rates.numel() else None
    )
)


@method()
def poisson(input, generator=None):
    """Samples of Poisson(rate) for each element `rate` of `input`, torch's draws after the same seed.

    Example::

        >>> ember.manual_seed(0); ember.poisson(ember.tensor([1.0, 20.0]))
    """
    return dispatch(_poisson, (input,), (_gen(generator, "poisson"),))


# ---- binomial --------------------------------------------------------------------------------------------
# NOTE [ Binomial in the kernel's precision ]
# torch's kernel is `sample_binomial<scalar_t, double>`: count and prob keep the tensor's dtype and so do
# the sums and products of scalar_t values (count * prob, count + 1, count - k + 1), while everything that
# meets a double literal or an accumulator is double. For float32 tensors `_r` rounds the scalar_t steps to
# float32 (a float64 +, -, * or / of two float32 values rounded to float32 is float32's own result), so the
# branch taken and every value match torch's.

_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_tail(k):
    if k < len(_TAIL):
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _inversion(count, prob, u):
    logprob = math.log1p(-prob)
    geom_sum, num = 0.0, 0.0
    while True:
        geom = _log(u()) / logprob
        geom_sum += math.ceil(geom) if geom < math.inf else geom
        if geom_sum > count:
            return num
        num += 1


def _btrs(count, prob, u, r):
    """Hoermann's BTRS as torch (after TensorFlow) writes it; `r` rounds to the tensor's precision."""
    stddev = math.sqrt(r(r(count * prob) * r(1 - prob)))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = r(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    ratio = r(prob / r(1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = _floor(r(r(count + 1) * prob))
    count1 = r(count + 1)
    # the loop's float32 steps round integers, which are exact below 2^24 (an integral count keeps them so)
    ri = _exact if count.is_integer() and count < _F32_EXACT else r
    while True:
        big_u = u() - 0.5
        v = u()
        us = 0.5 - abs(big_u)
        if us == 0:  # (C's 2a/0 is inf: k is -inf, rejected)
            continue
        k = _floor((2 * a / us + b) * big_u + c)
        if ri is not _exact:
            k = r(k)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return float(k)
        v = _log(v * alpha / (a / (us * us) + b))
        cmk1 = ri(ri(count - k) + 1)
        upper = (
            (m + 0.5) * _log((m + 1) / (ratio * (count - m + 1)))
            + count1 * _log((count - m + 1) / cmk1)
            + (k + 0.5) * _log(ratio * cmk1 / ri(k + 1))
            + _stirling_tail(m)
            + _stirling_tail(count - m)
            - _stirling_tail(k)
            - _stirling_tail(ri(count - k))
        )
        if v <= upper:
            return float(k)


_F32_EXACT = 2.0**24


def _exact(x):
    return x


_F32 = struct.Struct("f")
_pack32, _unpack32 = _F32.pack, _F32.unpack


def _f32(x):
    """x rounded to float32 (IEEE round-to-nearest-even, as a C cast) and back."""
    return _unpack32(_pack32(x))[0]


def _binomial_one(count, prob, u, r):
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if count != count:  # (torch's inversion loop never ends for a NaN count; ember answers NaN)
        return math.nan
    if prob <= 0.5:
        if r(count * prob) >= 10.0:
            return _btrs(count, prob, u, r)
        return _inversion(count, prob, u)
    if prob > 0.5:
        q = r(1.0 - prob)
        if r(count * q) >= 10.0:
            return r(count - _btrs(count, q, u, r))
        return r(count - _inversion(count, q, u))
    return math.nan


@_seeded(
    "binomial",
    "NotImplemented",
    POINTWISE,
    saves="none",
    dtypes=frozenset({"float32", "float64"}),
    error="binomial_cpu",
)
def _binomial(count, prob, gen):
    """torch's `_s_binomial_cpu`: one `sample_binomial` per element, in the output's C order."""
    _no_meta(count, prob)
    shape = np.broadcast_shapes(count.shape, prob.shape)
    pairs = zip(
        np.broadcast_to(count, shape).reshape(-1).tolist(), np.broadcast_to(prob, shape).reshape(-1).tolist()
    )
    r = _f32 if count.dtype == np.float32 else _exact
    u = _Uniforms(gen, int(np.prod(shape)))
    try:
        vals = [_binomial_one(c, p, u, r) for c, p in pairs]
    finally:
        u.close()
    return np.array(vals, np.float64).astype(count.dtype).reshape(shape)


@_binomial.derivative_
def _(g, count, prob, gen):
    raise RuntimeError("derivative for aten::binomial is not implemented")


_binomial.meta_(
    lambda count, prob, gen: meta_array(broadcast_shapes(count.shape, prob.shape), count._data.dtype)
)


def binomial(count, prob, generator=None):
    """Samples of Binomial(count, prob) elementwise, torch's draws after the same seed.

    Args:
        count (Tensor): numbers of trials (floating point).
        prob (Tensor): success probabilities, of count's dtype.
        generator (Generator, optional): the generator to draw from.
    """
    for what, t in (("count", count), ("prob", prob)):
        if isinstance(t, Tensor) and not t.dtype.is_floating_point:
            raise ValueError(
                f"binomial only supports floating-point dtypes for {what}, got: {dtype_word(t.dtype)}"
            )
    try:
        if prob.dtype is not count.dtype:
            raise RuntimeError(f"Found dtype {dtype_word(prob.dtype)} but expected {dtype_word(count.dtype)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    shape = broadcast_shapes(tuple(count.shape), tuple(prob.shape))
    if shape != tuple(count.shape) and count.numel() != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape {list(count.shape)}, "
            f"which does not match the required output shape {list(shape)}. This behavior is "
            "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
            "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
            "elements with t.resize_(0).",
            UserWarning,
            stacklevel=2,
        )
    return dispatch(_binomial, (count, prob), (_gen(generator, "binomial"),))


public["binomial"] = binomial

"""The sampling primitives ember.distributions needs that torch keeps in ATen: `_standard_gamma` (with its
reparameterized gradient `_standard_gamma_grad`) and `_sample_dirichlet` (with `_dirichlet_grad`).

The samplers run torch's CPU algorithm on the generator's stream (NOTE [ Gamma draws in torch's order ]), so
after the same seed `Gamma(...).sample()` and `Dirichlet(...).sample()` give torch's numbers. The gradients
are torch's approximations of -(d/dalpha cdf(x; alpha)) / pdf(x; alpha), evaluated in float64 with NumPy.
"""

import math

import numpy as np

from .._dispatch import FALLBACK, NOT_IMPLEMENTED, POINTWISE, defop, dispatch
from .._meta import broadcast_shapes, contiguous_strides, like_strides, meta_array
from ._util import public
from .random import _gen, _no_meta, _seeded
from .special import digamma as _digamma

# NOTE [ Gamma draws in torch's order ]
# torch's `_s_gamma_cpu` walks the output in order and, per element, runs Marsaglia and Tsang's rejection
# sampler on scalar draws from the generator: uniform doubles (53 bits of a 64-bit draw) and normal doubles
# (Box-Muller on two uniforms, the second value kept in the generator for the next normal). The number of
# draws an element takes depends on the values drawn, so the elements cannot be drawn as one block; the
# loop below runs per element in Python on Python floats (IEEE doubles, so every step rounds as torch's
# `double` accumulator does; the constants `1.0f / 3.0f` and `0.0331f` are floats in torch's source and
# are used at float precision here too). The uniforms are read ahead in one block from a copy of the
# engine's state, and afterwards the engine is advanced by exactly the words used, so the generator ends
# where torch's does. For a float32 alpha, torch computes `1 / alpha`, `alpha + 1` and `alpha - 1/3` in
# float; these are computed up front, vectorised, in float32. `_sample_dirichlet` normalizes the gammas by
# their sum along the last dim; ember's float64 sum adds in NumPy's order, not torch's vectorised one, so for
# float64 draws of more than four categories the last bit may differ from torch's (float32 draws, rounded
# after the division, agree).

_SINGLE_DOUBLE = frozenset({"float32", "float64"})  # (torch's AT_DISPATCH_FLOATING_TYPES: no half types)

_THIRD_F = float(np.float32(1.0) / np.float32(3.0))
_C0331_F = float(np.float32(0.0331))
_SQRT = math.sqrt
_LOG = math.log
_LOG1P = math.log1p
_POW = math.pow
_COS = math.cos
_SIN = math.sin
_TWO_PI = 2.0 * math.pi


class _ScalarStream:
    """torch's scalar uniform and normal doubles from generator `gen`, read ahead in blocks."""

    def __init__(self, gen, hint):
        self.gen = gen
        self.engine = gen._engine
        self.saved = self.engine.state
        self.buf = gen._uniform_double(max(int(hint), 16)).tolist()
        self.pos = 0

    def uniform(self):
        if self.pos == len(self.buf):
            self.buf += self.gen._uniform_double(len(self.buf)).tolist()
        u = self.buf[self.pos]
        self.pos += 1
        return u

    def normal(self):
        gen = self.gen
        cached = gen._normal_double
        if cached is not None:
            gen._normal_double = None
            return cached
        u1 = self.uniform()
        u2 = self.uniform()
        r = _SQRT(-2.0 * _LOG1P(-u2))
        theta = _TWO_PI * u1
        gen._normal_double = r * _SIN(theta)
        return r * _COS(theta)

    def close(self):
        """Rewind the engine to where it was and move it on by the words actually used."""
        self.engine.state = self.saved
        if self.pos:
            self.gen._random(2 * self.pos)


def _gamma_setup(alpha, single):
    """Per element: the boost exponent (or nan when alpha >= 1), d and c of Marsaglia-Tsang, as torch
    computes them for a float (`single`) or double alpha."""
    ft = np.float32 if single else np.float64
    a = alpha.astype(ft)
    with np.errstate(all="ignore"):
        small = a < 1
        expo = np.where(small, (ft(1.0) / a).astype(np.float64), np.nan)
        boosted = np.where(small, a + ft(1.0), a)
        if single:
            d = (boosted - np.float32(_THIRD_F)).astype(np.float64)
        else:
            d = boosted - _THIRD_F
        c = 1.0 / np.sqrt(9.0 * d)
    return a.astype(np.float64), small, expo, d, c


def _gamma_one(stream, a, small, expo, d, c):
    """One standard gamma draw (torch's `sample_gamma`), as a double."""
    scale = 1.0
    if small:
        if a == 0.0:
            return 0.0
        scale *= _POW(1 - stream.uniform(), expo)
    if not d > 0:  # nan or a negative alpha: torch's loop would never end
        return math.nan
    while True:
        while True:
            x = stream.normal()
            y = 1.0 + c * x
            if not y <= 0:
                break
        v = y * y * y
        u = 1 - stream.uniform()
        xx = x * x
        if u < 1.0 - _C0331_F * xx * xx:
            return scale * d * v
        if _LOG(u) < 0.5 * xx + d * (1.0 - v + _LOG(v)):
            return scale * d * v


def _gamma_draws(alpha, gen, single):
    """Standard gamma draws for the elements of `alpha` (C order), float64."""
    a, small, expo, d, c = _gamma_setup(alpha.reshape(-1), single)
    out = np.empty(a.size)
    if a.size == 0:
        return out
    stream = _ScalarStream(gen, 3 * a.size + 8)
    try:
        for i, args in enumerate(zip(a.tolist(), small.tolist(), expo.tolist(), d.tolist(), c.tolist())):
            out[i] = _gamma_one(stream, *args)
    finally:
        stream.close()
    return out


def _contiguous_like(alpha):
    return meta_array(alpha.shape, alpha._data.dtype, contiguous_strides(alpha.shape))


# ---- _standard_gamma ------------------------------------------------------------------------------------


@_seeded("_standard_gamma", "StandardGammaBackward0", POINTWISE, saves="all", save_output=True,
         dtypes=_SINGLE_DOUBLE, error="gamma_cpu")
def _standard_gamma_op(alpha, gen):
    _no_meta(alpha)
    draws = _gamma_draws(alpha, gen, alpha.dtype == np.float32).astype(alpha.dtype)
    return np.maximum(draws, np.finfo(alpha.dtype).tiny).reshape(alpha.shape)


@_standard_gamma_op.derivative_
def _(g, alpha, gen, *, out):
    return g * _standard_gamma_grad(alpha, out)


# (torch's meta function keeps alpha's layout; its CPU kernel writes a fresh contiguous tensor)
_standard_gamma_op.meta_(lambda alpha, gen: meta_array(
    alpha.shape, alpha._data.dtype,
    like_strides(alpha) if alpha.numel() else contiguous_strides(alpha.shape)))


def _standard_gamma(input, generator=None):
    """Draws of Gamma(concentration=input, rate=1), one per element; differentiable in `input` through the
    implicit reparameterization gradient `_standard_gamma_grad`."""
    return dispatch(_standard_gamma_op, (input,), (_gen(generator, "_standard_gamma"),))


# ---- the reparameterized gradients ------------------------------------------------------------------------

_RATIONAL_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
     -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07]])


def _gamma_grad_small_x(a, x):
    """Taylor series of the gradient for x < 0.8."""
    numer, denom = np.ones_like(x), a.copy()
    s1, s2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        s1 = s1 + numer / denom
        s2 = s2 + numer / (denom * denom)
    pow_xa = np.power(x, a)
    pdf = np.power(x, a - 1) * np.exp(-x)
    cdf_alpha = (np.log(x) - _digamma(a)) * (pow_xa * s1) - pow_xa * s2
    r = -cdf_alpha / pdf
    return np.where(np.isnan(r), 0.0, r)


def _gamma_grad_large_alpha(a, x):
    """Rice saddle-point expansion for alpha > 8 (a polynomial near x = alpha)."""
    near = (0.9 * a <= x) & (x <= 1.1 * a)
    n1 = 1 + 24 * a * (1 + 12 * a)
    n2 = 1440 * (a * a) + 6 * x * (53 - 120 * x) - 65 * x * x / a + a * (107 + 3600 * x)
    poly = n1 * n2 / (1244160 * (a * a) * (a * a))
    denom = np.sqrt(8 * a)
    term2 = denom / (a - x)
    term3 = np.power(x - a - a * np.log(x / a), -1.5)
    term23 = np.where(x < a, term2 - term3, term2 + term3)
    term1 = np.log(x / a) * term23 - np.sqrt(2 / a) * (a + x) / ((a - x) * (a - x))
    stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
    return np.where(near, poly, -stirling * (x * term1) / denom)


def _gamma_grad_rational(a, x):
    """A bivariate rational approximation in log(x / alpha) and log(alpha)."""
    u, v = np.log(x / a), np.log(a)
    cv = [_RATIONAL_UV[0, i] + u * (_RATIONAL_UV[1, i] + u * _RATIONAL_UV[2, i]) for i in range(8)]
    p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
    q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
    return np.exp(p / q)


def _gamma_grad_kernel(alpha, x):
    a, xx = np.broadcast_arrays(alpha.astype(np.float64), x.astype(np.float64))
    with np.errstate(all="ignore"):
        out = np.where(xx < 0.8, _gamma_grad_small_x(a, xx),
                       np.where(a > 8.0, _gamma_grad_large_alpha(a, xx), _gamma_grad_rational(a, xx)))
    return out.astype(np.result_type(alpha, x))


@defop("_standard_gamma_grad", None, POINTWISE, "same", saves="none", dtypes=_SINGLE_DOUBLE,
       error="_standard_gamma_grad_cpu")
def _standard_gamma_grad_op(alpha, x):
    return _gamma_grad_kernel(alpha, x)


# NOTE [ What torch's autograd refuses ] in ember/autograd/graph.py: torch's derivatives.yaml differentiates
# `self` only, with `not_implemented`; the other gradient ops are outside it (its autograd fallback)
_standard_gamma_grad_op.edges = 1
_standard_gamma_grad_op.refuses_(NOT_IMPLEMENTED, "_standard_gamma_grad", "StandardGammaGradBackward0")


def _fresh_broadcast(*tensors):
    """The CPU kernels' output: a fresh contiguous tensor of the broadcast shape (torch has no meta
    kernel for these ops)."""
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return meta_array(shape, np.result_type(*(t._data.dtype for t in tensors)), contiguous_strides(shape))


_standard_gamma_grad_op.meta_(_fresh_broadcast)


def _standard_gamma_grad(input, output):
    """-(d/dalpha cdf(x; alpha)) / pdf(x; alpha) for standard gamma draws `output` of concentrations
    `input` (torch's approximation)."""
    return dispatch(_standard_gamma_grad_op, (input, output), ())


def _beta_grad_alpha_small(x, a, b):
    """The Beta(a, b) gradient in a for x near 0 (a Taylor series)."""
    factor = _digamma(a) - _digamma(a + b) - np.log(x)
    numer = np.ones_like(x)
    series = numer / a * (factor + 1 / a)
    for i in range(1, 11):
        numer = numer * ((i - b) * x / i)
        den = a + i
        series = series + numer / den * (factor + 1 / den)
    r = x * np.power(1 - x, -b) * series
    return np.where(np.isnan(r), 0.0, r)


def _beta_grad_beta_small(x, a, b):
    """The Beta(a, b) gradient in b for x near 0 (a Taylor series)."""
    factor = _digamma(a + b) - _digamma(b)
    numer, betas, dbetas = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    series = factor / a
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (b - i) + betas
        betas = betas * (b - i)
        series = series + numer / (a + i) * (dbetas + factor * betas)
    r = -np.power(1 - x, 1 - b) * series
    return np.where(np.isnan(r), 0.0, r)


def _beta_grad_alpha_mid(x, a, b):
    """The Beta(a, b) gradient in a when a and b are both large (a Rice saddle-point expansion)."""
    total = a + b
    mean = a / total
    std = np.sqrt(a * b / (total + 1)) / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    poly = 47 * x * (b * b) * (b * b) + a * (
        (43 + 20 * (16 + 27 * b) * x) * (b * b) * b + a * (
            3 * (59 + 180 * b - 90 * x) * (b * b) + a * (
                (453 + 1620 * b * (1 - x) - 455 * x) * b + a * (8 * (1 - x) * (135 * b - 11)))))
    pre_num = (1 + 12 * a) * (1 + 12 * b) / (total * total)
    pre_den = 12960 * a * a * a * b * b * (1 + 12 * total)
    at_mean = pre_num / (1 - x) * poly / pre_den
    prefactor = -x / np.sqrt(2 * a * b / total)
    stirling = ((1 + 1 / (12 * a) + 1 / (288 * a * a)) * (1 + 1 / (12 * b) + 1 / (288 * b * b))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    axbx = a * (x - 1) + b * x
    term1 = ((2 * (a * a) * (x - 1) + a * b * (x - 1) - x * (b * b))
             / (np.sqrt(2 * a / b) * np.power(total, 1.5) * axbx * axbx))
    term2 = 0.5 * np.log(a / (total * x))
    term3 = np.sqrt(8 * a * b / total) / (b * x + a * (x - 1))
    term4 = np.power(b * np.log(b / (total * (1 - x))) + a * np.log(a / (total * x)), -1.5)
    away = stirling * prefactor * (term1 + term2 * (term3 + np.where(x < mean, term4, -term4)))
    return np.where(near, at_mean, away)


_DIRICHLET_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


def _dirichlet_grad_rational(x, a, total):
    """A rational correction to an analytic approximation (the general case)."""
    u = np.log(x)
    la = np.log(a) - u
    lb = np.log(total) - la
    pu, pa = (1.0, u, u * u), (1.0, la, la * la)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pu[i] * pa[j]
            c0, c1 = _DIRICHLET_C[0, i, j], _DIRICHLET_C[1, i, j]
            p = p + ua * (c0[0] + lb * (c0[1] + lb * (c0[2] + lb * c0[3])))
            q = q + ua * (c1[0] + lb * (c1[1] + lb * (c1[2] + lb * c1[3])))
    approx = x * (_digamma(total) - _digamma(a)) / (total - a)
    return p / q * approx


def _dirichlet_grad_kernel(x, alpha, total):
    dt = np.result_type(x, alpha, total)
    x, a, t = (np.asarray(v, np.float64) for v in np.broadcast_arrays(x, alpha, total))
    b = t - a
    boundary = t * x * (1 - x)
    with np.errstate(all="ignore"):
        out = np.where(
            (x <= 0.5) & (boundary < 2.5), _beta_grad_alpha_small(x, a, b),
            np.where((x >= 0.5) & (boundary < 0.75), -_beta_grad_beta_small(1 - x, b, a),
                     np.where((a > 6) & (b > 6), _beta_grad_alpha_mid(x, a, b),
                              _dirichlet_grad_rational(x, a, t))))
    return out.astype(dt)


@defop("_dirichlet_grad", None, POINTWISE, "same", saves="none", dtypes=_SINGLE_DOUBLE,
       error="_dirichlet_grad_cpu")
def _dirichlet_grad_op(x, alpha, total):
    return _dirichlet_grad_kernel(x, alpha, total)


_dirichlet_grad_op.meta_(_fresh_broadcast)
_dirichlet_grad_op.refuses_(FALLBACK, "_dirichlet_grad")


def _dirichlet_grad(x, alpha, total):
    """-(d/dalpha cdf(x; alpha, total - alpha)) / pdf(x; alpha, total - alpha) / (1 - x) for Beta draws x: the
    reparameterized gradient of a Dirichlet draw's coordinates (torch's approximation)."""
    return dispatch(_dirichlet_grad_op, (x, alpha, total), ())


# ---- _sample_dirichlet ----------------------------------------------------------------------------------


@_seeded("_sample_dirichlet", None, POINTWISE, saves="none", dtypes=_SINGLE_DOUBLE, error="dirichlet")
def _sample_dirichlet_op(alpha, gen):
    _no_meta(alpha)
    # torch draws the gammas in double whatever alpha's dtype, then normalizes and clamps into (0, 1)
    gammas = np.maximum(_gamma_draws(alpha, gen, False), np.finfo(np.float64).tiny).reshape(alpha.shape)
    ratio = (gammas / gammas.sum(-1, keepdims=True)).astype(alpha.dtype)
    top = np.nextafter(alpha.dtype.type(1), alpha.dtype.type(0))
    return np.minimum(top, np.maximum(np.finfo(alpha.dtype).tiny, ratio))


_sample_dirichlet_op.meta_(lambda alpha, gen: _contiguous_like(alpha))
_sample_dirichlet_op.refuses_(FALLBACK, "_sample_dirichlet")


def _sample_dirichlet(input, generator=None):
    """One Dirichlet(concentration) draw per vector along the last dim of `input`."""
    return dispatch(_sample_dirichlet_op, (input,), (_gen(generator, "_sample_dirichlet"),))


public.update(_standard_gamma=_standard_gamma, _standard_gamma_grad=_standard_gamma_grad,
              _sample_dirichlet=_sample_dirichlet, _dirichlet_grad=_dirichlet_grad)

"""NumPy kernels for the special functions NumPy lacks: erf, erfc, erfcx, erfinv, lgamma, digamma.

These are plain array functions (no ops, no autograd); ember/_ops/unary.py declares the ops on them.
They compute in float64 and are accurate to a few ulps there, so float32 and half results round once.

NOTE [ Special functions without SciPy ]
SciPy is not a dependency and `np.vectorize(math.erf)` costs a Python call per element, so:
- erfc(x) = exp(-x^2) * erfcx(x) for x >= 0, where erfcx, the scaled complement, is smooth and slowly
  varying on [0, inf). Under the map t = (x - 4) / (x + 4) it is analytic on t in [-1, 1], so one Chebyshev
  series in t (fitted once, lazily, at Chebyshev nodes from Python's correctly rounded math.erfc) gives
  it to ~1e-16 everywhere. erf(x) is a Taylor series for |x| < 0.5 and 1 - erfc(x) beyond.
- lgamma and digamma shift x up to >= 10 with the recurrences (a fixed number of vectorised steps), use
  the Stirling / asymptotic series there, and the reflection formulas for negative x.
- erfinv starts from Winitzki's closed-form approximation (~2e-3) and takes three Halley steps on erf
  (cubic convergence: well past float64 precision).
"""

import math

import numpy as np

__all__ = ["erf", "erfc", "erfcx", "erfinv", "lgamma", "digamma", "polygamma"]

_SQRT_PI = math.sqrt(math.pi)
_K = 4.0  # the scale of the map t = (x - K) / (x + K)
_cheb = []  # lazily fitted Chebyshev coefficients of erfcx(t)


def _erfcx_exact(x):
    """erfcx at one Python float x >= 0 (for fitting): math.erfc scaled, or its asymptotic series."""
    if x < 25.0:
        return math.erfc(x) * math.exp(x * x)
    s, term, inv = 1.0, 1.0, 1.0 / (2 * x * x)
    for k in range(1, 12):
        term *= -(2 * k - 1) * inv
        s += term
    return s / (x * _SQRT_PI)


def _coefficients():
    if not _cheb:
        n = 64
        t = np.cos(np.pi * (np.arange(n) + 0.5) / n)
        t = t[t < 1 - 1e-12]
        x = _K * (1 + t) / (1 - t)
        y = np.array([_erfcx_exact(float(v)) for v in x])
        _cheb.append(np.polynomial.chebyshev.chebfit(t, y, 28))
    return _cheb[0]


def _chebval(t, coef):
    """Clenshaw's recurrence for a Chebyshev series, in place (NumPy's chebval allocates per step)."""
    b1 = np.zeros_like(t)
    b2 = np.zeros_like(t)
    t2 = 2 * t
    tmp = np.empty_like(t)
    for c in coef[:0:-1]:
        np.multiply(t2, b1, out=tmp)
        tmp -= b2
        tmp += c
        b2, b1, tmp = b1, tmp, b2
    return t * b1 - b2 + coef[0]


def _coef(precise):
    """The Chebyshev coefficients: all of them in float64, or the first 15 (to ~1e-9) for single precision."""
    c = _coefficients()
    return c if precise else c[:15].astype(np.float32)


def erfcx(x, precise=True):
    """exp(x^2) * erfc(x) for an array x (in float64, or float32 with `precise=False`)."""
    x = np.asarray(x, np.float64 if precise else np.float32)
    pos = np.where(x >= 0, x, 0.0)
    t = (pos - _K) / (pos + _K)
    t = np.where(np.isinf(pos), 1.0, t)
    r = _chebval(t, _coef(precise))
    r = np.where(np.isinf(pos), 0.0, r)
    neg = x < 0
    if neg.any():  # erfcx(-x) = 2 exp(x^2) - erfcx(x)
        with np.errstate(over="ignore"):
            xn = x[neg]
            r[neg] = 2 * np.exp(xn * xn) - _chebval((-xn - _K) / (-xn + _K), _coef(precise))
    return r


def erfc(x, precise=True):
    x = np.asarray(x, np.float64 if precise else np.float32)
    a = np.abs(x)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        r = np.exp(-a * a) * erfcx(a, precise)
    r = np.where(np.isinf(a), 0.0, r)
    return np.where(x < 0, 2.0 - r, r)


def erf(x, precise=True):
    x = np.asarray(x, np.float64 if precise else np.float32)
    shape = x.shape
    x = x.reshape(-1)  # (boolean masks below need at least one dim)
    a = np.abs(x)
    small = a < 0.5
    out = np.empty_like(x)
    if small.all():
        xs = x
        small = slice(None)
    else:
        xs = x[small]
    x2 = xs * xs
    s = np.zeros_like(xs)
    term = xs
    for n in range(12 if precise else 7):  # the alternating Taylor series, fine for |x| < 0.5
        s += term / (2 * n + 1)
        term = term * -x2 / (n + 1)
    out[small] = s * (2 / _SQRT_PI)
    if not isinstance(small, slice):
        big = ~small
        out[big] = np.copysign(1.0 - erfc(a[big], precise), x[big])
    return out.reshape(shape)


def erfinv(y):
    y = np.asarray(y, np.float64)
    a = np.abs(y)
    c = 0.147
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ln = np.log1p(-a * a)
        b = 2 / (np.pi * c) + ln / 2
        x = np.sqrt(np.sqrt(b * b - ln / c) - b)
        tail = a > 0.5
        rest = 1.0 - a  # exact for a > 0.5, so the tail solves erfc(x) = 1 - a without cancellation
        for _ in range(3):
            f = np.where(tail, rest - erfc(x), erf(x) - a)
            d = 2 / _SQRT_PI * np.exp(-x * x)
            step = f / (d + x * f)
            x = np.where(np.isfinite(step) & (d > 0), x - step, x)
    x = np.where(a == 1, np.inf, x)
    return np.where(a > 1, np.nan, np.copysign(x, y))


# Stirling series coefficients B_2k / (2k (2k - 1)) for lgamma, and B_2k / (2k) for digamma
_LG = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400)
_DG = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12, -3617 / 8160)
_SHIFT = 10.0


def _lgamma_pos(x):
    """lgamma for x > 0 (array): shift up past _SHIFT, Stirling there."""
    z = x.copy()
    logprod = np.zeros_like(x)
    for _ in range(int(_SHIFT)):
        low = z < _SHIFT
        logprod += np.log(np.where(low, z, 1.0))
        z = np.where(low, z + 1, z)
    inv = 1 / z
    inv2 = inv * inv
    series = np.zeros_like(x)
    for c in reversed(_LG):
        series = series * inv2 + c
    with np.errstate(invalid="ignore"):
        r = (z - 0.5) * np.log(z) - z + 0.5 * math.log(2 * math.pi) + series * inv
    r = np.where(np.isinf(z), np.inf, r)
    return r - logprod


def lgamma(x):
    x = np.asarray(x, np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pos = _lgamma_pos(np.where(x > 0, x, 1.0))
        neg = x <= 0
        if not neg.any():
            return np.where(np.isnan(x), np.nan, pos)
        xn = np.where(neg, x, -0.5)
        frac = xn - np.round(xn)
        refl = np.log(np.pi / np.abs(np.sin(np.pi * frac))) - _lgamma_pos(1 - xn)
        refl = np.where(frac == 0, np.inf, refl)
        r = np.where(neg, refl, pos)
    return np.where(np.isnan(x), np.nan, np.where(np.isneginf(x), np.inf, r))


def _digamma_pos(x):
    z = x.copy()
    acc = np.zeros_like(x)
    for _ in range(int(_SHIFT)):
        low = z < _SHIFT
        acc -= np.where(low, 1 / z, 0.0)
        z = np.where(low, z + 1, z)
    inv2 = 1 / (z * z)
    series = np.zeros_like(x)
    for c in reversed(_DG):
        series = series * inv2 + c
    with np.errstate(invalid="ignore"):
        r = np.log(z) - 0.5 / z - series * inv2
    return r + acc


def digamma(x):
    x = np.asarray(x, np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pos = _digamma_pos(np.where(x > 0, x, 1.0))
        neg = x < 0
        r = pos
        if neg.any():
            xn = np.where(neg, x, -0.5)
            frac = xn - np.round(xn)
            refl = _digamma_pos(1 - xn) - np.pi / np.tan(np.pi * frac)
            refl = np.where(frac == 0, np.nan, refl)
            r = np.where(neg, refl, pos)
    r = np.where(x == 0, np.where(np.signbit(x), np.inf, -np.inf), r)
    r = np.where(np.isposinf(x), np.inf, r)
    return np.where(np.isnan(x) | np.isneginf(x), np.nan, r)


_BERN = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)  # B_2, B_4, ...


def polygamma(n, x):
    """The n-th derivative of digamma, n >= 1: (-1)^(n+1) n! zeta(n+1, x), the Hurwitz zeta summed
    directly up to x + k >= _SHIFT and by Euler-Maclaurin beyond."""
    x = np.asarray(x, np.float64)
    s = n + 1.0
    with np.errstate(all="ignore"):
        z = x.copy()
        acc = np.zeros_like(x)
        finite = np.isfinite(x)
        steps = int(max(0.0, _SHIFT - np.min(x[finite]))) + 1 if finite.any() else 0
        for _ in range(steps):
            low = z < _SHIFT
            acc += np.where(low, z ** -s, 0.0)
            z = np.where(low, z + 1, z)
        tail = z ** (1 - s) / (s - 1) + 0.5 * z ** -s
        rising, fact = s, 2.0  # s (s+1) ... (s + 2j - 2) and (2j)!
        zp = z ** (-s - 1)
        for j, b in enumerate(_BERN, start=1):
            tail += b / fact * rising * zp
            rising *= (s + 2 * j - 1) * (s + 2 * j)
            fact *= (2 * j + 1) * (2 * j + 2)
            zp = zp / (z * z)
        r = (-1) ** (n + 1) * math.factorial(n) * (acc + tail)
    pole = (-1.0) ** (n + 1) * np.inf  # torch's values at the poles and at -inf
    r = np.where((x <= 0) & (x == np.round(x)), pole, r)
    r = np.where(np.isneginf(x), pole if n > 1 else np.nan, r)
    return np.where(np.isposinf(x), 0.0 if n == 1 else np.nan, r)

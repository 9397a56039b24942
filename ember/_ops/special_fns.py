"""The special functions of torch.special (and their torch.* / Tensor names: i0, sinc, igamma, igammac,
mvlgamma): op declarations over the NumPy kernels of cephes.py and special.py.

Each op is torch's: its name, its backward node (`SpecialI0EBackward0`, ...) and formula from torch's
derivatives.yaml, or no node where torch's output is not differentiable (the Bessel functions, Airy's Ai,
the orthogonal polynomials), or torch's "not implemented" error at backward time where torch has none for
an input (zeta's and igamma's first argument). The dtypes each accepts, and the kernel name in its error,
are torch's CPU kernel's. Values are computed in float64 and rounded once (NOTE [ Special functions in
float64 ] in cephes.py), except where torch's own rounding of an intermediate decides the result (sinc's
pi * x, the polynomials' recurrences), which are evaluated in the input's precision as torch does.
"""

import math

import numpy as np

from .._argparse import call_error
from .._dispatch import FLOATING, POINTWISE, defop, dispatch, dispatch_inplace
from ..autograd.graph import needs_grad
from . import special
from ._util import finish_out, method, public

__all__ = ["i0", "sinc", "igamma", "igammac", "mvlgamma"]

_F32_64 = frozenset({"float32", "float64"})


class _Deferred:
    """cephes.py's kernels, its module (and coefficient tables) loaded on the first call of any: importing ember
    declares these ops but computes none of them."""

    def __getattr__(self, name):
        def kernel(*args, **kwargs):
            from . import cephes as module

            return getattr(module, name)(*args, **kwargs)
        kernel.__name__ = name
        return kernel


cephes = _Deferred()
_SQRT_2PI = math.sqrt(2 * math.pi)


def _rounded(fn):
    """A float64 kernel of cephes.py, rounded back to the input's dtype (and, for one input, its layout)."""
    def kernel(*arrays):
        if len(arrays) == 1:
            out = np.empty_like(arrays[0])
            with np.errstate(over="ignore"):  # (a float64 value past float32's range rounds to inf, silently)
                out[...] = fn(*arrays)
            return out
        r = fn(*arrays)  # (first: on meta payloads this is where NoData is raised)
        arrs = [a for a in arrays if isinstance(a, np.ndarray)]
        # the layout of a broadcast pointwise result, NumPy's 'K' order, as TensorIterator's
        out = np.empty_like(arrs[0] if len(arrs) == 1 else np.add(arrs[0], arrs[1]))
        with np.errstate(over="ignore"):
            out[...] = r
        return out
    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def _unary(name, node, fn, deriv=None, dtypes=FLOATING, error=None, save_output=False):
    op = defop(name, node, POINTWISE, "float", saves="all", save_output=save_output, dtypes=dtypes,
               error=error or f"{name.removeprefix('special_')}_cpu")(_rounded(fn))
    if deriv is not None:
        op.derivative_(deriv)
    return op


def _not_implemented(what):
    return NotImplementedError(f"the derivative for '{what}' is not implemented.")


def _tiny_safe(x):
    """torch's i1 / i1e backward: x with |x| <= eps replaced by eps (their gradient there is 0.5)."""
    eps = float(np.finfo(x._data.dtype).eps)
    return x.abs() > eps, x.masked_fill(~(x.abs() > eps), eps)


def _i1_grad(g, a, *, out):
    big, safe = _tiny_safe(a)
    return g * (safe.i0() - out * safe.reciprocal()).masked_fill(~big, 0.5)


def _i1e_grad(g, a, *, out):
    big, safe = _tiny_safe(a)
    return g * (special_i0e(safe) - out * (safe.sgn() + safe.reciprocal())).masked_fill(~big, 0.5)


def _entr_kernel(a):
    x = np.asarray(a, np.float64)
    with np.errstate(all="ignore"):
        r = np.where(x > 0, -x * np.log(np.where(x > 0, x, 1.0)), np.where(x == 0, 0.0, -np.inf))
    return np.where(np.isnan(x), np.nan, r)


def _erfcx_kernel(a):
    """erfcx as torch's calc_erfcx: special.erfcx on [0, 50], the continued fraction beyond, and below 0
    2 exp(x^2) - erfcx(-x), with x^2 rounded to the input's precision as torch's float evaluation rounds it
    (that rounding, an ulp of x^2, is the result's error there); inf below -26.7, NaN for NaN."""
    x = np.asarray(a, np.float64)
    xx = np.square(np.asarray(a, np.float32)).astype(np.float64) if a.dtype != np.float64 else x * x
    with np.errstate(all="ignore"):
        pos = special.erfcx(np.abs(x))
        ispi = 0.56418958354775628694807945156
        far = np.where(x > 5e7, ispi / x, ispi * (xx * (xx + 4.5) + 2) / (x * (xx * (xx + 5) + 3.75)))
        r = np.where(x > 50, far, pos)
        neg = 2 * np.exp(xx)
        r = np.where(x < 0, np.where(x < -6.1, neg, neg - pos), r)
    return np.where(np.isnan(x), np.nan, np.where(x < -26.7, np.inf, r))


def _airy_kernel(a):
    return cephes.airy_ai(a, np.float64 if a.dtype == np.float64 else np.float32)


_i0 = _unary("i0", "I0Backward0", cephes.i0, lambda g, a: g * special_i1(a), error="i0_vml_cpu")
_i0e = _unary("special_i0e", "SpecialI0EBackward0", cephes.i0e,
              lambda g, a, *, out: g * (special_i1e(a) - a.sgn() * out), save_output=True)
_i1 = _unary("special_i1", "SpecialI1Backward0", cephes.i1, _i1_grad, save_output=True)
_i1e = _unary("special_i1e", "SpecialI1EBackward0", cephes.i1e, _i1e_grad, save_output=True)
_ndtri = _unary("special_ndtri", "SpecialNdtriBackward0", cephes.ndtri,
                lambda g, a, *, out: g * _SQRT_2PI * (out.square() / 2).exp(), dtypes=_F32_64, save_output=True)
_log_ndtr = _unary("special_log_ndtr", "SpecialLogNdtrBackward0", cephes.log_ndtr,
                   lambda g, a, *, out: g / _SQRT_2PI * (out + a.pow(2) / 2).neg().exp(), dtypes=_F32_64,
                   save_output=True)
_erfcx = _unary("special_erfcx", "SpecialErfcxBackward0", _erfcx_kernel,
                lambda g, a, *, out: (2.0 * a * out - 2.0 / math.sqrt(math.pi)) * g, dtypes=_F32_64,
                save_output=True)
_entr = _unary("special_entr", "SpecialEntrBackward0", _entr_kernel, lambda g, a: g * (-(1 + a.log())))

# torch's outputs of these are not differentiable: no node (the result does not require grad)
_NO_GRAD = {name: _unary("special_" + name, None, fn, dtypes=_F32_64) for name, fn in (
    ("bessel_j0", cephes.j0), ("bessel_j1", cephes.j1), ("bessel_y0", cephes.y0), ("bessel_y1", cephes.y1),
    ("modified_bessel_i0", cephes.i0), ("modified_bessel_i1", cephes.i1), ("modified_bessel_k0", cephes.k0),
    ("modified_bessel_k1", cephes.k1), ("scaled_modified_bessel_k0", cephes.k0e),
    ("scaled_modified_bessel_k1", cephes.k1e), ("spherical_bessel_j0", cephes.spherical_j0),
    ("airy_ai", _airy_kernel))}


# ---- sinc ------------------------------------------------------------------------------------------------------


def _sinc_kernel(a):
    """sin(pi x) / (pi x), 1 at 0. torch rounds pi x to the input's precision (float for half types) before
    taking its sine, which decides the result for large x: so does this (the sine itself is float64's)."""
    if a.dtype.kind == "c":
        with np.errstate(all="ignore"):
            return np.where(a == 0, 1, np.sin(np.pi * a) / (np.pi * a)).astype(a.dtype)
    work = a.dtype if a.dtype in (np.float32, np.float64) else np.dtype(np.float32)
    x = np.asarray(a, work)
    with np.errstate(all="ignore"):
        prod = work.type(math.pi) * x
        r = (np.sin(prod.astype(np.float64)) / prod).astype(work)
    out = np.empty_like(a)
    out[...] = np.where(x == 0, work.type(1), r)
    return out


_sinc = defop("sinc", "SincBackward0", POINTWISE, "float")(_sinc_kernel)


@_sinc.derivative_
def _(g, a):
    pi_a = a * math.pi
    sq = a * a * math.pi
    return (g * ((pi_a * pi_a.cos()) - pi_a.sin()) / sq.conj()).masked_fill(sq == 0.0, 0.0)


# ---- two-argument functions ----------------------------------------------------------------------------------


def _overloads(name, nodes, kernel, deriv, dtypes, error, promote="float"):
    """The Tensor / Scalar_Self / Scalar_Other overloads of a binary op (torch's three nodes)."""
    ops = [defop(name, n, POINTWISE, promote, dtypes=dtypes, error=error, overload=o)(kernel)
           for n, o in zip(nodes, ("Tensor", "Scalar_Self", "Scalar_Other") if len(nodes) == 3 else ("",))]
    for op in ops:
        op.derivative_(deriv)
    return ops


def _pick(ops, input, other):
    from .._tensor import Tensor

    if len(ops) == 1 or isinstance(input, Tensor) and isinstance(other, Tensor):
        return ops[0]
    return ops[1] if isinstance(other, Tensor) else ops[2]


def _xlog1py_kernel(x, y):
    with np.errstate(all="ignore"):
        r = np.multiply(x, np.log1p(y))
        return np.where(np.isnan(y), np.asarray(np.nan, r.dtype), np.where(np.asarray(x) == 0, 0, r))


def _xlog1py_grads(g, x, y):
    from .._tensor import Tensor

    gx = gy = None
    if isinstance(x, Tensor):
        gx = g * special_xlog1py((x != 0), y)  # (0 where x is 0, also for a Python-number y below -1)
    if isinstance(y, Tensor):
        gy = g * x / (y + 1)
    return gx, gy


_xlog1py = _overloads("special_xlog1py", ("SpecialXlog1PyBackward0", "SpecialXlog1PyBackward1",
                                          "SpecialXlog1PyBackward2"), _xlog1py_kernel, _xlog1py_grads,
                      FLOATING, "xlog1py_cpu")


def _zeta_grads(g, x, q):
    from .._tensor import Tensor

    if isinstance(x, Tensor) and needs_grad(0):
        raise _not_implemented("zeta")
    return None, (g * -x * special_zeta(x + 1.0, q) if isinstance(q, Tensor) else None)


_zeta = _overloads("special_zeta", ("SpecialZetaBackward0", "SpecialZetaBackward1", "SpecialZetaBackward2"),
                   _rounded(cephes.zeta), _zeta_grads, _F32_64, "zeta_cpu")


def _igamma_grads(name, sign):
    def grads(g, a, x):
        if needs_grad(0):
            raise _not_implemented(f"{name}: input")
        return None, g * sign * ((a - 1) * x.log() - x - a.lgamma()).exp()
    return grads


_igamma = _overloads("igamma", ("IgammaBackward0",), _rounded(cephes.igamma), _igamma_grads("igamma", 1),
                     FLOATING, "igamma_cpu", "same")
_igammac = _overloads("igammac", ("IgammacBackward0",), _rounded(cephes.igammac), _igamma_grads("igammac", -1),
                      FLOATING, "igammac_cpu", "same")


# ---- mvlgamma ---------------------------------------------------------------------------------------------


def _mvlgamma_args(a, p):
    args = np.arange(-p / 2 + 0.5, 0.5, 0.5).astype(a.dtype)
    return args + a[..., None]


@defop("mvlgamma", "MvlgammaBackward0", POINTWISE, "float")
def _mvlgamma(a, p):
    work = np.asarray(a, np.float32) if a.dtype.kind == "V" or a.dtype == np.float16 else a
    lg = np.empty_like(_mvlgamma_args(work, p))
    lg[...] = special.lgamma(_mvlgamma_args(work, p))
    r = lg.sum(-1) + work.dtype.type(p * (p - 1) * math.log(math.pi) * 0.25)
    out = np.empty_like(a)
    out[...] = r
    return out


@_mvlgamma.derivative_
def _(g, a, p):
    from .creation import arange

    args = arange(-p / 2.0 + 0.5, 0.5, 0.5, dtype=a.dtype) + a.unsqueeze(-1)
    return g * args.digamma().sum(-1)


def _mvlgamma_check(input, p):
    if input.dtype.name == "bool":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    try:
        if p < 1:
            raise RuntimeError("p has to be greater than or equal to 1")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if input.is_complex():
        from .._dispatch import dtype_word

        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dtype_word(input.dtype)}\'')


@method()
def mvlgamma(input, p: int, *, out=None):
    """The multivariate log-gamma function of dimension p, elementwise."""
    _mvlgamma_check(input, p)
    return finish_out(dispatch(_mvlgamma, (input,), (p,)), out)


def _mvlgamma_(self, p):
    _mvlgamma_check(self, p)
    if not self.dtype.is_floating_point:  # (torch's words, the two types as its check names them)
        from .. import _dtypes
        from .._dispatch import dtype_word

        raise RuntimeError(f"mvlgamma: result type {dtype_word(self.dtype)} can't be cast to the desired output "
                           f"type {dtype_word(_dtypes.get_default_dtype())}")
    return dispatch_inplace(_mvlgamma, self, (self,), (p,))


method("mvlgamma_", top=False)(_mvlgamma_)


# ---- orthogonal polynomials --------------------------------------------------------------------------------

# NOTE [ Orthogonal polynomials ]
# torch's kernels take n as an integer (a float n truncated; NaN or inf read as negative, giving 0) and run
# each family's three-term recurrence up to degree n, with closed forms for special points (x = +-1 and,
# for the Chebyshev families at high degree inside (-1, 1), the trigonometric form). Here the recurrence
# runs once over all elements, up to the largest n, each element leaving when it reaches its own degree or
# turns NaN; the closed forms then overwrite their elements in the order of torch's checks. The arithmetic is
# in the input's precision, as torch's (its recurrences amplify rounding, so float32 must round as float32).


def _degree(n):
    try:
        with np.errstate(invalid="ignore"):
            finite = np.isfinite(n)
            return np.where(finite & (np.abs(n) < 2.0 ** 62), np.trunc(np.where(finite, n, -1)), -1).astype(np.int64)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


# NOTE [ Polynomial degrees past 2^20 ]
# torch runs its recurrence n - 1 times per element even for n = 2^31 (seconds of C per element); a vectorised
# NumPy step costs microseconds, so that many steps would take hours. Elements whose closed forms torch takes
# (above) never loop; Legendre at x = 0 has its own closed form; an element still live after 2^20 steps gets
# NaN. At such degrees torch's float result is its accumulated rounding (or NaN itself, after its values
# under- or overflow), so this is a documented divergence, reached only by degrees no recurrence is meant for.
_MAX_STEPS = 1 << 20


def _recurrence(q0, n, step, nan_stop=True):
    """Run r_k = step(k, p, q) for the iteration count n - 1 of each element (p, q = 1, q0 to start)."""
    p = np.ones_like(q0)
    q = q0.copy()
    if n.size and n.max() > _MAX_STEPS:
        q[n > _MAX_STEPS] = np.nan
        n = np.where(n > _MAX_STEPS, 0, n)
    top = int(n.max(initial=0))
    active = n >= 2
    for j in range(1, top):
        idx = np.flatnonzero(active)
        if not idx.size:
            break
        r = step(j, p[idx], q[idx], idx)
        p[idx], q[idx] = q[idx], r
        still = n[idx] > j + 1
        if nan_stop:
            still &= ~np.isnan(r)
        active[idx] = still
    return q


def _poly_kernel(family):
    def kernel(x, n):
        x, n = np.broadcast_arrays(x, n)
        shape, dt = x.shape, x.dtype
        one = dt.type(1)
        k = _degree(n.ravel())
        kf = k.astype(dt)
        with np.errstate(all="ignore"):  # (flat: the recurrence steps index its live elements)
            r = _FAMILIES[family](x.astype(dt).ravel(), k, kf, one)
        return np.asarray(r).astype(dt, copy=False).reshape(shape)
    kernel.__name__ = family
    return kernel


def _cheb(kind, shifted):
    """Chebyshev T, U, V, W (shifted: in 2x - 1), as torch writes them."""
    def f(x, k, kf, one):
        y = x + x - one if shifted else x
        q0 = {"t": y, "u": y + y, "v": y + y - one, "w": y + y + one}[kind]
        two_y = y + y

        def step(j, p, q, idx):
            return two_y[idx] * q - p
        even = k % 2 == 0
        big = k > (6 if kind == "t" or shifted and kind != "w" else 4 if shifted else 8)
        inside = big & (np.abs(y) < one)
        early = inside | ((x == one) | (x == 0) if shifted else np.abs(x) == one)  # (torch returns before looping)
        r = _recurrence(q0, np.where(early, 0, k), step)
        r = np.where(k == 1, q0, r)
        r = np.where(k == 0, one, r)
        theta = np.arccos(np.where(inside, y, 0))
        if kind == "t":
            closed = np.cos(kf * theta)
        elif kind == "u":
            s = np.sin(theta)
            closed = np.where(s != 0, np.sin((kf + 1) * theta) / s, (kf + 1) * np.cos((kf + 1) * theta) / y)
        elif kind == "v":
            closed = np.where(np.sin(theta / 2) != one, np.cos((kf + dt_half(x)) * theta) / np.cos(theta / 2),
                              np.where(even, kf + kf + 1, -(kf + kf + 1)))
        else:
            closed = np.where(np.cos(theta / 2) != one, np.sin((kf + dt_half(x)) * theta) / np.sin(theta / 2),
                              np.where(y > 0, kf + kf + 1, np.where(even, one, -one)) if not shifted else
                              np.where(even, one, -one))
        r = np.where(inside, closed, r)
        at_one = (x == one) if shifted else (np.abs(x) == one)
        pos = (x == one) if shifted else (x > 0)
        edge = {"t": np.where(pos | even, one, -one), "u": np.where(pos | even, kf + 1, -(kf + 1)),
                "v": np.where(pos, one, np.where(even, kf + kf + 1, -(kf + kf + 1))),
                "w": np.where(pos, kf + kf + 1, np.where(even, one, -one))}[kind]
        if shifted:  # shifted forms check x == 1 first, then x == 0 (where 2x - 1 = -1)
            at_zero = x == 0
            r = np.where(at_zero, {"t": np.where(even, one, -one), "u": np.where(even, kf + 1, -(kf + 1)),
                                   "v": np.where(even, kf + kf + 1, -(kf + kf + 1)),
                                   "w": np.where(even, one, -one)}[kind], r)
            edge = {"t": one, "u": kf + 1, "v": one, "w": kf + kf + 1}[kind]
        r = np.where(at_one, edge, r)
        return np.where(k < 0, 0, r)
    return f


def dt_half(x):
    return x.dtype.type(0.5)


def _hermite_h(x, k, kf, one):
    limit = 128 if x.dtype == np.float32 else 512
    two_x = x + x
    r = _recurrence(two_x.copy(), np.where(k > limit, 0, k), lambda j, p, q, idx: two_x[idx] * q -
                    x.dtype.type(2 * j) * p, nan_stop=False)
    r = np.where(k > limit, np.nan, r)
    r = np.where(k == 1, two_x, r)
    r = np.where(k == 0, one, r)
    return np.where(k < 0, 0, r)


def _hermite_he(x, k, kf, one):
    limit = 128 if x.dtype == np.float32 else 512
    r = _recurrence(x.copy(), np.where(k > limit, 0, k), lambda j, p, q, idx: x[idx] * q - x.dtype.type(j) * p,
                    nan_stop=False)
    r = np.where(k > limit, np.nan, r)
    r = np.where(k == 1, x, r)
    r = np.where(k == 0, one, r)
    return np.where(k < 0, 0, r)


def _laguerre(x, k, kf, one):
    q0 = one - x
    t = x.dtype.type

    def step(j, p, q, idx):
        return ((t(j + j) + (one - x[idx])) * q - t(j) * p) / t(j + 1)
    r = _recurrence(q0, np.where(x == 0, 0, k), step)
    r = np.where(k == 1, q0, r)
    r = np.where(k == 0, one, r)
    r = np.where(np.abs(x) == 0, one, r)
    return np.where(k < 0, 0, r)


def _legendre(x, k, kf, one):
    t = x.dtype.type

    def step(j, p, q, idx):
        return (t(j + j + 1) * x[idx] * q - t(j) * p) / t(j + 1)
    # at x = 0 the recurrence only walks P_n(0) = (-1)^(n/2) Gamma((n+1)/2) / (sqrt(pi) Gamma(n/2 + 1)) (0 for
    # odd n) down, exactly enough in float64 and without n steps (torch's loop runs them; the degree can be 2^31)
    zero = (x == 0) & (k >= 2)
    r = _recurrence(x.copy(), np.where(zero | (np.abs(x) == one), 0, k), step)
    if zero.any():
        m = k[zero] // 2
        with np.errstate(all="ignore"):
            p0 = np.exp(special.lgamma(m + 0.5) - special.lgamma(m + 1.0)) / math.sqrt(math.pi)
        r[zero] = np.where(k[zero] % 2 == 1, 0.0, np.where(m % 2 == 1, -p0, p0)).astype(r.dtype)
    r = np.where(k == 1, x, r)
    r = np.where(k == 0, one, r)
    r = np.where(np.abs(x) == one, np.where((x > 0) | (k % 2 == 0), one, -one), r)
    return np.where(k < 0, 0, r)


_FAMILIES = {
    **{f"chebyshev_polynomial_{c}": _cheb(c, False) for c in "tuvw"},
    **{f"shifted_chebyshev_polynomial_{c}": _cheb(c, True) for c in "tuvw"},
    "hermite_polynomial_h": _hermite_h, "hermite_polynomial_he": _hermite_he,
    "laguerre_polynomial_l": _laguerre, "legendre_polynomial_p": _legendre,
}
_POLY = {name: _overloads("special_" + name, (None, None, None), _poly_kernel(name), None, _F32_64,
                          name + "_cpu") for name in _FAMILIES}


# ---- public functions --------------------------------------------------------------------------------------


def _one(op, name):
    def fn(input, *, out=None):
        return finish_out(dispatch(op, (input,)), out)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _two(ops, name):
    def fn(input, other, *, out=None):
        return finish_out(dispatch(_pick(ops, input, other), (input, other)), out)
    fn.__name__ = fn.__qualname__ = name
    return fn


i0 = method("i0")(_one(_i0, "i0"))
sinc = method("sinc")(_one(_sinc, "sinc"))
igamma = method("igamma")(_two(_igamma, "igamma"))
igammac = method("igammac")(_two(_igammac, "igammac"))
def _inplace_of(name, op, binary):
    """Tensor.`name`: `op` in place, taking exactly torch's arguments (no default that a user's extra
    argument would fill)."""
    def fn_(self, other):
        return dispatch_inplace(op, self, (self, other))

    def fn(self):
        return dispatch_inplace(op, self, (self,))
    f = fn_ if binary else fn
    f.__name__ = name
    return method(name, top=False)(f)


for _name, _op in (("i0_", _i0), ("sinc_", _sinc)):
    _inplace_of(_name, _op, False)
for _name, _ops in (("igamma_", _igamma), ("igammac_", _igammac)):
    _inplace_of(_name, _ops[0], True)

special_i0e = _one(_i0e, "i0e")
special_i1 = _one(_i1, "i1")
special_i1e = _one(_i1e, "i1e")
special_ndtri = _one(_ndtri, "ndtri")
special_log_ndtr = _one(_log_ndtr, "log_ndtr")
special_erfcx = _one(_erfcx, "erfcx")
special_entr = _one(_entr, "entr")
special_xlog1py = _two(_xlog1py, "xlog1py")
special_zeta = _two(_zeta, "zeta")
SPECIAL = {fn.__name__: fn for fn in (special_i0e, special_i1, special_i1e, special_ndtri, special_log_ndtr,
                                      special_erfcx, special_entr, special_xlog1py, special_zeta)}
SPECIAL.update({name: _one(op, name) for name, op in _NO_GRAD.items()})
for _name, _ops in _POLY.items():
    def _poly_fn(input, n, *, out=None, _ops=_ops):
        return finish_out(dispatch(_pick(_ops, input, n), (input, n)), out)
    _poly_fn.__name__ = _poly_fn.__qualname__ = _name
    _poly_fn.__code__ = _poly_fn.__code__.replace(co_name=_name, **(  # (errors name it)
        {"co_qualname": _name} if hasattr(_poly_fn.__code__, "co_qualname") else {}))
    SPECIAL[_name] = _poly_fn
assert all(k not in public for k in SPECIAL)  # (these live in ember.special only)

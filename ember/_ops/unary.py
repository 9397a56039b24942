"""Unary pointwise math: exp/log variants, trig and hyperbolic functions and inverses, erf family, gamma
family, rounding, reciprocal, logit, nan_to_num, and the float predicates (isnan, isinf, ...).

Each op is one `_op(...)` line: its NumPy kernel, torch's backward-node name and its derivative in ember
ops; `_unary` (pointwise.py) publishes it as `ember.name`, `Tensor.name`, `Tensor.name_` and `out=`.
Kernels that NumPy lacks come from special.py and compute in float64 (see NOTE [ Special functions
without SciPy ]); they are rounded back to the input's dtype.
"""

import math

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import FLOATING, INTEGRAL, POINTWISE, REAL, defop, dispatch, not_implemented, require_op_dtype
from .._meta import like_array, unary_meta
from .._tensor import Tensor
from . import special
from ._util import finish_out, method
from .pointwise import _unary

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _op(name, node, kernel, deriv=None, promote="float", saves="all", save_output=False, dtypes=None,
        error=None, tags=()):
    op = defop(name, node, POINTWISE, promote, saves=saves, save_output=save_output, dtypes=dtypes,
               error=error, tags=tags)(kernel)
    if deriv is not None:
        op.derivative_(deriv)
    return op


def _quiet(fn):
    """A NumPy ufunc without floating-point warnings (torch returns inf/nan silently)."""
    def kernel(a):
        with np.errstate(all="ignore"):
            return fn(a)
    return kernel


def _wide(fn):
    """A float64 special-function kernel rounded back to the input's dtype (and memory layout)."""
    def kernel(a):
        out = np.empty_like(a)
        out[...] = fn(a)
        return out
    return kernel


# ---- exponentials and logarithms ---------------------------------------------------------------------

_exp2 = _op("exp2", "Exp2Backward0", _quiet(np.exp2), lambda g, a, *, out: g * out * _LN2,
            saves="none", save_output=True)
_expm1 = _op("expm1", "Expm1Backward0", _quiet(np.expm1), lambda g, a, *, out: g * (out + 1),
             saves="none", save_output=True)
_log2 = _op("log2", "Log2Backward0", _quiet(np.log2), lambda g, a: g / (a * _LN2))
_log10 = _op("log10", "Log10Backward0", _quiet(np.log10), lambda g, a: g / (a * _LN10))
_log1p = _op("log1p", "Log1PBackward0", _quiet(np.log1p), lambda g, a: g / (a + 1))
_rsqrt = _op("rsqrt", "RsqrtBackward0", _quiet(lambda a: 1 / np.sqrt(a)),
             lambda g, a, *, out: g * out.pow(3) * -0.5, saves="none", save_output=True)
_reciprocal = _op("reciprocal", "ReciprocalBackward0", _quiet(lambda a: 1 / a),
                  lambda g, a, *, out: g * -(out * out), saves="none", save_output=True)

# ---- trigonometric and hyperbolic --------------------------------------------------------------------

_sin = _op("sin", "SinBackward0", _quiet(np.sin), lambda g, a: g * a.cos())
_cos = _op("cos", "CosBackward0", _quiet(np.cos), lambda g, a: g * -a.sin())
_tan = _op("tan", "TanBackward0", _quiet(np.tan), lambda g, a, *, out: g * (1 + out * out),
           saves="none", save_output=True)
_asin = _op("asin", "AsinBackward0", _quiet(np.arcsin), lambda g, a: g * (1 - a * a).rsqrt())
_acos = _op("acos", "AcosBackward0", _quiet(np.arccos), lambda g, a: g * -(1 - a * a).rsqrt())
_atan = _op("atan", "AtanBackward0", _quiet(np.arctan), lambda g, a: g / (a * a + 1))
_sinh = _op("sinh", "SinhBackward0", _quiet(np.sinh), lambda g, a: g * a.cosh())
_cosh = _op("cosh", "CoshBackward0", _quiet(np.cosh), lambda g, a: g * a.sinh())
_asinh = _op("asinh", "AsinhBackward0", _quiet(np.arcsinh), lambda g, a: g * (a * a + 1).rsqrt())
_acosh = _op("acosh", "AcoshBackward0", _quiet(np.arccosh), lambda g, a: g * (a * a - 1).rsqrt())
_atanh = _op("atanh", "AtanhBackward0", _quiet(np.arctanh), lambda g, a: g / (1 - a * a))

# ---- error and gamma functions -------------------------------------------------------------------------

def _erf_family(fn):
    """erf / erfc: float64 inputs get the full series, narrower floats a float32 one (NOTE [ Special
    functions without SciPy ])."""
    def kernel(a):
        out = np.empty_like(a)
        out[...] = fn(a, a.dtype == np.float64)
        return out
    return kernel


# real functions only: a complex input raises torch's kernel's error
_erf = _op("erf", "ErfBackward0", _erf_family(special.erf),
           lambda g, a: g * (-a * a).exp() * _TWO_OVER_SQRT_PI, dtypes=FLOATING, error="erf_vml_cpu")
_erfc = _op("erfc", "ErfcBackward0", _erf_family(special.erfc),
            lambda g, a: g * (-a * a).exp() * -_TWO_OVER_SQRT_PI, dtypes=FLOATING, error="erfc_vml_cpu")
_erfinv = _op("erfinv", "ErfinvBackward0", _wide(special.erfinv),
              lambda g, a, *, out: g * (out * out).exp() * (math.sqrt(math.pi) / 2), saves="none",
              save_output=True, dtypes=FLOATING, error="erfinv_vml_cpu")
_lgamma = _op("lgamma", "LgammaBackward0", _wide(special.lgamma), lambda g, a: g * a.digamma(),
              dtypes=FLOATING, error="lgamma_vml_cpu")
_digamma = _op("digamma", "DigammaBackward0", _wide(special.digamma), lambda g, a: g * polygamma(1, a),
               dtypes=FLOATING, error="digamma")


def _polygamma_error(d, n=1):  # (n is known where `polygamma` checks before dispatching)
    return not_implemented({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), d)


@defop("polygamma", "PolygammaBackward0", POINTWISE, "float", dtypes=FLOATING, error=_polygamma_error)
def _polygamma(a, n):
    out = np.empty_like(a)
    out[...] = special.polygamma(n, a)
    return out


@_polygamma.derivative_
def _(g, a, n):
    return g * polygamma(n + 1, a)


# ---- rounding ---------------------------------------------------------------------------------------


def _zero_grad(g, a, *params):
    return g * 0


def _int_identity(fn):
    return lambda a: like_array(a) if a.dtype.kind in "biu" else fn(a)


def _rounding_error(name):
    """floor / ceil / trunc: 'not supported for complex inputs', and the vml kernel's error for Bool."""
    return lambda d: NotImplementedError(f"{name} is not supported for complex inputs") if d.is_complex else \
        not_implemented(f"{name}_vml_cpu", d)


_floor = _op("floor", "FloorBackward0", _int_identity(np.floor), _zero_grad, "same", saves="none",
             dtypes=INTEGRAL | FLOATING, error=_rounding_error("floor"))
_ceil = _op("ceil", "CeilBackward0", _int_identity(np.ceil), _zero_grad, "same", saves="none",
            dtypes=INTEGRAL | FLOATING, error=_rounding_error("ceil"))
_trunc = _op("trunc", "TruncBackward0", _int_identity(np.trunc), _zero_grad, "same", saves="none",
             dtypes=INTEGRAL | FLOATING, error=_rounding_error("trunc"))
_round = _op("round", "RoundBackward0", _int_identity(np.rint), _zero_grad, "same", saves="none",
             dtypes=INTEGRAL | FLOATING, error="round_vml_cpu")
_frac = _op("frac", "FracBackward0", lambda a: a - np.trunc(a), lambda g, a: g, "same", saves="none",
            dtypes=FLOATING, error="frac_cpu")


@defop("round", "RoundBackward1", POINTWISE, "same", saves="none", dtypes=FLOATING, error="round_cpu",
       overload="decimals")
def _round_dec(a, decimals):
    wide = a.astype(np.float32) if a.dtype == np.float16 else a  # torch scales in float32 for Half
    scale = np.asarray(10.0 ** abs(decimals), wide.dtype)
    with np.errstate(all="ignore"):
        r = np.rint(wide * scale) / scale if decimals >= 0 else np.rint(wide / scale) * scale
    return r.astype(a.dtype, copy=False)


_round_dec.derivative_(_zero_grad)

# ---- sign-like -----------------------------------------------------------------------------------------

def _sgn_grad(g, a):
    """Zero for real inputs. For complex z, sgn(z) = z/|z| moves only along the circle: the gradient is g
    without its component along sgn(z), divided by |z| (and zero at z = 0)."""
    if not a.is_complex():
        return _zero_grad(g, a)
    s, mag = a.sgn(), a.abs()
    return ((g - s * (s.conj() * g).real) / mag).masked_fill(mag == 0, 0)


def _sgn_kernel(a):
    if a.dtype == np.bool_:
        return a.copy()
    r = np.asarray(np.sign(a))  # (a 0-d input gives a NumPy scalar)
    if r.dtype.kind == "f":  # (torch's real sgn is its sign: 0 for NaN, where NumPy's is NaN)
        r[r != r] = 0
    return r


_sgn = _op("sgn", "SgnBackward0", _sgn_kernel, _sgn_grad, "same", tags=("not_holomorphic",))


@defop("logit", "LogitBackward0", POINTWISE, "float", dtypes=FLOATING, error="logit_cpu")
def _logit(a, eps):
    if eps is not None:  # (torch's `x < lo ? lo : x > hi ? hi : x`: a NaN eps clamps nothing, np.clip gives NaN)
        a = np.where(a < eps, eps, np.where(a > 1 - eps, 1 - eps, a)).astype(a.dtype, copy=False)
    with np.errstate(all="ignore"):
        return np.log(a / (1 - a))


@_logit.derivative_
def _(g, a, eps):
    r = g / (a * (1 - a))
    if eps is None or eps < 0:  # (torch's logit_backward without a clamp: NaN outside [0, 1])
        return r.masked_fill((a < 0) | (a > 1), float("nan"))
    return r.masked_fill((a < eps) | (a > 1 - eps), 0.0)


def _nan_to_num_kernel(a, nan, posinf, neginf):
    if a.dtype.kind in "biu":
        return a.copy()
    if a.dtype.kind == "c":  # the real and imaginary parts each
        re, im = (_nan_to_num_kernel(p, nan, posinf, neginf) for p in (a.real, a.imag))
        return re + 1j * im
    out = np.where(np.isnan(a), np.asarray(nan, a.dtype), a)
    out = np.where(np.isposinf(a), np.asarray(posinf, a.dtype), out)
    return np.where(np.isneginf(a), np.asarray(neginf, a.dtype), out)


_nan_to_num = defop("nan_to_num", "NanToNumBackward0", POINTWISE, "same")(_nan_to_num_kernel)


@_nan_to_num.derivative_
def _(g, a, nan, posinf, neginf):
    return g * a.isfinite()


# ---- predicates (no gradients) ---------------------------------------------------------------------------


def _pred(name, fn, dtypes=None, error=None):
    op = defop(name, None, POINTWISE, dtypes=dtypes, error=error)(
        lambda a: fn(a) if a.dtype.kind in "fc" or a.dtype.kind == "V" else _int_pred(name, a))
    op.meta_(lambda a: unary_meta(a, _dtypes.bool))

    def public_fn(input, *, out=None):
        return finish_out(dispatch(op, (input,)), out) if out is not None else dispatch(op, (input,))
    public_fn.__name__ = name
    return method(name)(public_fn)


def _int_pred(name, a):
    if name == "signbit":
        return np.less(a, 0)
    return np.full_like(a, name in ("isfinite", "isreal"), dtype=np.bool_)


def _real(fn):
    return lambda a: fn(a.astype(np.float32) if a.dtype.kind == "V" else a)


isnan = _pred("isnan", _real(np.isnan))
isinf = _pred("isinf", _real(np.isinf))
isfinite = _pred("isfinite", _real(np.isfinite))
isposinf = _pred("isposinf", _real(np.isposinf), REAL,
                 lambda d, *args: RuntimeError("isposinf does not support complex inputs."))
isneginf = _pred("isneginf", _real(np.isneginf), REAL,
                 lambda d, *args: RuntimeError("isneginf does not support complex inputs."))
signbit = _pred("signbit", _real(np.signbit), REAL,
                lambda d, *args: NotImplementedError("signbit is not implemented for complex tensors."))
isreal = _pred("isreal", lambda a: np.isreal(a))


# ---- public functions -------------------------------------------------------------------------------------

exp2 = _unary("exp2", _exp2)
expm1 = _unary("expm1", _expm1)
log2 = _unary("log2", _log2)
log10 = _unary("log10", _log10)
log1p = _unary("log1p", _log1p)
rsqrt = _unary("rsqrt", _rsqrt)
reciprocal = _unary("reciprocal", _reciprocal)
sin = _unary("sin", _sin)
cos = _unary("cos", _cos)
tan = _unary("tan", _tan)
asin = _unary("asin", _asin, "arcsin")
acos = _unary("acos", _acos, "arccos")
atan = _unary("atan", _atan, "arctan")
sinh = _unary("sinh", _sinh)
cosh = _unary("cosh", _cosh)
asinh = _unary("asinh", _asinh, "arcsinh")
acosh = _unary("acosh", _acosh, "arccosh")
atanh = _unary("atanh", _atanh, "arctanh")
erf = _unary("erf", _erf)
erfc = _unary("erfc", _erfc)
erfinv = _unary("erfinv", _erfinv)
lgamma = _unary("lgamma", _lgamma)
digamma = _unary("digamma", _digamma)
floor = _unary("floor", _floor)
ceil = _unary("ceil", _ceil)
trunc = _unary("trunc", _trunc, "fix")
frac = _unary("frac", _frac)
sgn = _unary("sgn", _sgn)
for _a in ("arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "fix"):
    setattr(Tensor, _a + "_", getattr(Tensor, {"fix": "trunc"}.get(_a, _a.replace("arc", "a")) + "_"))


@method()
def polygamma(n: int, input, *, out=None):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return finish_out(digamma(input), out)
    try:
        if input.is_complex():  # the declared refusal, in the words of n's kernel
            require_op_dtype(_polygamma, input.dtype, (n,))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if n >= 2 and input.dtype.name in ("float16", "bfloat16"):
        # torch: (-1)^(n+1) exp(lgamma(n+1)) (float32) times zeta(n+1, x) rounded to the input's dtype
        sign = 1 if n % 2 else -1
        zeta = (dispatch(_polygamma, (input.float(),), (n,)) / (sign * math.factorial(n))).to(input.dtype)
        scale = sign * float(np.exp(np.float32(math.lgamma(n + 1))))
        return finish_out((zeta.float() * scale).to(input.dtype), out)
    return finish_out(dispatch(_polygamma, (input,), (n,)), out)


def _polygamma_method(self, n):
    return polygamma(n, self)


Tensor.polygamma = _polygamma_method
Tensor.polygamma_ = lambda self, n: self.copy_(polygamma(n, self))


@method()
def round(input, *, decimals: int = 0, out=None):  # noqa: A001 - torch's name
    if decimals == 0:
        return finish_out(dispatch(_round, (input,)), out)
    return finish_out(dispatch(_round_dec, (input,), (decimals,)), out)


def _round_(self, *, decimals=0):
    from .._dispatch import dispatch_inplace

    if decimals == 0:
        return dispatch_inplace(_round, self, (self,))
    return dispatch_inplace(_round_dec, self, (self,), (decimals,))


Tensor.round_ = _round_


@method()
def square(input, *, out=None):
    try:
        if input._data.dtype == np.bool_:
            return finish_out(input.to(_int64()).pow(2), out)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(input.pow(2), out)


Tensor.square_ = lambda self: self.pow_(2)


def _int64():
    from .. import int64

    return int64


@method()
def logit(input, eps=None, *, out=None):
    return finish_out(dispatch(_logit, (input,), (eps,)), out)


Tensor.logit_ = lambda self, eps=None: _inplace(_logit, self, (eps,))


def _nan_to_num_params(input, nan, posinf, neginf):
    try:
        if input._data.dtype.kind not in "fc" and input._data.dtype.kind != "V":
            return (0, 0, 0)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    info = _finfo(input._data.dtype)
    return (0.0 if nan is None else nan, float(info.max) if posinf is None else posinf,
            float(info.min) if neginf is None else neginf)


def _finfo(np_dtype):
    if np_dtype.name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.finfo(np_dtype)
    return np.finfo(np_dtype)


@method()
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return finish_out(dispatch(_nan_to_num, (input,), _nan_to_num_params(input, nan, posinf, neginf)), out)


Tensor.nan_to_num_ = lambda self, nan=0.0, posinf=None, neginf=None: _inplace(
    _nan_to_num, self, _nan_to_num_params(self, nan, posinf, neginf))


def _inplace(op, self, params):
    from .._dispatch import dispatch_inplace

    return dispatch_inplace(op, self, (self,), params)


@method()
def positive(input):
    try:
        if input._data.dtype == np.bool_:
            raise TypeError("The `+` operator, on a bool tensor is not supported.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return input


@method("deg2rad")
def deg2rad(input, *, out=None):
    return finish_out(input * (math.pi / 180), out)


@method("rad2deg")
def rad2deg(input, *, out=None):
    return finish_out(input * (180 / math.pi), out)


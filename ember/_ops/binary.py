"""Binary and ternary pointwise ops beyond the arithmetic core: floor_divide, remainder, fmod, float_power,
atan2, fmax/fmin, lerp, addcmul, addcdiv, hypot, copysign, xlogy, logaddexp(2), heaviside, shifts, and
the closeness tests isclose / allclose / equal.

Ops taking a Python scalar where torch has a separate overload with its own backward node
(`remainder(t, 2.)` is RemainderBackward0, `remainder(t, u)` RemainderBackward1) are two `defop`s on one
kernel; the scalar is an input (it takes part in dtype promotion) but never gets a gradient.
"""

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import (
    COMPLEX,
    FALLBACK,
    FLOATING,
    INTEGRAL,
    POINTWISE,
    REAL,
    _modes,
    defop,
    dispatch,
    dispatch_inplace,
    dtype_word,
)
from .._meta import no_meta_kernel, where_led_rule
from .._tensor import Tensor
from ..autograd.graph import refuse_composite
from ._util import finish_out, method, public, refuse_under_vmap
from .pointwise import where


def _pair(name, nodes, kernel, deriv, promote="same", save_output=False, dtypes=None, error=None):
    """(tensor-other op, scalar-other op) sharing `kernel`, `deriv` and accepted dtypes."""
    ops = []
    for node, overload in zip(nodes, ("Tensor", "Scalar") if len(nodes) > 1 else ("",)):
        op = defop(name, node, POINTWISE, promote, save_output=save_output, dtypes=dtypes,
                   error=error or f"{name}_cpu", overload=overload)(kernel)
        if deriv is not None:
            op.derivative_(deriv)
        ops.append(op)
    return ops


def _call(ops, input, other, out=None, params=()):
    op = ops[0] if isinstance(other, Tensor) or len(ops) == 1 else ops[1]
    return finish_out(dispatch(op, (input, other), params), out)


def _publish(name, ops, *aliases, params=lambda **kw: ()):
    def fn(input, other, *, out=None):
        return _call(ops, input, other, out)
    fn.__name__ = name
    method(name, *aliases)(fn)
    for a in aliases:
        public[a] = fn

    for n in (name,) + aliases:  # (one function per name: errors name the method called)
        fn_ = _inplace_fn(ops)
        fn_.__name__ = n + "_"
        fn_.__code__ = _renamed(fn_.__code__, n + "_")
        setattr(Tensor, n + "_", fn_)
    return fn


def _renamed(code, name):
    """`code` under `name` (3.11+'s co_qualname too): errors and the parser replay name the function."""
    return code.replace(co_name=name, **({"co_qualname": name} if hasattr(code, "co_qualname") else {}))


def _inplace_fn(ops):
    def fn_(self, other):
        op = ops[0] if isinstance(other, Tensor) or len(ops) == 1 else ops[1]
        return dispatch_inplace(op, self, (self, other))
    return fn_


def _int_zero_check(a, b):
    if np.asarray(a).dtype.kind in "iub" and np.asarray(b).dtype.kind in "iub" and np.any(np.asarray(b) == 0) \
            and np.broadcast(a, b).size:  # (an empty result divides nothing)
        raise RuntimeError("ZeroDivisionError")


# ---- division remainders -------------------------------------------------------------------------------


def _remainder_kernel(a, b):
    _int_zero_check(a, b)
    with np.errstate(all="ignore"):
        return np.remainder(a, b)


def _fmod_kernel(a, b):
    _int_zero_check(a, b)
    with np.errstate(all="ignore"):
        return np.fmod(a, b)


_remainder = _pair("remainder", ("RemainderBackward1", "RemainderBackward0"), _remainder_kernel,
                   lambda g, a, b: (g, -g * a.div(b, rounding_mode="floor") if isinstance(b, Tensor) else None),
                   dtypes=INTEGRAL | FLOATING)
_fmod = _pair("fmod", ("FmodBackward1", "FmodBackward0"), _fmod_kernel,
              lambda g, a, b: (g, -g * (a / b).trunc() if isinstance(b, Tensor) else None),
              dtypes=INTEGRAL | FLOATING)
remainder = _publish("remainder", _remainder)
fmod = _publish("fmod", _fmod)


@method()
def floor_divide(input, other, *, out=None):
    from .pointwise import div

    if _modes:  # NOTE [ Ops torch's forward AD refuses ]
        from ..autograd._jvp import check_composite
        check_composite("floor_divide", input, other)

    r = div(input, other, rounding_mode="floor", out=out)
    return refuse_composite("floor_divide", r, input, other)  # NOTE [ What torch's autograd refuses ]


Tensor.floor_divide_ = lambda self, other: self.copy_(floor_divide(self, other))
Tensor.__mod__ = lambda self, other: remainder(self, other)
Tensor.__rmod__ = lambda self, other: dispatch(_remainder[0], (other, self))
Tensor.__imod__ = Tensor.remainder_


@method()
def float_power(input, exponent, *, out=None):
    if not isinstance(input, Tensor):
        base = float(input) if not isinstance(input, complex) else input
        return finish_out(base ** exponent.to(_wide(exponent)), out)
    wide = _wide(input, exponent)
    e = exponent.to(wide) if isinstance(exponent, Tensor) else exponent
    return finish_out(input.to(wide).pow(e), out)


def _wide(*xs):
    cplx = any((isinstance(x, Tensor) and x.is_complex()) or isinstance(x, complex) for x in xs)
    return _dtypes.complex128 if cplx else _dtypes.float64


def _float_power_(self, exponent):
    if self.dtype != _wide(self, exponent):
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype.name.capitalize()} but the "
                           f"operation's result requires dtype {_wide(self, exponent).name.capitalize()}")
    return self.pow_(exponent.to(self.dtype) if isinstance(exponent, Tensor) else exponent)


Tensor.float_power_ = _float_power_

# ---- two-argument math ---------------------------------------------------------------------------------


def _quiet(fn):
    def kernel(a, b):
        with np.errstate(all="ignore"):
            return fn(a, b)
    return kernel


_atan2 = _pair("atan2", ("Atan2Backward0",), _quiet(np.arctan2),
               lambda g, a, b: (g * b / (a * a + b * b), g * -a / (a * a + b * b)), "float", dtypes=FLOATING)
atan2 = _publish("atan2", _atan2, "arctan2")

_hypot = _pair("hypot", ("HypotBackward0",), np.hypot,
               lambda g, a, b, *, out: (g * a / out, g * b / out), "same", save_output=True, dtypes=FLOATING)
hypot = _publish("hypot", _hypot)

def _logaddexp_kernel(a, b):
    """log(exp(a) + exp(b)); complex as torch: the larger real part plus log1p(exp(smaller - larger))."""
    if np.result_type(a, b).kind != "c":
        return np.logaddexp(a, b)
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    hi = np.where(a.real >= b.real, a, b)
    lo = np.where(a.real >= b.real, b, a)
    same_inf = np.isinf(lo.real) & (lo.real == hi.real)
    return np.where(same_inf & (lo.real < 0), lo, np.log1p(np.exp(lo - hi)) + hi)


_logaddexp = _pair("logaddexp", ("LogaddexpBackward0",), _quiet(_logaddexp_kernel),
                   lambda g, a, b: (g / ((b - a).exp() + 1), g / ((a - b).exp() + 1)), "same",
                   dtypes=FLOATING | COMPLEX)
logaddexp = _publish("logaddexp", _logaddexp)

_logaddexp2 = _pair("logaddexp2", ("Logaddexp2Backward0",), _quiet(np.logaddexp2),
                    lambda g, a, b: (g / ((b - a).exp2() + 1), g / ((a - b).exp2() + 1)), "same",
                    dtypes=FLOATING)
logaddexp2 = _publish("logaddexp2", _logaddexp2)


def _fmax_grads(g, a, b):
    pick_a = (a >= b) | b.isnan()
    return g.masked_fill(~pick_a, 0.0), g.masked_fill(pick_a, 0.0)


def _fmin_grads(g, a, b):
    pick_a = (a <= b) | b.isnan()
    return g.masked_fill(~pick_a, 0.0), g.masked_fill(pick_a, 0.0)


def _complex_error(name):
    return lambda d: RuntimeError(f"{name} not implemented for complex tensors.")


_fmax = _pair("fmax", ("FmaxBackward0",), np.fmax, _fmax_grads, dtypes=REAL, error=_complex_error("fmax"))
_fmin = _pair("fmin", ("FminBackward0",), np.fmin, _fmin_grads, dtypes=REAL, error=_complex_error("fmin"))
fmax = _publish("fmax", _fmax)
fmin = _publish("fmin", _fmin)


def _copysign_grads(g, a, b, *, out):
    ratio = where(a == 0, 0.0, out / a)
    return g * ratio, (g * 0 if isinstance(b, Tensor) else None)


_copysign = _pair("copysign", ("CopysignBackward0", "CopysignBackward1"), np.copysign, _copysign_grads,
                  "float", save_output=True, dtypes=FLOATING)
_copysign[0].meta = where_led_rule("float")  # copysign.Tensor (NOTE [ Meta strides of decomposed ops ])
copysign = _publish("copysign", _copysign)


def _xlogy_kernel(x, y):
    with np.errstate(all="ignore"):
        r = np.multiply(x, np.log(y))
        return np.where((np.asarray(x) == 0) & ~np.isnan(y), np.zeros((), r.dtype), r)


def _xlogy_grads(g, x, y):
    gx = gy = None
    if isinstance(x, Tensor):
        gx = (g * y.log()).masked_fill((x == 0) & (y <= 0), 0.0) if isinstance(y, Tensor) else \
            g * float(np.log(y)) if y > 0 else g * 0
    if isinstance(y, Tensor):
        gy = g * x / y
    return gx, gy


_xlogy = [defop("xlogy", n, POINTWISE, "float", dtypes=FLOATING, error="xlogy_cpu", overload=o)(_xlogy_kernel)
          for n, o in (("XlogyBackward0", "Tensor"), ("XlogyBackward1", "Scalar_Self"),
                       ("XlogyBackward2", "Scalar_Other"))]
for _o in _xlogy:
    _o.derivative_(_xlogy_grads)


@method()
def xlogy(input, other, *, out=None):
    op = _xlogy[0] if isinstance(input, Tensor) and isinstance(other, Tensor) else \
        _xlogy[1] if isinstance(other, Tensor) else _xlogy[2]
    return finish_out(dispatch(op, (input, other)), out)


Tensor.xlogy_ = lambda self, other: dispatch_inplace(_xlogy[0] if isinstance(other, Tensor) else _xlogy[2],
                                                      self, (self, other))


@defop("heaviside", None, POINTWISE, "same", dtypes=REAL,
       error=lambda d: RuntimeError("heaviside is not yet implemented for complex tensors."))
def _heaviside(a, b):
    return np.heaviside(a, b).astype(np.result_type(a, b), copy=False)


_heaviside.refuses_(FALLBACK, "heaviside")  # NOTE [ What torch's autograd refuses ] in ember/autograd/graph.py


@method()
def heaviside(input, values, *, out=None):
    try:
        if input.dtype != values.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(dispatch(_heaviside, (input, values)), out)


Tensor.heaviside_ = lambda self, values: dispatch_inplace(_heaviside, self, (self, values))

# ---- ternary: lerp, addcmul, addcdiv -----------------------------------------------------------------


def _lerp_kernel(a, b, w):
    d = np.subtract(b, a)
    try:
        return np.where(np.abs(w) < 0.5, a + w * d, b - d * (1 - np.asarray(w))).astype(np.result_type(a, b),
                                                                                      copy=False)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


@defop("lerp", "LerpBackward0", POINTWISE, "same", saves="none", dtypes=FLOATING | COMPLEX,
       error="lerp_kernel_scalar", overload="Scalar")
def _lerp_s(a, b, w):
    return _lerp_kernel(a, b, w)


@_lerp_s.derivative_
def _(g, a, b, w):
    return g * (1 - w), g * w


@defop("lerp", "LerpBackward1", POINTWISE, "same", dtypes=FLOATING | COMPLEX, error="lerp_kernel_tensor",
       overload="Tensor")
def _lerp_t(a, b, w):
    return _lerp_kernel(a, b, w)


@_lerp_t.derivative_
def _(g, a, b, w):
    return g * (1 - w), g * w, g * (b - a)


def _lerp_args(input, end, weight):
    check_lerp_dtypes(input, end, weight)
    if isinstance(weight, Tensor):
        return _lerp_t, (input, end, weight), ()
    return _lerp_s, (input, end), (weight,)


def check_lerp_dtypes(input, end, weight):
    """torch's lerp refuses an `end` (or tensor `weight`) of another dtype than the input's."""
    cpp = _dtypes.CPP_NAME  # (torch's message names the C++ types: "expected dtype double for `end` ...")
    try:
        if input.dtype != end.dtype:
            raise RuntimeError(f"expected dtype {cpp[input.dtype.name]} for `end` but got dtype {cpp[end.dtype.name]}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if isinstance(weight, Tensor):
        if weight.dtype != input.dtype:
            raise RuntimeError(f"expected dtype {cpp[input.dtype.name]} for `weight` but got dtype "
                               f"{cpp[weight.dtype.name]}")


@method()
def lerp(input, end, weight, *, out=None):
    op, inputs, params = _lerp_args(input, end, weight)
    return finish_out(dispatch(op, inputs, params), out)


def _lerp_(self, end, weight):
    op, inputs, params = _lerp_args(self, end, weight)
    return dispatch_inplace(op, self, inputs, params)


Tensor.lerp_ = _lerp_


@defop("addcmul", "AddcmulBackward0", POINTWISE, "same", dtypes=INTEGRAL | FLOATING | COMPLEX,
       error="addcmul_cpu_out")
def _addcmul(a, t1, t2, value):
    if a.dtype.kind in "iu":
        value = int(value)  # torch casts the scalar to the integer dtype (0.5 -> 0)
    try:
        if _half(a):  # NOTE [ addcmul and addcdiv as torch's kernels ]
            return (a.astype(np.float32) + np.float32(value) * t1.astype(np.float32) * t2).astype(a.dtype)
        return a + value * t1 * t2 if value != 1 else a + t1 * t2
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


# NOTE [ addcmul and addcdiv as torch's kernels ]
# torch's CPU kernels compute `self + value * t1 * t2` and `self + value * t1 / t2` left to right (the scalar
# multiplies t1 first: value * t1 * t2 stays finite where t1 * t2 overflows), and for float16/bfloat16 in
# float, rounding once (NOTE [ Half-precision optimizer arithmetic ] in optim.py). The derivatives are
# derivatives.yaml's: tensor1's is grad * (tensor2 * value) and grad * (value / tensor2), computed in the
# inputs' own dtypes before the grad's; ATen's `Scalar / Tensor` is `reciprocal(tensor) * scalar`, so a
# float16 tensor2 rounds its reciprocal to float16 first.
def _half(a):
    d = a.dtype  # (float16 or bfloat16, whose NumPy kind is "V")
    return d.itemsize == 2 and d.kind in "fV"


@_addcmul.derivative_
def _(g, a, t1, t2, value):
    return g, g * (t2 * value), g * (t1 * value)


@defop("addcdiv", "AddcdivBackward0", POINTWISE, "same")
def _addcdiv(a, t1, t2, value):
    with np.errstate(all="ignore"):
        if _half(a):  # NOTE [ addcmul and addcdiv as torch's kernels ]
            return (a.astype(np.float32) + np.float32(value) * t1.astype(np.float32) / t2).astype(a.dtype)
        return a + value * t1 / t2


def check_addcdiv(t1, t2):
    """torch's refusal of integer division in addcdiv, on tensor1's and tensor2's own dtypes (before they
    promote with input's: a float input does not make it allowed). Checked before dispatch, so meta
    inputs and the foreach form get it too."""
    if not (_floating_or_complex(t1) or _floating_or_complex(t2)):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release "
                           "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                           "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                           "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                           "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")


def _floating_or_complex(t):
    return t.dtype.is_floating_point or t.dtype.is_complex if isinstance(t, Tensor) else isinstance(t, (float, complex))


@_addcdiv.derivative_
def _(g, a, t1, t2, value):
    return g, g * (t2.reciprocal() * value), -g * (t1 * value / (t2 * t2))


@method()
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    return finish_out(dispatch(_addcmul, (input, tensor1, tensor2), (value,)), out)


@method()
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    check_addcdiv(tensor1, tensor2)
    return finish_out(dispatch(_addcdiv, (input, tensor1, tensor2), (value,)), out)


Tensor.addcmul_ = lambda self, tensor1, tensor2, *, value=1: dispatch_inplace(
    _addcmul, self, (self, tensor1, tensor2), (value,))


def _addcdiv_(self, tensor1, tensor2, *, value=1):
    t1, t2 = tensor1, tensor2
    check_addcdiv(t1, t2)
    return dispatch_inplace(_addcdiv, self, (self, t1, t2), (value,))


Tensor.addcdiv_ = _addcdiv_

# ---- shifts -----------------------------------------------------------------------------------------


def _shift(name, ufunc, word):
    def kernel(a, b):
        a, b = np.asarray(a), np.asarray(b)
        bits = a.dtype.itemsize * 8
        big = (b >= bits) | (b < 0)
        r = ufunc(a, np.where(big, 0, b).astype(a.dtype, copy=False))
        fill = np.where(a < 0, -1, 0).astype(a.dtype) if name == "right" else np.zeros((), a.dtype)
        return np.where(big, fill, r).astype(a.dtype, copy=False)
    return defop(f"bitwise_{name}_shift", None, POINTWISE, "same", dtypes=INTEGRAL,
                 error=f"{word}_cpu")(kernel)


_lshift = _shift("left", np.left_shift, "lshift")
_rshift = _shift("right", np.right_shift, "rshift")
bitwise_left_shift = _publish("bitwise_left_shift", [_lshift])
bitwise_right_shift = _publish("bitwise_right_shift", [_rshift])
Tensor.__lshift__ = lambda self, other: dispatch(_lshift, (self, other))
Tensor.__rshift__ = lambda self, other: dispatch(_rshift, (self, other))
Tensor.__rlshift__ = lambda self, other: dispatch(_lshift, (other, self))
Tensor.__rrshift__ = lambda self, other: dispatch(_rshift, (other, self))
Tensor.__ilshift__ = Tensor.bitwise_left_shift_
Tensor.__irshift__ = Tensor.bitwise_right_shift_

# ---- closeness ----------------------------------------------------------------------------------------


@method()
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    try:
        if input.dtype != other.dtype:
            raise RuntimeError(f"{dtype_word(input.dtype)} did not match {dtype_word(other.dtype)}")
        if rtol < 0:
            raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return dispatch(_isclose, (input, other), (rtol, atol, equal_nan))


# (promote "bool": the inputs share a dtype, and the result is bool, laid out as `input == other` is)
@defop("isclose", None, POINTWISE, "bool")
def _isclose(a, b, rtol, atol, equal_nan):
    if a.dtype.kind == "V":
        a, b = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        r = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan) if a.dtype.kind in "fc" else \
            np.abs(a.astype(np.float64) - b) <= atol + rtol * np.abs(b.astype(np.float64))
    return np.asarray(r)


@method()
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if _modes:  # (V) refused by torch's vmap by name
        refuse_under_vmap("allclose", (input, other), "function")
    return isclose(input, other, rtol, atol, equal_nan).all().item()


@method()
def equal(input, other):
    if _modes:  # (V) a Python bool: torch's vmap has no fallback for it
        refuse_under_vmap("equal", (input, other), "no_fallback")
    return dispatch(_equal, (input, other)).item()


@defop("equal", None)  # (a Python bool in torch: a 0-d bool tensor here, which `equal` unwraps)
def _equal(a, b):
    return np.asarray(a.shape == b.shape and bool(np.array_equal(a, b)))


@_equal.meta_
def _(a, b):
    raise no_meta_kernel("equal")  # (whether they are equal is data)

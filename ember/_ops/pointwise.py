"""Pointwise ops: arithmetic, comparisons, unary math, clamp, where; the Tensor operator protocol.

Each op is a NumPy kernel declared with `defop` plus its derivative in ember ops (so it differentiates
again for higher-order gradients). Broadcasting in the derivatives is undone by the engine
(`fit_grads`), so formulas are written as if shapes matched.
"""

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import (
    BOOL,
    FLOATING,
    INTEGRAL,
    NUMERIC,
    POINTWISE,
    REAL,
    _modes,
    _run,
    defop,
    dispatch,
    not_implemented,
)
from .._dtypes import to_numpy as _to_numpy
from .._meta import like_array, like_strides, meta_array, unary_meta, where_led_rule
from .._native import ops as _native
from .._tensor import Tensor
from ..autograd.graph import needs_grad
from ._util import c_contiguous, checked_scalar, finish_out, inplace_method, method, public

_ONES = {}


def _one(dtype):
    """A 0-d array holding 1 of `dtype`: NumPy takes it as an operand twice as fast as the Python number
    (whose weak-scalar promotion is the slow part), and the result is the same."""
    one = _ONES.get(dtype)
    if one is None:
        one = _ONES[dtype] = np.ones((), dtype)
    return one


# ---- binary arithmetic --------------------------------------------------------------------------------


@defop("add", "AddBackward0", POINTWISE, "same", saves="none", tags=("scalar_edge",))
def _add(a, b, alpha=1):
    if alpha == 1:
        return np.add(a, b)
    if a.dtype == np.bool_:  # torch's bool alpha is a bool: b * 2 stays a mask
        return np.logical_or(a, np.logical_and(b, bool(alpha)))
    return np.add(a, np.multiply(b, alpha))


@_add.derivative_
def _(g, a, b, alpha=1):
    return g, (g if alpha == 1 else g * alpha)


def _sub_error(d, *inputs):
    if all(isinstance(t, Tensor) and t._data.dtype == np.bool_ for t in inputs):
        return RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                            "Use the `^` or `logical_xor()` operator instead.")
    return RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                        "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


@defop("sub", "SubBackward0", POINTWISE, "same", saves="none", dtypes=NUMERIC, error=_sub_error,
       check="inputs",
       tags=("scalar_edge",))
def _sub(a, b, alpha=1):
    return np.subtract(a, b) if alpha == 1 else np.subtract(a, np.multiply(b, alpha))


@_sub.derivative_
def _(g, a, b, alpha=1):
    if not needs_grad(1):
        return g, None
    return g, (-g if alpha == 1 else g * -alpha)


@defop("rsub", "RsubBackward1", POINTWISE, "same", saves="none", dtypes=NUMERIC, error=_sub_error,
       check="inputs")
def _rsub(a, b, alpha=1):
    return np.subtract(b, a) if alpha == 1 else np.subtract(b, np.multiply(a, alpha))


@_rsub.derivative_
def _(g, a, b, alpha=1):
    if not needs_grad(0):
        return None, g
    return (-g if alpha == 1 else g * -alpha), g


# A kernel that is a NumPy ufunc as it is is declared as one: the dispatcher then calls it with no
# Python frame between (mul and tanh are among the most frequent ops there are).
_mul = defop("mul", "MulBackward0", POINTWISE, "same", tags=("scalar_edge",))(np.multiply)


@_mul.derivative_
def _(g, a, b):
    return (g * b if needs_grad(0) else None), (g * a if needs_grad(1) else None)


@defop("div", "DivBackward0", POINTWISE, "float", overload="Tensor", tags=("scalar_edge",))
def _div(a, b):
    return np.true_divide(a, b)


@_div.derivative_
def _(g, a, b):
    return (g / b if needs_grad(0) else None), (-g * a / (b * b) if needs_grad(1) else None)


@defop("pow", "PowBackward0", POINTWISE, "same", dtypes=NUMERIC, error="pow", overload="Tensor_Scalar")
def _pow_scalar(a, e):
    if a.dtype.kind in "iu" and isinstance(e, int) and e < 0 and a.size:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if a.dtype in _POW_DTYPES and type(e) is not bool:
        fast = _POW_FAST.get(e)
        if fast is not None:
            return fast(a)
        if a.dtype == _F32 and isinstance(e, (int, float)):
            return _pow_f32(a, e)
    return np.power(a, e)


_F32 = np.dtype(np.float32)


def _pow_f32(a, e):
    """float32 a ** e for the exponents torch's kernel does not special-case (NOTE [ General powers ])."""
    if float(e).is_integer() and abs(e) < (1 << 62):
        done = _native.pow_int(a, int(e))
        if done is not None:
            return done
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # (inf and nan are pow's answers)
        return np.power(a.astype(np.float64), float(e)).astype(np.float32)


# NOTE [ Cheap powers ]
# torch's pow kernel (pow_tensor_scalar_optimized_kernel) multiplies for the exponents 2, 3 and -2, and takes
# sqrt, rsqrt and reciprocal for 0.5, -0.5 and -1, for float and double; NumPy's general power is several
# times slower and rounds differently (x ** 3 in float32 differs from x * x * x in ~1 element in 10).
# These exponents take torch's formulas, which give its results to the bit; other exponents (4, 5, -3, ...)
# go through torch's general pow, and through NumPy's here.
_POW_DTYPES = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


def _cube(a):
    if a.size >= _native.MIN_SIZE:
        done = _native.cube(a)  # (one pass, the same two roundings)
        if done is not None:
            return done
    out = np.multiply(a, a)
    if not a.ndim:  # (a 0-d product is a NumPy scalar, which has no memory to write into)
        return out * a
    out *= a  # ((a a) a, in place: one temporary fewer)
    return out


def _inv_square(a):
    out = np.multiply(a, a)
    return np.reciprocal(out, out=out) if a.ndim else np.reciprocal(out)


def _rsqrt(a):
    out = np.sqrt(a)
    return np.reciprocal(out, out=out) if a.ndim else np.reciprocal(out)


_POW_FAST = {2: np.square, 3: _cube, -2: _inv_square, 0.5: np.sqrt, -0.5: _rsqrt, -1: np.reciprocal}

# NOTE [ General powers ]
# For the other exponents torch's float32 kernel calls Sleef's vectorised powf (within 1 ulp) on whole
# vectors and libm's powf on the elements left over (a tensor shorter than a vector, the tail of a longer
# one). libm's is correctly rounded, and so is pow in double rounded to float32, which is what ember computes
# (measured: equal to torch's scalar results on all of 84,000 values, subnormal, huge and special ones
# included, for 4, 5, 7, 10, 13, 64, -3, -4, -5, -64, 2.5, 1.5, 0.25, 1/3, -1.5); on the vector part 1-2% of
# torch's results are then 1 ulp from ember's (Sleef's rounding, which ember does not reproduce), where
# NumPy's float32 power (SVML on AVX-512) differed in 11-21% and took 50-90 ms per million negative bases
# with an integral exponent. Integral exponents of large C-contiguous tensors take the native kernel
# (ember/_native/pow.c: repeated squaring in double, ~0.5 ms per million); the rest NumPy's float64 power.
# The exponent stays a double, as in torch's scalar loop (`std::pow(float, double)`); torch's vector loop
# rounds it to float32 first, so for an exponent float32 cannot hold (1/3, 0.1) ~12% of a large tensor's
# elements differ from torch's by an ulp, against NumPy's 21%.


@_pow_scalar.derivative_
def _(g, a, e):  # the exponent is an input (it takes part in dtype promotion) but a plain number
    if e == 0:
        return g * 0, None
    return g * e * a ** (e - 1), None


@defop("pow", "PowBackward1", POINTWISE, "same", save_output=True, dtypes=NUMERIC, error="pow",
       overload="Tensor_Tensor")
def _pow(a, b):
    return _power(a, b)


def _power(a, b):
    """np.power(a, b), with torch's integer power of a negative exponent tensor (only a Python number exponent
    is refused): 1 for base 1, +-1 for base -1, else 0 (NumPy refuses with a ValueError)."""
    if np.asarray(a).dtype.kind in "iu" and b.dtype.kind in "iu" and (np.asarray(b) < 0).any():
        neg = b < 0
        r = np.power(a, np.where(neg, 0, b))
        odd = (b % 2) != 0
        return np.where(neg, np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)), r).astype(r.dtype)
    return np.power(a, b)


@_pow.derivative_
def _(g, a, b, *, out):
    ga = g * b * a ** (b - 1)
    gb = g * where((a == 0) & (b >= 0), 0.0, out * a.log())
    return ga, gb


@defop("pow", "PowBackward2", POINTWISE, "same", save_output=True, dtypes=NUMERIC, error="pow",
       overload="Scalar")
def _rpow(b, a):
    return c_contiguous(_power(a, b))  # (torch's pow.Scalar allocates its output contiguous)


_rpow.own_layout = True


@_rpow.derivative_
def _(g, b, a, *, out):
    return g * out * float(np.log(a)), None


def _complex_error(name):
    return lambda d, *inputs: RuntimeError(f"{name} not implemented for complex tensors.")


@defop("maximum", "MaximumBackward0", POINTWISE, "same", dtypes=REAL, error=_complex_error("maximum"))
def _maximum(a, b):
    return np.maximum(a, b)


# NOTE [ Gradients at NaN and ties ]
# torch's formulas (derivatives.yaml) zero a gradient where a comparison holds, not keep it where one holds:
# maximum's self gets `where(self == other, grad / 2, grad).masked_fill_(self < other, 0)`. Every comparison
# with NaN is false, so at a NaN both inputs get the whole gradient; the same reading holds for hardtanh's
# (relu6's) backward, which zeroes outside the open interval, and for max()/min(), which give a NaN result's
# gradient to the NaN elements (evenly_distribute_backward).
@_maximum.derivative_
def _(g, a, b):
    half = g / 2
    return where(a < b, 0.0, where(a == b, half, g)), where(a > b, 0.0, where(a == b, half, g))


@defop("minimum", "MinimumBackward0", POINTWISE, "same", dtypes=REAL, error=_complex_error("minimum"))
def _minimum(a, b):
    return np.minimum(a, b)


@_minimum.derivative_
def _(g, a, b):  # NOTE [ Gradients at NaN and ties ]
    half = g / 2
    return where(a > b, 0.0, where(a == b, half, g)), where(a < b, 0.0, where(a == b, half, g))


# ---- unary math --------------------------------------------------------------------------------------


@defop("neg", "NegBackward0", POINTWISE, "same", saves="none")
def _neg(a):
    if a.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return np.negative(a)


@_neg.derivative_
def _(g, a):
    return -g


@defop("abs", "AbsBackward0", POINTWISE, "same", dtypes=NUMERIC, error="abs_cpu")
def _abs(a):
    return np.abs(a)


@_abs.derivative_
def _(g, a):
    return g * a.sgn()


# conj: ember keeps no lazy conjugate bit (torch's conj() is a view with one); the conjugate is computed
# at once, so is_conj() is always False and resolve_conj() has nothing to resolve.
_conj = defop("conj", "ConjBackward0", POINTWISE, saves="none", tags=("not_holomorphic",))(np.conj)
_conj_physical = defop("conj_physical", "ConjPhysicalBackward0", POINTWISE, saves="none",
                       tags=("not_holomorphic",))(np.conj)
_conj.derivative_(lambda g, a: g.conj())
_conj_physical.derivative_(lambda g, a: g.conj_physical())
_conj.meta_(unary_meta)
_conj_physical.meta_(unary_meta)


@method()
def conj(input):
    try:
        return dispatch(_conj, (input,)) if input._data.dtype.kind == "c" else input
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


@method()
def conj_physical(input, *, out=None):
    try:
        if input._data.dtype.kind != "c":
            return finish_out(input.clone() if out is None else input, out)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(dispatch(_conj_physical, (input,)), out)


@method()
def resolve_conj(input):
    return input


@method()
def is_conj(input):
    return False


@defop("sign", "SignBackward0", POINTWISE, "same", saves="none", dtypes=REAL,
       error=lambda d: NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                           "numbers. Please use torch.sgn instead."))
def _sign(a):
    if a.dtype == np.bool_:
        return a.copy()
    r = np.asarray(np.sign(a))  # (a 0-d input gives a NumPy scalar)
    if r.dtype.kind == "f":  # torch's sign is (0 < a) - (a < 0): 0 for NaN, where NumPy's is NaN
        r[r != r] = 0
    return r


@_sign.derivative_
def _(g, a):
    return g * 0


@defop("exp", "ExpBackward0", POINTWISE, "float", saves="none", save_output=True)
def _exp(a):
    return np.exp(a)


@_exp.derivative_
def _(g, a, *, out):
    return g * out


@defop("log", "LogBackward0", POINTWISE, "float")
def _log(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(a)


@_log.derivative_
def _(g, a):
    return g / a


@defop("sqrt", "SqrtBackward0", POINTWISE, "float", saves="none", save_output=True)
def _sqrt(a):
    with np.errstate(invalid="ignore"):
        return np.sqrt(a)


@_sqrt.derivative_
def _(g, a, *, out):
    return g / (2 * out)


def clamp_complex_error():
    """torch's refusal of complex tensors by the clamp family's kernels (relu, hardtanh and clamp share it)."""
    return NotImplementedError("clamp is not supported for complex types")


def _relu_error(d):
    if d.name == "bool":
        return RuntimeError("Boolean inputs not supported for relu")
    return clamp_complex_error()


@defop("relu", "ReluBackward0", POINTWISE, "same", saves="none", save_output=True, dtypes=INTEGRAL | FLOATING,
       error=_relu_error)
def _relu(a):
    # torch's relu is clamp_min(a, 0): a NaN stays NaN and -0.0 stays -0.0 (np.maximum(a, 0) would give +0.0;
    # np.maximum(0, a) returns its second argument on a tie, as torch's vectorised max does)
    if a.size >= _native.MIN_SIZE:
        done = _native.clamp(a, 0, None)  # (one pass, and threads: ~3x NumPy's maximum at one thread)
        if done is not None:
            return done
    return np.maximum(0, a).astype(a.dtype, copy=False)


@_relu.derivative_
def _(g, a, *, out):
    return dispatch(_threshold_backward, (g, out))


# NOTE [ Backward primitives ]
# The gradients of relu, sigmoid and tanh are single ops (as in torch: threshold_backward,
# sigmoid_backward, tanh_backward) rather than 2-3 pointwise ops each: one dispatch in the backward pass,
# and, differentiated again, torch's `...BackwardBackward0` nodes.

@defop("threshold_backward", "ThresholdBackwardBackward0", POINTWISE, "same", saves="all")
def _threshold_backward(g, out):
    # torch's `out <= 0 ? 0 : g` (a NaN output passes g). np.where on a random mask mispredicts a branch
    # per element (~10x slower); clearing g's bits with an all-ones/zero integer mask is branch-free.
    if out.size >= _native.MIN_SIZE:
        done = _native.threshold_backward(g, out)
        if done is not None:
            return done
    drop = np.less_equal(out, 0)
    if g.dtype.kind == "c" or g.dtype.itemsize not in (1, 2, 4, 8) or g.shape != drop.shape or not g.ndim:
        return np.where(drop, 0, g).astype(g.dtype, copy=False)
    bits = np.dtype(f"i{g.dtype.itemsize}")
    keep = drop.astype(bits)
    keep -= 1  # 1 -> 0 (dropped), 0 -> -1 (all bits set: g kept)
    np.bitwise_and(keep, g.view(bits), out=keep)
    return keep.view(g.dtype)


@_threshold_backward.derivative_
def _(gg, g, out):  # torch's formula gives `out` zeros (a gradient, not None)
    return dispatch(_threshold_backward, (gg, out)), (out.new_zeros(out.shape) if needs_grad(1) else None)


@defop("sigmoid", "SigmoidBackward0", POINTWISE, "float", saves="none", save_output=True)
def _sigmoid(a):
    if a.dtype.kind == "c":
        with np.errstate(all="ignore"):
            return 1 / (1 + np.exp(-a))
    # exp of -|a| never overflows; both branches of the classic formula in one expression
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(e.dtype, copy=False)


@_sigmoid.derivative_
def _(g, a, *, out):
    return dispatch(_sigmoid_backward, (g, out))


@defop("sigmoid_backward", "SigmoidBackwardBackward0", POINTWISE, "same")
def _sigmoid_backward(g, out):
    return g * (out * (_one(out.dtype) - out))


@_sigmoid_backward.derivative_
def _(gg, g, out):
    return dispatch(_sigmoid_backward, (gg, out)), (gg * g * (1 - 2 * out) if needs_grad(1) else None)


_tanh = defop("tanh", "TanhBackward0", POINTWISE, "float", saves="none", save_output=True)(np.tanh)


@_tanh.derivative_
def _(g, a, *, out):
    return dispatch(_tanh_backward, (g, out))


@defop("tanh_backward", "TanhBackwardBackward0", POINTWISE, "same")
def _tanh_backward(g, out):
    return g * (_one(out.dtype) - out * out)


@_tanh_backward.derivative_
def _(gg, g, out):
    return dispatch(_tanh_backward, (gg, out)), (gg * g * (-2 * out) if needs_grad(1) else None)


def _clamp_error(d):
    if d.name == "bool":  # (the tensor-bounds kernel; the scalar one takes bool)
        return not_implemented("clamp_cpu", d)
    return clamp_complex_error()


@defop("clamp", "ClampBackward1", POINTWISE, "same", dtypes=REAL, error=_clamp_error, overload="Tensor")
def _clamp(a, lo, hi):
    if a.size >= _native.MIN_SIZE:
        done = _native.clamp(a, lo, hi)  # (one pass; NumPy's semantics: NaN kept, lo > hi gives hi)
        if done is not None:
            return done
    if lo is not None and hi is not None:
        return np.minimum(np.maximum(a, lo), hi).astype(a.dtype, copy=False)
    if lo is not None:
        return np.maximum(a, lo).astype(a.dtype, copy=False)
    return np.minimum(a, hi).astype(a.dtype, copy=False)


@_clamp.derivative_
def _(g, a, lo, hi):
    keep = a == a  # True except at nan
    if lo is not None:
        keep = keep & (a >= lo)
    if hi is not None:
        keep = keep & (a <= hi)
    return g * keep


@defop("clamp", "ClampBackward0", POINTWISE, "same", dtypes=INTEGRAL | FLOATING, error=_clamp_error)
def _clamp_t(a, lo, hi):
    out = a
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    return out


@_clamp_t.derivative_
def _(g, a, lo, hi):
    keep = a == a
    glo = ghi = None
    if lo is not None:  # the gradient goes to whichever of a, lo, hi the result took its value from
        keep = keep & (a >= lo)
        glo = where((a < lo) & (lo <= hi), g, 0.0) if hi is not None else where(a < lo, g, 0.0)
    if hi is not None:
        keep = keep & (a <= hi)
        ghi = where((a > hi) | (lo > hi), g, 0.0) if lo is not None else where(a > hi, g, 0.0)
    return g * keep, glo, ghi


@defop("where", "WhereBackward0", POINTWISE, "same", tags=("scalar_edge", "mask"))
def _where(cond, a, b):
    return np.where(cond, a, b)


@_where.derivative_
def _(g, cond, a, b):
    zero = g * 0
    return None, where(cond, g, zero), where(cond, zero, g)


@defop("clone", "CloneBackward0", POINTWISE, saves="none")
def _clone(a):
    return like_array(a)


@_clone.derivative_
def _(g, a):
    return g


_clone.meta_(lambda a: meta_array(a.shape, a._data.dtype, like_strides(a)))  # preserve_format, as torch


@defop("to", "ToCopyBackward0", POINTWISE, saves="none")
def _to_dtype(a, dtype):  # (dtype: an ember dtype, a static param a tracer can print)
    return like_array(a, _to_numpy(dtype))


@_to_dtype.derivative_
def _(g, a, dtype):
    return g  # the engine casts it back to the input's dtype (fit_grads)


_to_dtype.meta_(lambda a, dtype: meta_array(a.shape, dtype, like_strides(a)))


# ---- comparisons and logic (no gradients) --------------------------------------------------------------

def _compare(name, ufunc, dtypes=None):
    op = defop(name, None, POINTWISE, "bool", dtypes=dtypes, error=f"{name}_cpu")(lambda a, b: ufunc(a, b))
    return op


_eq, _ne = _compare("eq", np.equal), _compare("ne", np.not_equal)
_lt, _le = _compare("lt", np.less, REAL), _compare("le", np.less_equal, REAL)  # ordering: no complex
_gt, _ge = _compare("gt", np.greater, REAL), _compare("ge", np.greater_equal, REAL)
_and = defop("logical_and", None, POINTWISE, "bool")(np.logical_and)
_or = defop("logical_or", None, POINTWISE, "bool")(np.logical_or)
_xor = defop("logical_xor", None, POINTWISE, "bool")(np.logical_xor)
_not = defop("logical_not", None, POINTWISE)(np.logical_not)
_not.meta_(lambda a: unary_meta(a, _dtypes.bool))


def _bitwise(name, ufunc):
    return defop(name, None, POINTWISE, "same", dtypes=BOOL | INTEGRAL, error=f"{name}_cpu")(
        lambda a, b: ufunc(a, b))


_band, _bor, _bxor = (_bitwise("bitwise_and", np.bitwise_and), _bitwise("bitwise_or", np.bitwise_or),
                      _bitwise("bitwise_xor", np.bitwise_xor))


@defop("bitwise_not", None, POINTWISE, dtypes=BOOL | INTEGRAL, error="bitwise_not_cpu")
def _bnot(a):
    return np.invert(a)


_bnot.meta_(unary_meta)


# ---- public functions ------------------------------------------------------------------------------


@method()
def add(input, other, *, alpha=1, out=None):
    return finish_out(dispatch(_add, (input, other), () if alpha == 1 else (alpha,)), out)


@method()
def sub(input, other, *, alpha=1, out=None):
    return finish_out(dispatch(_sub, (input, other), () if alpha == 1 else (alpha,)), out)


@method()
def subtract(input, other, *, alpha=1, out=None):
    return sub(input, other, alpha=alpha, out=out)
subtract.__name__ = "subtract"
public["subtract"] = subtract


@method()
def rsub(input, other, *, alpha=1):
    return dispatch(_rsub, (input, other), () if alpha == 1 else (alpha,))


@method("mul", "multiply")
def mul(input, other, *, out=None):
    return finish_out(dispatch(_mul, (input, other)), out)


public["multiply"] = mul


@method("div", "divide", "true_divide")
def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        r = dispatch(_div, (input, other))
    elif rounding_mode == "trunc":
        r = dispatch(_div_trunc, (input, other))
    elif rounding_mode == "floor":
        r = dispatch(_div_floor, (input, other))
    else:
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    return finish_out(r, out)


public["divide"] = public["true_divide"] = div


def _int_div(kind):
    def kernel(a, b):
        if np.asarray(a).dtype.kind in "iub" and np.asarray(b).dtype.kind in "iub":
            if np.any(np.asarray(b) == 0) and np.broadcast(a, b).size:  # (an empty result divides nothing)
                raise RuntimeError("ZeroDivisionError")
            with np.errstate(over="ignore"):  # (INT_MIN // -1 wraps, as torch.compile's; no NumPy warning)
                q = np.floor_divide(a, b)
            if kind == "trunc":
                q = q + ((np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)))
            return q
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.true_divide(a, b)
            return np.trunc(q) if kind == "trunc" else np.floor_divide(a, b)
    return kernel


_div_trunc = defop("div", "DivBackward2", POINTWISE, "same", dtypes=INTEGRAL | FLOATING,
                   error="div_trunc_cpu", overload="Tensor_mode_trunc", tags=("scalar_edge",))(_int_div("trunc"))
_div_floor = defop("div", "DivBackward2", POINTWISE, "same", dtypes=INTEGRAL | FLOATING,
                   error="div_floor_cpu", overload="Tensor_mode_floor", tags=("scalar_edge",))(_int_div("floor"))
for _op in (_div_trunc, _div_floor):
    _op.derivative_(lambda g, a, b: (g * 0, g * 0))
_div_floor.meta = where_led_rule("same")  # (NOTE [ Meta strides of decomposed ops ])


@method("pow")
def pow(input, exponent, *, out=None):  # noqa: A001 - torch's name
    if not isinstance(input, Tensor):
        return finish_out(dispatch(_rpow, (exponent, input)), out)
    if isinstance(exponent, Tensor):
        return finish_out(dispatch(_pow, (input, exponent)), out)
    return finish_out(dispatch(_pow_scalar, (input, _int_exponent(input, exponent))), out)


def _int_exponent(input, e):
    """An integer tensor's int exponent, checked as torch converts it (to int64, then to the dtype)."""
    if type(e) is int and input._data.dtype.kind in "iu":  # (a bool base promotes with the int to int64)
        checked_scalar(e, np.int64)
        if e < 0 and input._data.size:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return checked_scalar(e, input._data.dtype)
    return e


def _unary(name, op, *aliases):
    def fn(input, *, out=None):
        if out is None and not _modes:  # dispatch's own first step, taken here to save two calls
            return _run(op, (input,), ())
        return finish_out(dispatch(op, (input,)), out)
    fn.__name__ = name
    method(name, *aliases)(fn)
    for a in aliases:
        public[a] = fn
    inplace_method(name + "_", op)
    return fn


neg = _unary("neg", _neg, "negative")
abs = _unary("abs", _abs, "absolute")  # noqa: A001


def _abs_inplace_args(self):
    if self._data.dtype.kind == "c":  # (abs of a complex number is real: it cannot be written back)
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return (self,), ()


inplace_method("abs_", _abs, _abs_inplace_args)
inplace_method("absolute_", _abs, _abs_inplace_args)
sign = _unary("sign", _sign)
exp = _unary("exp", _exp)
log = _unary("log", _log)
sqrt = _unary("sqrt", _sqrt)
relu = _unary("relu", _relu)
sigmoid = _unary("sigmoid", _sigmoid)
tanh = _unary("tanh", _tanh)


@method()
def maximum(input, other, *, out=None):
    return finish_out(dispatch(_maximum, (input, other)), out)


@method()
def minimum(input, other, *, out=None):
    return finish_out(dispatch(_minimum, (input, other)), out)


def _clamp_inputs(input, min, max):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_t, (input, min, max), ()
    if input._data.dtype.kind in "biu" and any(isinstance(b, float) for b in (min, max)):
        input = input.to(_default_float())  # an integer tensor clamped to float bounds is a float result
    d = input._data.dtype
    return _clamp, (input,), (None if min is None else checked_scalar(min, d),
                              None if max is None else checked_scalar(max, d))


def _default_float():
    from .._dtypes import get_default_dtype

    return get_default_dtype()


@method("clamp", "clip")
def clamp(input, min=None, max=None, *, out=None):  # noqa: A002
    op, inputs, params = _clamp_inputs(input, min, max)
    if op is _clamp_t:
        return finish_out(dispatch(op, inputs), out)
    return finish_out(dispatch(op, inputs, params), out)


public["clip"] = clamp


def _clamp_(self, min=None, max=None):  # noqa: A002
    from .._dispatch import dispatch_inplace

    if self._data.dtype.kind in "biu" and any(isinstance(b, float) for b in (min, max)):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_CPP_NAMES.get(self._data.dtype.name, self._data.dtype.name)}")
    op, inputs, params = _clamp_inputs(self, min, max)
    return dispatch_inplace(op, self, inputs, params)


# the C++ type names torch's in-place clamp prints for a dtype
_CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
              "int32": "int", "int64": "long int"}


Tensor.clamp_ = Tensor.clip_ = _clamp_


@method("clamp_min")
def clamp_min(input, min, *, out=None):  # noqa: A002
    return clamp(input, min=min, out=out)


@method("clamp_max")
def clamp_max(input, max, *, out=None):  # noqa: A002
    return clamp(input, max=max, out=out)


@method()
def where(condition, input=None, other=None, *, out=None):
    try:
        if input is None and other is None:
            return condition.nonzero(as_tuple=True)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if not isinstance(condition, Tensor) or condition._data.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{getattr(condition, 'dtype', type(condition).__name__)}")
    if isinstance(input, Tensor) != isinstance(other, Tensor):  # a scalar is converted as a value
        from .._dispatch import wrap_int
        from .._dtypes import result_dtype, to_numpy

        for v in (input, other):
            if type(v) is int and v >= 2 ** 63:
                wrap_int(v, np.dtype(np.int64), (input, other))  # (torch's error for bool beside a uint64 number)
        d = to_numpy(result_dtype((input, other)))
        if isinstance(input, Tensor):
            other = checked_scalar(other, d)
        else:
            input = checked_scalar(input, d)
    return finish_out(dispatch(_where, (condition, input, other)), out)


def _where_method(self, condition, other):
    """`self.where(condition, other)`: torch's Tensor.where takes self as the values, not as the condition."""
    return where(condition, self, other)


_where_method.__name__ = _where_method.__qualname__ = "where"
Tensor.where = _where_method


@method()
def clone(input, *, memory_format=None):
    if memory_format is None:
        return dispatch(_clone, (input,))
    from .. import channels_last, channels_last_3d, contiguous_format, preserve_format

    if memory_format is preserve_format:
        return dispatch(_clone, (input,))
    if memory_format is contiguous_format:
        return input.contiguous() if not input.is_contiguous() else dispatch(_clone, (input,))
    ndim = 4 if memory_format is channels_last else 5 if memory_format is channels_last_3d else -1
    if input.dim() != ndim:
        name = "channels_last" if ndim == 4 else "channels_last_3d" if ndim == 5 else str(memory_format)
        raise RuntimeError(f"required rank {max(ndim, 4)} tensor to use {name} format")
    perm = (0, *range(2, ndim), 1)  # row-major in (N, *spatial, C) order is channels-last
    back = (0, ndim - 1, *range(1, ndim - 1))
    return input.permute(perm).contiguous().permute(back)


def _cmp(name, op, *aliases):
    def fn(input, other, *, out=None):
        return finish_out(dispatch(op, (input, other)), out)
    fn.__name__ = name
    method(name, *aliases)(fn)
    for a in aliases:
        public[a] = fn
    return fn


eq = _cmp("eq", _eq)
ne = _cmp("ne", _ne, "not_equal")
lt = _cmp("lt", _lt, "less")
le = _cmp("le", _le, "less_equal")
gt = _cmp("gt", _gt, "greater")
ge = _cmp("ge", _ge, "greater_equal")
logical_and = _cmp("logical_and", _and)
logical_or = _cmp("logical_or", _or)
logical_xor = _cmp("logical_xor", _xor)
bitwise_and = _cmp("bitwise_and", _band)
bitwise_or = _cmp("bitwise_or", _bor)
bitwise_xor = _cmp("bitwise_xor", _bxor)


@method()
def logical_not(input, *, out=None):
    return finish_out(dispatch(_not, (input,)), out)


@method()
def bitwise_not(input, *, out=None):
    return finish_out(dispatch(_bnot, (input,)), out)


# in-place forms
inplace_method("add_", _add, lambda self, other, *, alpha=1: ((self, other), () if alpha == 1 else (alpha,)))
inplace_method("sub_", _sub, lambda self, other, *, alpha=1: ((self, other), () if alpha == 1 else (alpha,)))
inplace_method("mul_", _mul)
inplace_method("div_", _div)
inplace_method("maximum_", _maximum)
inplace_method("minimum_", _minimum)
Tensor.pow_ = lambda self, exponent: _inplace_pow(self, exponent)


def _inplace_pow(self, e):
    from .._dispatch import dispatch_inplace

    if isinstance(e, Tensor):
        return dispatch_inplace(_pow, self, (self, e))
    return dispatch_inplace(_pow_scalar, self, (self, _int_exponent(self, e)))


# ---- the operator protocol ----------------------------------------------------------------------------
# Written out (not looked up through `add` etc.) because `a + b` is the hottest path there is.

def _binop(op, reflected=False):
    if reflected:
        def f(self, other):
            return dispatch(op, (other, self))
    else:
        def f(self, other):
            if _modes:
                return dispatch(op, (self, other))
            return _run(op, (self, other), ())  # dispatch with no mode active, without its frame
    return f


Tensor.__add__ = Tensor.__radd__ = _binop(_add)
Tensor.__sub__ = _binop(_sub)
Tensor.__rsub__ = lambda self, other: dispatch(_rsub, (self, other))
Tensor.__mul__ = Tensor.__rmul__ = _binop(_mul)
Tensor.__truediv__ = _binop(_div)
Tensor.__rtruediv__ = _binop(_div, reflected=True)
Tensor.__pow__ = lambda self, e: pow(self, e)
Tensor.__rpow__ = lambda self, b: dispatch(_rpow, (self, b))
Tensor.__neg__ = lambda self: dispatch(_neg, (self,))
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: dispatch(_abs, (self,))
Tensor.__eq__ = _binop(_eq)
Tensor.__ne__ = _binop(_ne)
Tensor.__lt__ = _binop(_lt)
Tensor.__le__ = _binop(_le)
Tensor.__gt__ = _binop(_gt)
Tensor.__ge__ = _binop(_ge)
Tensor.__and__ = Tensor.__rand__ = _binop(_band)
Tensor.__or__ = Tensor.__ror__ = _binop(_bor)
Tensor.__xor__ = Tensor.__rxor__ = _binop(_bxor)
Tensor.__invert__ = lambda self: dispatch(_bnot, (self,))
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_
Tensor.__floordiv__ = lambda self, other: div(self, other, rounding_mode="floor")
Tensor.__rfloordiv__ = lambda self, other: div(other, self, rounding_mode="floor") \
    if isinstance(other, Tensor) else dispatch(_div_floor, (other, self))

"""Neural-network primitives: activations, softmax/log_softmax, nll_loss, normalization, embedding.

Each is a NumPy kernel plus a derivative written in ember ops (so it differentiates again), named as
torch names its backward node (`GeluBackward0`, `LogSoftmaxBackward0`, ...). The public, torch-signature
functions live in ember/nn/functional; composites (tanhshrink, softsign, most losses) are written there.

NOTE [ Low-precision accumulation ]
float16/bfloat16 inputs to reductions (softmax, norms, losses) are computed in float32 and rounded once
at the end, as torch's CPU kernels accumulate in float.
"""

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import (
    ARGUMENT,
    COMPLEX,
    FALLBACK,
    FLOATING,
    INTEGRAL,
    NN,
    POINTWISE,
    REAL,
    defop,
    dispatch,
    dtype_word,
    not_implemented,
)
from .._meta import like_strides, meta_array, torch_layout
from .._native import ops as _native
from ..autograd.grad_mode import state as _grad_state
from ..autograd.graph import needs_grad
from ._util import c_contiguous, finish_out, method, public, wrap_dim
from .pointwise import clamp_complex_error, where
from .special import erf as _erf

__all__ = []

_SQRT1_2 = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327


def _wide(a):
    """(array in a dtype fit for accumulation, the dtype to return) (NOTE [ Low-precision accumulation ])."""
    if a.dtype.itemsize < 4 and a.dtype.kind == "f" or a.dtype.kind == "V":
        return a.astype(np.float32), a.dtype
    return a, a.dtype


def _erf_like(z):
    """erf of `z` in `z`'s memory layout (the blocked erf kernel writes C order; torch's pointwise outputs
    keep the input's stride order)."""
    if z.ndim < 2 or z.flags.c_contiguous:
        return _erf(z)
    order = np.argsort(z.strides, kind="stable")[::-1]  # axes from the largest stride to the smallest
    return _erf(z.transpose(order)).transpose(np.argsort(order))


def _as(x, like):
    return np.asarray(x).astype(like.dtype, copy=False)


# ---- piecewise-linear activations ----------------------------------------------------------------------


def _hardtanh_error(d):
    if d.name == "bool":
        return RuntimeError("Bool inputs not supported for hardtanh")
    return clamp_complex_error()


def _softmax_error(name, d, a, dim):
    try:
        last = a.ndim == 0 or dim is None or dim % a.ndim == a.ndim - 1
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return not_implemented(f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl", d)


@defop("leaky_relu", "LeakyReluBackward0", POINTWISE, "same", dtypes=FLOATING, error="leaky_relu_cpu")
def leaky_relu(a, slope):
    return np.where(a > 0, a, a * _as(slope, a)).astype(a.dtype, copy=False)


@leaky_relu.derivative_
def _(g, a, slope):
    return dispatch(leaky_relu_backward, (g, a), (slope,))


# NOTE [ Layouts of the activation backwards ]
# leaky_relu_backward, gelu_backward and silu_backward take the same-dtype fast path of `_run`, which
# keeps the kernel's layout (NOTE [ Promoted layouts ] in ember/_dispatch.py), and their kernels are
# several NumPy calls (or a native loop writing a C-ordered array), so a grad and an input in different
# orders gave NumPy's order, not TensorIterator's. The kernel lays its result out itself (operands in
# the order of torch's iterator) when an input is not C-contiguous: two flag reads on the common path.
def _backward_layout(out, g, a):
    if g.flags.c_contiguous and a.flags.c_contiguous or type(out) is not np.ndarray:
        return out
    return torch_layout(out, (g, a))


@defop("leaky_relu_backward", "LeakyReluBackwardBackward0", POINTWISE, "same")
def leaky_relu_backward(g, a, slope):  # (torch's iterator takes self first: the input's order wins)
    return _backward_layout(np.where(a > 0, g, g * _as(slope, g)).astype(g.dtype, copy=False), a, g)


@leaky_relu_backward.derivative_
def _(gg, g, a, slope):  # (torch's formula gives the input zeros)
    return dispatch(leaky_relu_backward, (gg, a), (slope,)), (a.new_zeros(a.shape) if needs_grad(1) else None)


@defop("hardtanh", "HardtanhBackward0", POINTWISE, "same", dtypes=INTEGRAL | FLOATING, error=_hardtanh_error)
def hardtanh(a, lo, hi):
    return np.clip(a, _as(lo, a), _as(hi, a))


@hardtanh.derivative_
def _(g, a, lo, hi):  # (zero at or outside the bounds: a NaN passes the gradient, NOTE [ Gradients at NaN
    return where((a <= lo) | (a >= hi), 0.0, g)  # and ties ] in pointwise.py)


@defop("threshold", "ThresholdBackward0", POINTWISE, "same", dtypes=REAL - {"bool"}, error="threshold_cpu")
def threshold(a, th, value):
    return np.where(a > th, a, _as(value, a)).astype(a.dtype, copy=False)


@threshold.derivative_
def _(g, a, th, value):
    return where(a > th, g, 0.0)


@defop("hardshrink", "HardshrinkBackward0", POINTWISE, "same", dtypes=FLOATING, error="hardshrink_cpu")
def hardshrink(a, lambd):
    try:
        return np.where(np.abs(a) > lambd, a, 0).astype(a.dtype, copy=False)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


@hardshrink.derivative_
def _(g, a, lambd):
    return where((a > lambd) | (a < -lambd), g, 0.0)


def _hardshrink_public(input, lambd=0.5, *, out=None):
    if not isinstance(lambd, (int, float)):  # (torch's argument parser; bool is an int there too)
        raise TypeError(f"hardshrink(): argument 'lambd' must be Number, not {type(lambd).__name__}")
    return finish_out(dispatch(hardshrink, (input,), (lambd,)), out)


_hardshrink_public.__name__ = "hardshrink"
method("hardshrink")(_hardshrink_public)  # (area N: torch.hardshrink, Tensor.hardshrink)


@defop("softshrink", "SoftshrinkBackward0", POINTWISE, "same", dtypes=FLOATING, error="softshrink_check")
def softshrink(a, lambd):
    lam = _as(lambd, a)
    return np.where(a > lam, a - lam, np.where(a < -lam, a + lam, 0)).astype(a.dtype, copy=False)


@softshrink.derivative_
def _(g, a, lambd):
    return where((a > lambd) | (a < -lambd), g, 0.0)


@defop("hardsigmoid", "HardsigmoidBackward0", POINTWISE, "same", dtypes=FLOATING, error="hardsigmoid_cpu")
def hardsigmoid(a):
    return np.clip(a / 6 + 0.5, 0, 1).astype(a.dtype, copy=False)


@hardsigmoid.derivative_
def _(g, a):
    return where((a > -3) & (a < 3), g / 6, 0.0)


@defop("hardswish", "HardswishBackward0", POINTWISE, "same", dtypes=FLOATING, error="hardswish_cpu")
def hardswish(a):
    return (a * np.clip(a + 3, 0, 6) / 6).astype(a.dtype, copy=False)


@hardswish.derivative_
def _(g, a):
    return where(a < -3, 0.0, where(a <= 3, g * (a / 3 + 0.5), g))


# ---- smooth activations ----------------------------------------------------------------------------------


@defop("elu", "EluBackward0", POINTWISE, "same", dtypes=FLOATING, error="elu_cpu")
def elu(a, alpha, scale, input_scale):
    w, dt = _wide(a)
    neg = np.expm1(np.minimum(w, 0) * input_scale) * (alpha * scale)
    return np.where(w > 0, w * scale, neg).astype(dt, copy=False)


@elu.derivative_
def _(g, a, alpha, scale, input_scale):
    return where(a > 0, g * scale, g * ((a.clamp(max=0) * input_scale).exp() * (alpha * scale * input_scale)))


celu = defop("celu", "CeluBackward0", POINTWISE, "same", dtypes=FLOATING, error="elu_cpu")(elu.kernel)
celu.derivative_(elu.derivative)


@defop("softplus", "SoftplusBackward0", POINTWISE, "same", dtypes=FLOATING, error="softplus_cpu")
def softplus(a, beta, thresh):
    w, dt = _wide(a)
    try:
        bx = w * beta
        soft = (np.maximum(bx, 0) + np.log1p(np.exp(-np.abs(bx)))) / beta
        return np.where(bx > thresh, w, soft).astype(dt, copy=False)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


@softplus.derivative_
def _(g, a, beta, thresh):
    return where(a * beta > thresh, g, g * (a * beta).sigmoid())


@defop("gelu", "GeluBackward0", POINTWISE, "same", dtypes=FLOATING, error="GeluKernelImpl")
def gelu(a, approximate):
    w, dt = _wide(a)
    done = _native.gelu(w, approximate)
    if done is not None:
        return done.astype(dt, copy=False)
    if approximate == "tanh":
        inner = 0.7978845608028654 * (w + 0.044715 * w * w * w)
        return (0.5 * w * (1 + np.tanh(inner))).astype(dt, copy=False)
    return (0.5 * w * (1 + _erf_like(w * _SQRT1_2).astype(w.dtype, copy=False))).astype(dt, copy=False)


@defop("gelu_backward", "GeluBackwardBackward0", POINTWISE, "same")
def gelu_backward(g, a, approximate):
    return _backward_layout(_gelu_backward(g, a, approximate), g, a)


def _gelu_backward(g, a, approximate):
    w, dt = _wide(a)
    done = _native.gelu_backward(_wide(g)[0], w, approximate) if g.dtype == a.dtype else None
    if done is not None:
        return done.astype(dt, copy=False)
    if approximate == "tanh":
        k = 0.7978845608028654
        inner = k * (w + 0.044715 * w * w * w)
        t = np.tanh(inner)
        d = 0.5 * (1 + t) + 0.5 * w * (1 - t * t) * k * (1 + 3 * 0.044715 * w * w)
    else:
        cdf = 0.5 * (1 + _erf_like(w * _SQRT1_2).astype(w.dtype, copy=False))
        d = cdf + w * np.exp(-0.5 * w * w) * _INV_SQRT_2PI
    return (g * d).astype(dt, copy=False)


@gelu.derivative_
def _(g, a, approximate):
    return dispatch(gelu_backward, (g, a), (approximate,))


@gelu_backward.derivative_
def _(gg, g, a, approximate):
    if approximate == "tanh":
        k, c = 0.7978845608028654, 0.044715
        t = (k * (a + c * a * a * a)).tanh()
        dinner = k * (1 + 3 * c * a * a)
        sech2 = 1 - t * t
        second = sech2 * dinner + 0.5 * a * (-2 * t * sech2 * dinner * dinner + sech2 * k * 6 * c * a)
        return dispatch(gelu_backward, (gg, a), (approximate,)), gg * g * second
    pdf = (a * a * -0.5).exp() * _INV_SQRT_2PI
    return dispatch(gelu_backward, (gg, a), (approximate,)), gg * g * pdf * (2 - a * a)


@defop("silu", "SiluBackward0", POINTWISE, "same", dtypes=FLOATING | COMPLEX, error="silu_cpu")
def silu(a):
    w, dt = _wide(a)
    done = _native.silu(w)
    if done is not None:
        return done.astype(dt, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):  # (exp(-x) overflows to inf: x / inf is -0, as torch's)
        return (w / (1 + np.exp(-w))).astype(dt, copy=False)


# NOTE [ silu's backward kernel ]
# As in torch: a backward pass that records nothing (no create_graph) computes silu's gradient with the op
# `silu_backward`, one fused loop (ember/_native/activation.c), where the formula in ember ops made six
# whole-array passes (a 4M-float backward took 12x torch's time); under create_graph it is that formula, whose
# nodes differentiate again (torch's infinitely_differentiable_silu_backward). The op itself, like torch's
# (outside derivatives.yaml), has no derivative: its calls get the refusing fallback node.
@defop("silu_backward", None, POINTWISE, "same", dtypes=FLOATING | COMPLEX, error="silu_backward_cpu")
def silu_backward(g, a):
    return _backward_layout(_silu_backward(g, a), g, a)


def _silu_backward(g, a):
    w, dt = _wide(a)
    gw = _wide(g)[0]
    done = _native.silu_backward(gw, w) if g.dtype == a.dtype else None
    if done is not None:
        return done.astype(dt, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):  # (exp(-x) overflows to inf: s is 0 there, as torch's)
        s = 1 / (1 + np.exp(-w))
        return (gw * s * (1 + w * (1 - s))).astype(dt, copy=False)


silu_backward.refuses_(FALLBACK, "silu_backward")  # NOTE [ What torch's autograd refuses ] in ember/autograd/graph.py


@silu.derivative_
def _(g, a):
    if not _grad_state.enabled:
        return dispatch(silu_backward, (g, a))
    s = a.sigmoid()
    return g * s * (1 + a * (1 - s))


@defop("mish", "MishBackward0", POINTWISE, "same", dtypes=FLOATING, error="mish_cpu")
def mish(a):
    w, dt = _wide(a)
    sp = np.maximum(w, 0) + np.log1p(np.exp(-np.abs(w)))
    return (w * np.tanh(sp)).astype(dt, copy=False)


@mish.derivative_
def _(g, a):
    t = dispatch(softplus, (a,), (1, 20)).tanh()
    return g * (t + a * a.sigmoid() * (1 - t * t))


@defop("log_sigmoid", "LogSigmoidBackward0", POINTWISE, "same", dtypes=FLOATING, error="log_sigmoid_cpu")
def log_sigmoid(a):
    w, dt = _wide(a)
    out = (np.minimum(w, 0) - np.log1p(np.exp(-np.abs(w)))).astype(dt, copy=False)
    return c_contiguous(out)  # (torch's log_sigmoid_forward writes a new contiguous buffer)


log_sigmoid.own_layout = True  # (NOTE [ Promoted layouts ] in ember/_dispatch.py)


@log_sigmoid.derivative_
def _(g, a):
    return g * (-a).sigmoid()


@defop("prelu", "PreluKernelBackward0", POINTWISE, "same", dtypes=FLOATING, error="prelu_cpu")
def prelu(a, w):
    return np.where(a > 0, a, w * a).astype(np.result_type(a, w), copy=False)


@prelu.derivative_
def _(g, a, w):
    return where(a > 0, g, g * w), where(a > 0, 0.0, g * a)


# ---- softmax family ------------------------------------------------------------------------------------


@defop("softmax", "SoftmaxBackward0", NN, saves="none", save_output=True, dtypes=FLOATING,
       error=lambda d, a, dim: _softmax_error("softmax", d, a, dim), empty_ok=True)  # (checked in the loop)
def softmax(a, dim):
    w, dt = _wide(a)
    if not w.size:  # (an empty input: NumPy's max has no identity, torch returns the empty tensor)
        return np.empty(a.shape, dt)
    e = _native.softmax(w, dim, False)
    if e is None:
        e = np.exp(w - np.max(w, axis=dim, keepdims=True))
        e /= np.sum(e, axis=dim, keepdims=True)
    return c_contiguous(e.astype(dt, copy=False))  # (torch's softmax output is contiguous)


def _same_shape(a, *_):
    """The meta rule of an op whose output is one contiguous tensor of its first input's shape and dtype."""
    return meta_array(tuple(a.shape), a._data.dtype)


softmax.meta_(_same_shape)


@softmax.derivative_
def _(g, a, dim, *, out):
    return _softmax_backward_data(g, out, dim, out.dtype)


@softmax.jvp_
def _(inputs, params, out, tangents):
    t = tangents[0]
    return out * (t - (out * t).sum(params[0], keepdim=True))


@defop("log_softmax", "LogSoftmaxBackward0", NN, saves="none", save_output=True, dtypes=FLOATING,
       error=lambda d, a, dim: _softmax_error("log_softmax", d, a, dim), empty_ok=True)
def log_softmax(a, dim):
    w, dt = _wide(a)
    if not w.size:
        return np.empty(a.shape, dt)
    out = _native.softmax(w, dim, True)
    if out is None:
        shifted = w - np.max(w, axis=dim, keepdims=True)
        with np.errstate(divide="ignore"):
            out = shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))
    return c_contiguous(out.astype(dt, copy=False))  # (contiguous, as torch's)


log_softmax.meta_(_same_shape)


@log_softmax.derivative_
def _(g, a, dim, *, out):
    return _log_softmax_backward_data(g, out, dim, out.dtype)


@log_softmax.jvp_
def _(inputs, params, out, tangents):
    t = tangents[0]
    return t - (out.exp() * t).sum(params[0], keepdim=True)


# NOTE [ Softmax backward is an op ]
# softmax's gradient, y (g - sum(g y)), and log_softmax's, g - exp(y) sum(g), are torch's ops
# `_softmax_backward_data` / `_log_softmax_backward_data`, so a backward pass makes one dispatch (and one
# fused native loop, ember/_native/softmax.c) instead of four to six whole-array NumPy passes. Their own
# derivatives (double backward), for gg against (g, y), with S(v) = the sum over `dim`:
#   softmax:     dg = y (gg - S(gg y)) (the op again),   dy = gg (g - S(g y)) - S(gg y) g
#   log_softmax: dg = gg - S(gg exp(y)),                  dy = -gg exp(y) S(g)
# NOTE [ softmax backward's dot ]
# torch's softmax backward, y * (g - sum(g * y)), forms the sum with fused multiply-adds: a product is not
# rounded to float before it is added, so g * y = 6e38 (past float's max) next to a -inf term sums to -inf,
# where NumPy's rounded product is inf and the sum NaN. ember multiplies float32 in float64 (exact) and rounds
# the sum once: the same at such ends, and within float's rounding of torch's elsewhere.
def _dot_unrounded(g, y, dim):
    if g.dtype != np.float32:
        return (g * y).sum(axis=dim, keepdims=True)
    return np.multiply(g, y, dtype=np.float64).sum(axis=dim, keepdims=True).astype(np.float32)


def _softmax_backward_kernel(log):
    def kernel(g, y, dim, input_dtype):
        if g.shape != y.shape:
            raise RuntimeError(f"Expected tensor for argument #1 'grad' to have same size as tensor for argument "
                               f"#2 'output'; but {list(g.shape)} does not equal {list(y.shape)} (while checking "
                               f"arguments for {'log_' if log else ''}softmax_backward)")
        if dim is not None:  # (None: a 0-d input's softmax; torch's meta wraps after the size check)
            wrap_dim(dim, g.ndim)
        if _dtypes.from_numpy(g.dtype) is not input_dtype:
            raise RuntimeError(f"expected scalar type {dtype_word(_dtypes.from_numpy(g.dtype))} but found "
                               f"{dtype_word(input_dtype)}")
        gw, dt = _wide(g)
        yw = _wide(y)[0]
        gx = _native.softmax_backward(gw, yw, dim, log)
        try:
            if gx is None:
                with np.errstate(over="ignore", invalid="ignore"):
                    gx = gw - np.exp(yw) * gw.sum(axis=dim, keepdims=True) if log \
                        else yw * (gw - _dot_unrounded(gw, yw, dim))
        except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
            raise call_error(e) from None
        return c_contiguous(gx.astype(dt, copy=False))
    return kernel


softmax_backward_data = defop(
    "_softmax_backward_data", "SoftmaxBackwardDataBackward0", NN, dtypes=FLOATING, empty_ok=True,
    error=lambda d, g, y, dim, _: _softmax_error("softmax_backward", d, g, dim))(_softmax_backward_kernel(False))
log_softmax_backward_data = defop(
    "_log_softmax_backward_data", "LogSoftmaxBackwardDataBackward0", NN, dtypes=FLOATING, empty_ok=True,
    error=lambda d, g, y, dim, _: _softmax_error("log_softmax_backward", d, g, dim))(_softmax_backward_kernel(True))
softmax_backward_data.meta_(_same_shape)
# (torch's meta function for log_softmax's backward allocates like the gradient; its CPU kernel, contiguous)
log_softmax_backward_data.meta_(lambda g, *_: meta_array(tuple(g.shape), g._data.dtype, like_strides(g))
                                if g.numel() else _same_shape(g))


@softmax_backward_data.derivative_
def _(gg, g, y, dim, input_dtype):
    s1 = (gg * y).sum(dim, keepdim=True)
    return (_softmax_backward_data(gg, y, dim, input_dtype) if needs_grad(0) else None,
            gg * (g - (g * y).sum(dim, keepdim=True)) - s1 * g if needs_grad(1) else None)


@log_softmax_backward_data.derivative_
def _(gg, g, y, dim, input_dtype):
    e = y.exp()
    return (gg - (gg * e).sum(dim, keepdim=True) if needs_grad(0) else None,
            -gg * e * g.sum(dim, keepdim=True) if needs_grad(1) else None)


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    return dispatch(softmax_backward_data, (grad_output, output), (dim, input_dtype))


def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    return dispatch(log_softmax_backward_data, (grad_output, output), (dim, input_dtype))


public["_softmax_backward_data"] = _softmax_backward_data
public["_log_softmax_backward_data"] = _log_softmax_backward_data


# ---- nll_loss ------------------------------------------------------------------------------------------


def _nll_parts(x, target, weight, ignore_index):
    """Per-element picked log-probs (N, *d) and their weights, for input (N, C, *d) or (C,)."""
    t = target.astype(np.int64, copy=False)
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    picked = np.take_along_axis(x, np.expand_dims(safe, 1), axis=1).squeeze(1)
    w = weight[safe] if weight is not None else np.ones(safe.shape, x.dtype)
    w = np.where(valid, w, 0).astype(x.dtype, copy=False)
    return picked, w, safe


@np.errstate(over="ignore", invalid="ignore")  # (extreme weights overflow to inf, as torch's)
def _nll_kernel(x, target, weight, reduction, ignore_index):
    if x.ndim == 1:  # (C,) with a one-element target: torch's nll_loss takes it as it is
        out = _nll_kernel(x[None], target.reshape(1), weight, reduction, ignore_index)
        return out.reshape(()) if reduction == "none" else out
    bad = (target != ignore_index) & ((target < 0) | (target >= x.shape[1]))  # a check of the data: torch
    if bad.any():                                                              # makes it in its kernel too
        raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")
    w_, dt = _wide(x)
    picked, w, _ = _nll_parts(w_, target, weight, ignore_index)
    losses = -picked * w
    if reduction == "none":
        return losses.astype(dt, copy=False)
    if reduction == "sum":
        return np.asarray(losses.sum(), dt)
    total = w.sum()
    return np.asarray(losses.sum() / total if total != 0 else np.float64("nan"), dt)


@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def _nll_backward_kernel(g, x, target, weight, reduction, ignore_index):
    """d nll_loss / d x: -weight[target] * g scattered at the target class (g broadcast per element)."""
    if x.ndim == 1:
        return _nll_backward_kernel(g.reshape(1) if reduction == "none" else g, x[None], target.reshape(1), weight,
                                    reduction, ignore_index)[0]
    _, w, safe = _nll_parts(x, target, weight, ignore_index)
    if reduction == "mean":
        w = w / w.sum()
    gx = np.zeros(x.shape, x.dtype)
    np.put_along_axis(gx, np.expand_dims(safe, 1), np.expand_dims(-w * g, 1), axis=1)
    return gx


# NOTE [ nll_loss and nll_loss2d ]
# As torch, two ops share one kernel: nll_loss for (C,) and (N, C) inputs, nll_loss2d for (N, C, H, W)
# (nodes NllLossBackward0 / NllLoss2DBackward0); nn.functional views any other input of 3+ dims as
# (N, C, 1, rest) for nll_loss2d (torch's nll_loss_nd). Each backward takes the input as an input, as torch's
# `nll_loss_backward(grad, self, target, ...)`, so the double backward gives it torch's zeros; its gradient
# w.r.t. the incoming gradient is the loss itself (linear in g, and its adjoint is nll_loss:
# sum_n -w_n * gg[n, t_n], over the total weight for mean).
nll_loss, nll_loss2d = (defop(name, node, NN, dtypes=FLOATING, error=err, tags=("index",))(_nll_kernel)
                        for name, node, err in (("nll_loss", "NllLossBackward0", "nll_loss_out_frame"),
                                                ("nll_loss2d", "NllLoss2DBackward0", "nll_loss2d_forward_out_frame")))
nll_loss_backward, nll_loss2d_backward = (
    defop(name, node, NN, tags=("index",))(_nll_backward_kernel)
    for name, node in (("nll_loss_backward", "NllLossBackwardBackward0"),
                       ("nll_loss2d_backward", "NllLoss2DBackwardBackward0")))


def _nll_meta(x, target, weight, reduction, ignore_index):
    return meta_array(tuple(target.shape) if reduction == "none" and len(x.shape) > 1 else (), x._data.dtype)


def _nll_pair(fwd, bwd):
    fwd.meta_(_nll_meta)
    bwd.meta_(lambda g, x, *_: _same_shape(x))

    @fwd.derivative_
    def _(g, x, target, weight, reduction, ignore_index):
        return dispatch(bwd, (g, x, target, weight), (reduction, ignore_index)), None, None

    @bwd.derivative_
    def _(gg, g, x, target, weight, reduction, ignore_index):
        return dispatch(fwd, (gg, target, weight), (reduction, ignore_index)), gg.new_zeros(tuple(x.shape)), \
            None, None


_nll_pair(nll_loss, nll_loss_backward)
_nll_pair(nll_loss2d, nll_loss2d_backward)


# ---- normalization -------------------------------------------------------------------------------------

# NOTE [ Native norms ]
# As torch's native_batch_norm / native_layer_norm / native_group_norm, one op per flavour normalizes AND
# applies the affine weight and bias: it takes them as inputs, so its node has torch's edges (input, weight,
# bias; NOTE [ Optional and state inputs ]), and returns torch's (out, mean, rstd). Its backward is one op,
# `native_*_backward`, giving the three gradients in NumPy from the saved statistics; that op's derivative
# (torch's batchnorm_double_backward / layer_norm_double_backward) is written in ember ops (`_norm_double`),
# so the norms differentiate twice, and again. Every flavour is one computation on a layout (`_layout`):
# statistics over `axes` of x viewed as `xshape`, the weight broadcast as `wshape`. Layer norm: x as it is,
# statistics and weight over the trailing dims; batch norm: statistics over every dim but 1 (instance norm:
# every dim but 0 and 1), weight (C, 1, ...); group norm: x as (N, G, C/G, HxW), weight (G, C/G, 1).
#
# The double backward, for one group of n elements, rstd r, xhat = (x - mean) r, M = the mean over the
# group, h = g w, and the backward's gx = L(h), L(v) = r (v - M(v) - xhat M(v xhat)) (self-adjoint), gw =
# sum(g xhat), gb = sum(g): given (ggx, ggw, ggb),
#   d/dg = w L(ggx) + ggw xhat + ggb,    d/dw = sum(g L(ggx)),
#   d/dx = L(g ggw) - r^2 (xhat (M(u h) - M(u) M(h) - 3 M(u xhat) M(h xhat)) + M(h xhat) (u - M(u))
#                          + M(u xhat) (h - M(h))),   u = ggx
# (the last line is d<u, L(h)>/dx through r and xhat). In eval mode L(v) = r v and only ggw reaches x.


def _layout(kind, shape, p):
    """(xshape, axes, wshape) of a norm of an input of `shape` (NOTE [ Native norms ]); p: the op's params."""
    if kind == "layer":
        return shape, p[0], shape[p[0][0]:]
    if kind == "group":
        n, c, g = shape[0], shape[1], p[0]
        return (n, g, c // g, int(np.prod(shape[2:], dtype=np.int64))), (2, 3), (g, c // g, 1)
    rest = tuple(range(2, len(shape)))  # batch norm; per_instance: instance norm's statistics per sample
    return shape, rest if p[2] else (0,) + rest, (shape[1],) + (1,) * (len(shape) - 2)


def _to_shape(a, shape):
    """`a` summed over the dims it broadcasts along to `shape` (right-aligned), in `shape`."""
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and a.shape[lead + i] != 1)
    return a.sum(axis=axes, keepdims=True).reshape(shape)


@np.errstate(over="ignore", invalid="ignore", divide="ignore")  # (extreme values give inf/nan, as torch's)
def _norm_forward(kind, x, w, b, p, eps, stats=None):
    """(out, mean, rstd) of a norm (NOTE [ Native norms ]); `stats`: eval mode's (running_mean, running_var)."""
    xshape, axes, wshape = _layout(kind, x.shape, p)
    xw, dt = _wide(x)
    if kind == "layer" and stats is None:
        done = _native.layer_norm(xw, w, b, len(axes), eps)
        if done is not None:
            return done[0].astype(dt, copy=False), done[1], done[2]
    xv = xw.reshape(xshape)
    try:
        if stats is None:
            mean = xv.mean(axis=axes, keepdims=True)
            c = xv - mean
            var = np.mean(c * c, axis=axes, keepdims=True)
            if kind == "batch" and dt != xw.dtype:  # NOTE [ Half-precision batch norm ]
                mean = mean.astype(dt).astype(xw.dtype)
                if dt.kind == "V":
                    var = var.astype(dt).astype(xw.dtype)
            rstd = 1.0 / np.sqrt(var + eps)
            if kind == "batch" and dt != xw.dtype:
                rstd = rstd.astype(dt).astype(xw.dtype)
        else:
            mean = stats[0].reshape(wshape).astype(xw.dtype, copy=False)
            rstd = 1.0 / np.sqrt(stats[1].reshape(wshape).astype(xw.dtype, copy=False) + eps)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if kind == "batch":  # torch's form: x * alpha + beta, alpha = rstd w, beta = b - mean alpha
        alpha = rstd if w is None else rstd * w.reshape(wshape)
        beta = -mean * alpha
        if b is not None:
            beta = beta + b.reshape(wshape)
        if stats is not None and xv.dtype == alpha.dtype == beta.dtype == np.float32 and not p[2]:
            # eval mode: one C pass, the same arithmetic (the same bits)
            done = _native.channel_affine(xv, np.ascontiguousarray(alpha.reshape(-1)),
                                          np.ascontiguousarray(beta.reshape(-1)))
            if done is not None:
                return done.reshape(x.shape).astype(dt, copy=False), mean, rstd
        out = xv * alpha
        out += beta
    else:
        out = (c if stats is None else xv - mean) * rstd
        if w is not None:
            out *= w.reshape(wshape)
        if b is not None:
            out += b.reshape(wshape)
    return out.reshape(x.shape).astype(dt, copy=False), mean, rstd


@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def _norm_backward(kind, g, x, w, mean, rstd, p, train=True):
    """(grad input, grad weight, grad bias) of a norm from its saved statistics (keepdims-shaped)."""
    xshape, axes, wshape = _layout(kind, x.shape, p)
    gw_, dt = _wide(g)
    if kind == "layer" and train:
        done = _native.layer_norm_backward(gw_, _wide(x)[0], w, mean, rstd)
        if done is not None:
            if w is None:
                return done[0].astype(dt, copy=False), np.zeros(0, dt), np.zeros(0, dt)
            return done[0].astype(dt, copy=False), done[1].astype(w.dtype, copy=False), \
                done[2].astype(w.dtype, copy=False)
    gv = gw_.reshape(xshape)
    xhat = _wide(x)[0].reshape(xshape) - mean  # (in place from here: one fresh array per step)
    xhat *= rstd
    gxhat = gv * xhat
    wv = None if w is None else w.reshape(wshape)
    if train and (wv is None or np.broadcast_shapes(rstd.shape, wshape) == rstd.shape):
        # the weight is constant over each group: the sums for gw and gb are the ones gx needs
        n = gv.size // rstd.size if rstd.size else 1
        sg, sgx = gv.sum(axis=axes, keepdims=True), gxhat.sum(axis=axes, keepdims=True)
        scale = rstd if wv is None else rstd * wv
        gx = gv - sg / n
        gx -= xhat * (sgx / n)
        gx *= scale
    else:
        h = gv if wv is None else gv * wv
        gx = (h - h.mean(axis=axes, keepdims=True) - xhat * (h * xhat).mean(axis=axes, keepdims=True)) * rstd \
            if train else h * rstd
        sg, sgx = gv, gxhat
    if w is None:
        return gx.reshape(x.shape).astype(dt, copy=False), np.zeros(0, dt), np.zeros(0, dt)
    gb, gwt = _to_shape(sg, wshape), _to_shape(sgx, wshape)
    wd = w.dtype
    return gx.reshape(x.shape).astype(dt, copy=False), gwt.reshape(w.shape).astype(wd, copy=False), \
        gb.reshape(w.shape).astype(wd, copy=False)


def _norm_double(kind, ggs, g, x, w, p, eps, stats=None, saved=None):
    """d(gx, gw, gb)/d(g, x, w) against (ggx, ggw, ggb), in ember ops (NOTE [ Native norms ]). `saved`: the
    forward's (mean, rstd), used as constants as torch's batch and layer norm double backwards use them
    (so their third derivatives are torch's); without it they are computed from x (group norm's, whose torch
    double backward is a differentiable decomposition)."""
    ggx, ggw, ggb = ggs
    if w is None:  # (the backward's weight and bias gradients were dropped: no input of the norm needs them)
        ggw = ggb = None
    xshape, axes, wshape = _layout(kind, tuple(x.shape), p)
    xv, gv = x.reshape(xshape), g.reshape(xshape)
    if saved is not None:
        mean, r = saved
    elif stats is None:
        mean = xv.mean(axes, keepdim=True)
        r = ((xv - mean) ** 2).mean(axes, keepdim=True).add(eps).rsqrt()
    else:
        mean, r = stats[0].reshape(wshape), stats[1].reshape(wshape).add(eps).rsqrt()
    xhat = (xv - mean) * r

    def m(t):
        return t.mean(axes, keepdim=True)

    def L(v):
        return r * (v - m(v) - xhat * m(v * xhat)) if stats is None else r * v

    wv = None if w is None else w.reshape(wshape)
    h = gv if wv is None else gv * wv
    dg = dx = dw = None
    if ggx is not None:
        u = ggx.reshape(xshape)
        lu = L(u)
        dg = lu if wv is None else lu * wv
        if w is not None:
            dw = (gv * lu).sum_to_size(wshape).reshape(w.shape)
        if stats is None:
            mu, mh, mux, mhx = m(u), m(h), m(u * xhat), m(h * xhat)
            dx = -(r * r) * (xhat * (m(u * h) - mu * mh - 3 * mux * mhx) + mhx * (u - mu) + mux * (h - mh))
    if ggw is not None:
        gwv = ggw.reshape(wshape)
        dg = gwv * xhat if dg is None else dg + gwv * xhat
        dx = L(gv * gwv) if dx is None else dx + L(gv * gwv)
    if ggb is not None:
        gbv = ggb.reshape(wshape).expand(xshape)
        dg = gbv if dg is None else dg + gbv
    shape = tuple(x.shape)
    return (None if dg is None else dg.reshape(shape)), (None if dx is None else dx.reshape(shape)), dw


def _norm_meta(kind, x, w, p, stats_shape):
    """The meta outputs (out like the input, mean, rstd) of a norm."""
    dt = x._data.dtype
    return meta_array(tuple(x.shape), dt, like_strides(x) if kind == "batch" else None), \
        meta_array(stats_shape, dt), meta_array(stats_shape, dt)


def _grads_meta(g, x, w):
    dt = x._data.dtype
    wshape = tuple(w.shape) if w is not None else (0,)
    wd = w._data.dtype if w is not None else dt
    return meta_array(tuple(x.shape), dt), meta_array(wshape, wd), meta_array(wshape, wd)


def _first(g):
    return g[0] if type(g) is tuple else g


@defop("native_layer_norm", "NativeLayerNormBackward0", NN, save_output=True, dtypes=FLOATING,
       error="LayerNormKernelImpl")
def layer_norm(x, weight, bias, axes, eps):
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing `axes` (biased variance)."""
    out, mean, rstd = _norm_forward("layer", x, weight, bias, (axes,), eps)
    return c_contiguous(out), mean, rstd  # (torch's layer norm reads x.contiguous(): its result is row-major)


@defop("native_layer_norm_backward", "NativeLayerNormBackwardBackward0", NN)
def layer_norm_backward(g, x, mean, rstd, weight, bias, axes, eps):
    return _norm_backward("layer", g, x, weight, mean, rstd, (axes,))


@defop("native_group_norm", "NativeGroupNormBackward0", NN, save_output=True, dtypes=FLOATING,
       error="GroupNormKernelImpl")
def group_norm(x, weight, bias, groups, eps):
    done = _native.group_norm(x, weight, bias, groups, eps)  # (None: not float32 C-contiguous, or small)
    if done is not None:
        return done
    out, mean, rstd = _norm_forward("group", x, weight, bias, (groups,), eps)
    return out, mean.reshape(x.shape[0], groups), rstd.reshape(x.shape[0], groups)


@defop("native_group_norm_backward", "NativeGroupNormBackwardBackward0", NN)
def group_norm_backward(g, x, mean, rstd, weight, groups, eps):
    done = _native.group_norm_backward(g, x, weight, mean, rstd, groups)
    if done is not None:
        return done if weight is not None else (done[0], np.zeros(0, x.dtype), np.zeros(0, x.dtype))
    return _norm_backward("group", g, x, weight, mean.reshape(mean.shape + (1, 1)),
                          rstd.reshape(rstd.shape + (1, 1)), (groups,))


# (torch's backward ops take edges to their inputs but the running statistics: the saved statistics' edges
# are None, as the forward's statistics outputs are not differentiable)
layer_norm.edges = group_norm.edges = 3
layer_norm_backward.edges, group_norm_backward.edges = 6, 5
layer_norm.meta_(lambda x, w, b, axes, eps: _norm_meta("layer", x, w, None, tuple(x.shape[:axes[0]])
                                                         + (1,) * len(axes)))
group_norm.meta_(lambda x, w, b, groups, eps: _norm_meta("group", x, w, None, (x.shape[0], groups)))
layer_norm_backward.meta_(lambda g, x, mean, rstd, w, *_: _grads_meta(g, x, w))
group_norm_backward.meta_(lambda g, x, mean, rstd, w, *_: _grads_meta(g, x, w))


@layer_norm.derivative_
def _(g, x, weight, bias, axes, eps, *, out):
    return dispatch(layer_norm_backward, (_first(g), x, out[1].detach(), out[2].detach(), weight, bias), (axes, eps))


@layer_norm.jvp_
def _(inputs, params, out, tangents):
    """With xhat = (x - mean) rstd and u = tx - mean(tx): dxhat = rstd (u - xhat mean(xhat u)),
    drstd = -rstd^2 mean(xhat u); the output's tangent is dxhat w + xhat tw + tb."""
    (x, w, _), (tx, tw, tb), axes = inputs, tangents, params[0]
    y, mean, rstd = out
    xhat = (x - mean) * rstd
    res = dmean = drstd = None
    if tx is not None:
        dmean = tx.mean(axes, keepdim=True)
        u = tx - dmean
        m = (xhat * u).mean(axes, keepdim=True)
        res = rstd * (u - xhat * m)
        if w is not None:
            res = res * w
        drstd = -(rstd * rstd) * m
    if tw is not None:
        res = xhat * tw if res is None else res + xhat * tw
    if tb is not None:
        res = tb.expand(y.shape) if res is None else res + tb
    return res, dmean, drstd


@layer_norm_backward.derivative_
def _(ggs, g, x, mean, rstd, weight, bias, axes, eps):
    dg, dx, dw = _norm_double("layer", ggs, g, x, weight, (axes,), eps, saved=(mean, rstd))
    return dg, dx, None, None, dw, None


@group_norm.derivative_
def _(g, x, weight, bias, groups, eps, *, out):
    return dispatch(group_norm_backward, (_first(g), x, out[1].detach(), out[2].detach(), weight), (groups, eps))


@group_norm_backward.derivative_
def _(ggs, g, x, mean, rstd, weight, groups, eps):
    dg, dx, dw = _norm_double("group", ggs, g, x, weight, (groups,), eps)
    return dg, dx, None, None, dw


# NOTE [ Half-precision batch norm ]
# torch's CPU batch norm of a float16 / bfloat16 input (with parameters of the same dtype) keeps its batch
# statistics in that dtype: the mean and the inverse standard deviation are rounded to it (for bfloat16 the
# variance sum too) before `x * alpha + beta` is computed in float32 and rounded once; the running statistics
# are updated as `momentum * stat + (1 - momentum) * running` in double, rounded once, except a bfloat16
# running mean, which torch updates in bfloat16 steps (the momentum, each product and the sum rounded),
# as measured against torch on random batches.

# NOTE [ Batch norm updates its running statistics ]
# As torch's native_batch_norm, the batch-norm op takes the running statistics as inputs and, in training
# mode, updates them in place (torch's `Tensor(a!)` arguments), so a mode sees the update as part of the op,
# not as constants computed on the side. Inputs: (x, weight, bias, running_mean, running_var), any of the
# last four None; params: training, momentum, eps and `per_instance` (instance norm: statistics per sample,
# then averaged over the batch). The running statistics get the unbiased variance (batch norm: computed in
# float64 for half-precision inputs), and are updated as torch's `running.mul_(1 - momentum).add_(stat *
# momentum)` in their own dtype. Their version counters move as torch's do: not at all for batch norm (its
# kernel writes them directly), once for instance norm (torch copies the averaged statistics in); the caller
# bumps those before dispatching, so the node saves them at their updated version. In eval mode the op
# normalizes with the running statistics and its saved mean and rstd are empty, as torch's.


@defop("native_batch_norm", "NativeBatchNormBackward0", NN, save_output=True, dtypes=FLOATING, error="batch_norm")
def batch_norm(a, weight, bias, running_mean, running_var, training, momentum, eps, per_instance=False):
    if not training:
        out, _, _ = _norm_forward("batch", a, weight, bias, (training, eps, False), eps, (running_mean, running_var))
        return out, np.zeros(0, out.dtype), np.zeros(0, out.dtype)
    p = (training, eps, per_instance)
    done = None if per_instance or a.dtype != np.float32 else _native.batch_norm(a, weight, bias, eps)
    if done is None:
        out, mean, rstd = _norm_forward("batch", a, weight, bias, p, eps)
    else:
        out, mean, rstd, var = done
    if running_mean is not None:
        axes = _layout("batch", a.shape, p)[1]
        n = int(np.prod([a.shape[d] for d in axes]))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if done is not None:  # (the C kernel's statistics, as the NumPy lines below compute them)
                mean_, var = mean, var * (n / (n - 1))
            elif per_instance:
                mean_, var = a.mean(axis=axes).mean(0), (a.var(axis=axes) * n / (n - 1)).mean(0)
            else:
                w = a.astype(np.float64) if a.dtype.itemsize < 4 else a
                mean_, var = w.mean(axis=axes), w.var(axis=axes) * (n / (n - 1))
                if a.dtype.kind == "V":  # NOTE [ Half-precision batch norm ]
                    mean_ = mean_.astype(a.dtype)
        for running, stat in ((running_mean, mean_), (running_var, var)):
            if running is running_mean and running.dtype.kind == "V":  # NOTE [ Half-precision batch norm ]
                m, k = (np.asarray(v, running.dtype) for v in (momentum, 1 - momentum))
                running[...] = np.asarray(stat, running.dtype) * m + running * k  # bfloat16 steps, each rounded
                continue
            # torch's update, `momentum * stat + (1 - momentum) * running` in double, rounded once
            running[...] = momentum * np.asarray(stat, np.float64) + (1 - momentum) * running.astype(np.float64)
    stats = a.shape[1] if not per_instance else mean.shape[:2]
    return out, mean.reshape(stats), rstd.reshape(stats)


@defop("native_batch_norm_backward", "NativeBatchNormBackwardBackward0", NN)
def batch_norm_backward(g, x, weight, mean, rstd, running_mean, running_var, training, eps, per_instance=False):
    p = (training, eps, per_instance)
    wshape = _layout("batch", x.shape, p)[2]
    if training and not per_instance and x.dtype == np.float32:
        done = _native.batch_norm_backward(g, x, weight, mean, rstd)
        if done is not None:
            if weight is None:
                return done[0], np.zeros(0, x.dtype), np.zeros(0, x.dtype)
            return done
    if training:
        keep = (1,) + wshape if not per_instance else x.shape[:2] + (1,) * (x.ndim - 2)
        return _norm_backward("batch", g, x, weight, mean.reshape(keep), rstd.reshape(keep), p)
    xw = _wide(x)[0]
    rm = running_mean.reshape(wshape).astype(xw.dtype, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = 1.0 / np.sqrt(running_var.reshape(wshape).astype(xw.dtype, copy=False) + eps)
    return _norm_backward("batch", g, x, weight, rm, r, p, train=False)


batch_norm.edges, batch_norm_backward.edges = 3, 5
# (NOTE [ What torch's autograd refuses ] in ember/autograd/graph.py)
batch_norm.refuses_(ARGUMENT, "native_batch_norm", inputs={3: "running_mean", 4: "running_var"})


@batch_norm.meta_
def _(x, w, b, rm, rv, training, momentum, eps, per_instance=False):
    stats = (0,) if not training else (x.shape[1],) if not per_instance else tuple(x.shape[:2])
    return _norm_meta("batch", x, w, None, stats)


batch_norm_backward.meta_(lambda g, x, w, *_: _grads_meta(g, x, w))


@batch_norm.derivative_
def _(g, x, weight, bias, running_mean, running_var, training, momentum, eps, per_instance=False, *, out):
    grads = dispatch(batch_norm_backward, (_first(g), x, weight, out[1].detach(), out[2].detach(), running_mean,
                                           running_var), (training, eps, per_instance))
    return grads + (None, None)


@batch_norm_backward.derivative_
def _(ggs, g, x, weight, mean, rstd, running_mean, running_var, training, eps, per_instance=False):
    stats = None if training else (running_mean, running_var)
    keep = (1, -1) + (1,) * (len(x.shape) - 2) if not per_instance else tuple(x.shape[:2]) + (1,) * (len(x.shape) - 2)
    saved = (mean.reshape(keep), rstd.reshape(keep)) if training else None
    dg, dx, dw = _norm_double("batch", ggs, g, x, weight, (training, eps, per_instance), eps, stats, saved)
    return dg, dx, dw, None, None, None, None


# ---- embedding -----------------------------------------------------------------------------------------


@defop("embedding", "EmbeddingBackward0", NN, saves="meta", tags=("index",))
def embedding(weight, idx, padding_idx, scale_grad_by_freq=False):
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):  # (NumPy would wrap negative indices)
        raise IndexError("index out of range in self")
    return weight[idx]


@defop("embedding_dense_backward", "EmbeddingDenseBackwardBackward0", NN, saves="none", tags=("index",))
def embedding_backward(g, idx, num_weights, padding_idx, scale_grad_by_freq=False):
    """Rows of g summed into (num_weights, D) by index; padding_idx rows get none; with scale_grad_by_freq
    each row is divided by how often its index occurs in the batch."""
    flat = idx.reshape(-1)
    g2 = g.reshape(flat.size, -1)
    if scale_grad_by_freq:
        counts = np.bincount(flat % num_weights, minlength=num_weights)
        g2 = g2 / counts[flat % num_weights][:, None].astype(g.dtype)
    if padding_idx is not None and padding_idx >= 0:
        g2 = np.where((flat == padding_idx)[:, None], 0, g2)
    out = np.zeros((num_weights, g2.shape[1]), g.dtype)
    if g2.size >= _native.MIN_SIZE and flat.size and 0 <= flat.min() and flat.max() < num_weights and \
            _native.index_add(out, 0, flat, np.ascontiguousarray(g2)):
        return out  # (np.add.at's order: the same bits, NOTE [ Choosing the native kernel ])
    np.add.at(out, flat, g2)
    return out


embedding.meta_(lambda weight, idx, *_: meta_array(tuple(idx.shape) + tuple(weight.shape[1:]), weight._data.dtype))
embedding_backward.meta_(lambda g, idx, num_weights, *_: meta_array((num_weights, g.shape[-1]), g._data.dtype))


@embedding.derivative_
def _(g, weight, idx, padding_idx, scale_grad_by_freq=False):
    return dispatch(embedding_backward, (g, idx), (weight.shape[0], padding_idx, scale_grad_by_freq)), None


@embedding_backward.derivative_
def _(gg, g, idx, num_weights, padding_idx, scale_grad_by_freq=False):
    out = dispatch(embedding, (gg, idx), (padding_idx,))
    if scale_grad_by_freq:
        wrapped = idx % num_weights
        counts = wrapped.reshape(-1).bincount(minlength=num_weights)
        out = out / counts[wrapped].unsqueeze(-1).to(gg.dtype)
    if padding_idx is not None and padding_idx >= 0:
        out = where((idx != padding_idx).unsqueeze(-1), out, 0.0)
    return out, None


# ---- public Tensor methods (torch.softmax, Tensor.log_softmax, ...) ---------------------------------------


def _softmax_public(op):
    def fn(input, dim, dtype=None, *, out=None, _stacklevel=None):
        if dtype is not None:
            input = input.to(dtype)
        n = max(input.dim(), 1)
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
        r = dispatch(op, (input,), (dim % n if input.dim() else None,))
        return r if out is None else finish_out(r, out)
    fn.__name__ = op.name  # (before `method` publishes it under its name)
    return fn


softmax_ = method("softmax")(_softmax_public(softmax))
log_softmax_ = method("log_softmax")(_softmax_public(log_softmax))
softmax_.__name__, log_softmax_.__name__ = "softmax", "log_softmax"
public["softmax"], public["log_softmax"] = softmax_, log_softmax_


# ---- ctc_loss --------------------------------------------------------------------------------------------

# NOTE [ CTC forward-backward ]
# The extended label sequence l' puts a blank before, between and after the target labels (length 2S+1).
# alpha[t, n, s] is the log-probability of the path prefixes ending at l'[s] at time t, beta the suffixes
# starting there (both include log_probs[t, n, l'[s]], as in torch). Both recursions run over time only;
# each step is a three-way logsumexp over all batch rows and label positions at once (s, s-1, and s-2
# where l'[s] != l'[s-2]). Rows past a sample's input length (alpha) or before it (beta) carry -inf.
# The gradient w.r.t. log_probs is torch's: (exp(lp) - sum_{s: l'[s]=c} exp(alpha + beta + nll - lp)) * g,
# i.e. the gradient w.r.t. the logits under a log_softmax, which log_softmax's backward passes unchanged.
# The sum over s is formed as exp(alpha + beta - lp - m) (shifted by its row max m) times a one-hot
# (L, C) matrix per sample: one batched GEMM. Time steps past the input length get 0.

_NEG_INF = -np.inf


def _ctc_ext(targets, target_lengths, n, blank):
    """Extended labels l' (N, L), the valid mask (N, L) and the skip mask (s-2 -> s allowed), L = 2*Smax+1."""
    tl = np.asarray(target_lengths, np.int64)
    if targets.ndim == 1:  # concatenated
        offs = np.concatenate([[0], np.cumsum(tl)[:-1]])
        smax = int(tl.max()) if n else 0
        pos = offs[:, None] + np.arange(smax)[None, :]
        tg = targets[np.minimum(pos, max(targets.shape[0] - 1, 0))] if targets.size else np.zeros((n, smax), np.int64)
    else:
        tg = targets
    smax = tg.shape[1]
    ext = np.full((n, 2 * smax + 1), blank, np.int64)
    ext[:, 1::2] = tg
    length = 2 * smax + 1
    valid = np.arange(length)[None, :] < (2 * tl + 1)[:, None]
    ext = np.where(valid, ext, blank)
    skip = np.zeros((n, length), bool)
    skip[:, 2:] = ext[:, 2:] != ext[:, :-2]
    return ext, valid, skip


def _lse3(a, b, c):
    m = np.maximum(np.maximum(a, b), c)
    m = np.where(m == _NEG_INF, 0, m)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(a - m) + np.exp(b - m) + np.exp(c - m)) + m


def _shift(a, k):
    """a shifted right (k > 0) or left (k < 0) along the last axis, filled with -inf."""
    out = np.full_like(a, _NEG_INF)
    if k > 0:
        out[:, k:] = a[:, :-k]
    else:
        out[:, :k] = a[:, -k:]
    return out


def _ctc_alpha(lpe, valid, skip, il):
    """log alpha (T, N, L) from the gathered log-probs lpe (T, N, L)."""
    t_max, n, length = lpe.shape
    alpha = np.full(lpe.shape, _NEG_INF, lpe.dtype)
    alpha[0, :, :2] = lpe[0, :, :2]
    alpha[0] = np.where(valid, alpha[0], _NEG_INF)
    for t in range(1, t_max):
        prev = alpha[t - 1]
        alpha[t] = np.where(valid, _lse3(prev, _shift(prev, 1), np.where(skip, _shift(prev, 2), _NEG_INF))
                            + lpe[t], _NEG_INF)
    return alpha


def _ctc_beta(lpe, valid, skip, il, tl):
    t_max, n, length = lpe.shape
    beta = np.full(lpe.shape, _NEG_INF, lpe.dtype)
    pos = np.arange(length)[None, :]
    last = valid & (pos >= 2 * tl[:, None] - 1)  # the two end positions of each sample
    skip_next = np.zeros_like(skip)
    skip_next[:, :-2] = skip[:, 2:]
    for t in range(t_max - 1, -1, -1):
        start = (t == il - 1)[:, None]
        if t + 1 < t_max:
            nxt = beta[t + 1]
            rec = _lse3(nxt, _shift(nxt, -1), np.where(skip_next, _shift(nxt, -2), _NEG_INF)) + lpe[t]
        else:
            rec = np.full((n, length), _NEG_INF, lpe.dtype)
        beta[t] = np.where(start, np.where(last, lpe[t], _NEG_INF), np.where(valid, rec, _NEG_INF))
    return beta


@defop("_ctc_loss", "CtcLossBackward0", NN, save_output=True, tags=("index",))
def ctc_loss(lp, targets, il, tl, blank, zero_infinity):
    """(nll (N,), log_alpha (N, T, L)) of log_probs (T, N, C); il/tl are tuples of ints (torch's int[]
    params), validated. zero_infinity only matters to the gradient (the caller zeroes infinite losses)."""
    il, tl = np.asarray(il, np.int64), np.asarray(tl, np.int64)
    t_max, n, _ = lp.shape
    ext, valid, skip = _ctc_ext(targets, tl, n, blank)
    lpe = np.take_along_axis(lp, np.broadcast_to(ext[None], (t_max,) + ext.shape), axis=2)
    alpha = _ctc_alpha(lpe, valid, skip, il) if t_max else lpe
    rows = np.arange(n)
    end = alpha[np.maximum(il - 1, 0), rows] if t_max else np.full((n, ext.shape[1]), _NEG_INF, lp.dtype)
    l1 = end[rows, 2 * tl]
    l2 = np.where(tl > 0, end[rows, np.maximum(2 * tl - 1, 0)], _NEG_INF)
    ll = np.logaddexp(l1, l2)
    ll = np.where(il > 0, ll, np.where(tl == 0, 0.0, _NEG_INF))
    return (-ll).astype(lp.dtype), c_contiguous(alpha.transpose(1, 0, 2))


@defop("_ctc_loss_backward", "NotImplemented", NN, saves="none", tags=("index",))
def ctc_loss_backward(g, lp, nll, log_alpha, targets, il, tl, blank, zero_infinity):
    """torch's _ctc_loss_backward: the gradient w.r.t. log_probs (NOTE [ CTC forward-backward ])."""
    il, tl = np.asarray(il, np.int64), np.asarray(tl, np.int64)
    t_max, n, c = lp.shape
    ext, valid, skip = _ctc_ext(targets, tl, n, blank)
    lpe = np.take_along_axis(lp, np.broadcast_to(ext[None], (t_max,) + ext.shape), axis=2)
    beta = _ctc_beta(lpe, valid, skip, il, tl)
    with np.errstate(invalid="ignore"):
        r = log_alpha.transpose(1, 0, 2) + beta - lpe  # log mass of the paths through (t, s)
        m = r.max(axis=2, keepdims=True)
        e = np.exp(r - m).transpose(1, 0, 2)  # (N, T, L)
        onehot = (ext[:, :, None] == np.arange(c)[None, None, :]).astype(lp.dtype)
        mass = np.matmul(e, onehot).transpose(1, 0, 2) * np.exp(m + nll[None, :, None])  # (T, N, C)
    grad = (np.exp(lp) - mass) * g.reshape(1, n, 1)
    live = np.arange(t_max)[:, None] < il[None, :]
    if zero_infinity:
        live = live & (nll != np.inf)[None, :]
    return np.where(live[:, :, None], grad, 0).astype(lp.dtype, copy=False)


@ctc_loss.meta_
def _(lp, targets, il, tl, blank, zero_infinity):  # (the lengths are params, known without the data)
    t_max, n, _ = lp.shape
    return meta_array((n,), lp._data.dtype), \
        meta_array((n, t_max, 2 * (int(np.max(tl)) if n else 0) + 1), lp._data.dtype)


ctc_loss_backward.meta_(lambda g, lp, *_: _same_shape(lp))


@ctc_loss.derivative_
def _(g, lp, targets, il, tl, blank, zero_infinity, *, out):
    g0 = g[0] if type(g) is tuple else g
    return dispatch(ctc_loss_backward, (g0, lp, out[0], out[1], targets), (il, tl, blank, zero_infinity)), None


@ctc_loss_backward.derivative_
def _(gg, *args):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")

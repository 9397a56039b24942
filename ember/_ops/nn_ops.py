"""Neural-network primitives: activations, softmax/log_softmax, nll_loss, normalization, embedding.

Each is a NumPy kernel plus a derivative written in ember ops (so it differentiates again), named as
torch names its backward node (`GeluBackward0`, `LogSoftmaxBackward0`, ...). The public, torch-signature
functions live in ember/nn/functional; composites (tanhshrink, softsign, most losses) are written there.

NOTE [ Low-precision accumulation ]
float16/bfloat16 inputs to reductions (softmax, norms, losses) are computed in float32 and rounded once
at the end, as torch's CPU kernels accumulate in float.
"""

import numpy as np

from .._dispatch import COMPLEX, FLOATING, INTEGRAL, NN, POINTWISE, REAL, defop, dispatch, not_implemented
from .._meta import like_strides, meta_array
from ..autograd.graph import needs_grad
from ._util import c_contiguous, method, public
from .pointwise import where
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
    return NotImplementedError("clamp is not supported for complex types")


def _softmax_error(name, d, a, dim):
    last = a.ndim == 0 or dim is None or dim % a.ndim == a.ndim - 1
    return not_implemented(f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl", d)


@defop("leaky_relu", "LeakyReluBackward0", POINTWISE, "same", dtypes=FLOATING, error="leaky_relu_cpu")
def leaky_relu(a, slope):
    return np.where(a > 0, a, a * _as(slope, a)).astype(a.dtype, copy=False)


@leaky_relu.derivative_
def _(g, a, slope):
    return dispatch(leaky_relu_backward, (g, a), (slope,))


@defop("leaky_relu_backward", "LeakyReluBackwardBackward0", POINTWISE, "same")
def leaky_relu_backward(g, a, slope):
    return np.where(a > 0, g, g * _as(slope, g)).astype(g.dtype, copy=False)


@leaky_relu_backward.derivative_
def _(gg, g, a, slope):  # (torch's formula gives the input zeros)
    return dispatch(leaky_relu_backward, (gg, a), (slope,)), (a.new_zeros(a.shape) if needs_grad(1) else None)


@defop("hardtanh", "HardtanhBackward0", POINTWISE, "same", dtypes=INTEGRAL | FLOATING, error=_hardtanh_error)
def hardtanh(a, lo, hi):
    return np.clip(a, _as(lo, a), _as(hi, a))


@hardtanh.derivative_
def _(g, a, lo, hi):
    return where((a > lo) & (a < hi), g, 0.0)


@defop("threshold", "ThresholdBackward0", POINTWISE, "same", dtypes=REAL - {"bool"}, error="threshold_cpu")
def threshold(a, th, value):
    return np.where(a > th, a, _as(value, a)).astype(a.dtype, copy=False)


@threshold.derivative_
def _(g, a, th, value):
    return where(a > th, g, 0.0)


@defop("hardshrink", "HardshrinkBackward0", POINTWISE, "same", dtypes=FLOATING, error="hardshrink_cpu")
def hardshrink(a, lambd):
    return np.where(np.abs(a) > lambd, a, 0).astype(a.dtype, copy=False)


@hardshrink.derivative_
def _(g, a, lambd):
    return where((a > lambd) | (a < -lambd), g, 0.0)


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
    bx = w * beta
    soft = (np.maximum(bx, 0) + np.log1p(np.exp(-np.abs(bx)))) / beta
    return np.where(bx > thresh, w, soft).astype(dt, copy=False)


@softplus.derivative_
def _(g, a, beta, thresh):
    return where(a * beta > thresh, g, g * (a * beta).sigmoid())


@defop("gelu", "GeluBackward0", POINTWISE, "same", dtypes=FLOATING, error="GeluKernelImpl")
def gelu(a, approximate):
    w, dt = _wide(a)
    if approximate == "tanh":
        inner = 0.7978845608028654 * (w + 0.044715 * w * w * w)
        return (0.5 * w * (1 + np.tanh(inner))).astype(dt, copy=False)
    return (0.5 * w * (1 + _erf_like(w * _SQRT1_2).astype(w.dtype, copy=False))).astype(dt, copy=False)


@defop("gelu_backward", "GeluBackwardBackward0", POINTWISE, "same")
def gelu_backward(g, a, approximate):
    w, dt = _wide(a)
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
    e = np.exp(-np.abs(w))
    s = np.where(w >= 0, 1 / (1 + e), e / (1 + e))
    return (w * s).astype(dt, copy=False)


@silu.derivative_
def _(g, a):
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
       error=lambda d, a, dim: _softmax_error("softmax", d, a, dim))
def softmax(a, dim):
    w, dt = _wide(a)
    e = np.exp(w - np.max(w, axis=dim, keepdims=True))
    e /= np.sum(e, axis=dim, keepdims=True)
    return c_contiguous(e.astype(dt, copy=False))  # (torch's softmax output is contiguous)


def _same_shape(a, *_):
    """The meta rule of an op whose output is one contiguous tensor of its first input's shape and dtype."""
    return meta_array(tuple(a.shape), a._data.dtype)


softmax.meta_(_same_shape)


@softmax.derivative_
def _(g, a, dim, *, out):
    return out * (g - (g * out).sum(dim, keepdim=True))


@defop("log_softmax", "LogSoftmaxBackward0", NN, saves="none", save_output=True, dtypes=FLOATING,
       error=lambda d, a, dim: _softmax_error("log_softmax", d, a, dim))
def log_softmax(a, dim):
    w, dt = _wide(a)
    shifted = w - np.max(w, axis=dim, keepdims=True)
    with np.errstate(divide="ignore"):
        out = shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))
    return c_contiguous(out.astype(dt, copy=False))  # (contiguous, as torch's)


log_softmax.meta_(_same_shape)


@log_softmax.derivative_
def _(g, a, dim, *, out):
    return g - out.exp() * g.sum(dim, keepdim=True)


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


def _nll_error(d, x, *rest):
    """torch runs inputs of 3 or more dims (N, C, d1, ...) with its 2-d kernel, whose name its error gives."""
    return not_implemented("nll_loss2d_forward_out_frame" if x.ndim > 2 else "nll_loss_out_frame", d)


@defop("nll_loss", "NllLossBackward0", NN, dtypes=FLOATING, error=_nll_error, tags=("index",))
def nll_loss(x, target, weight, reduction, ignore_index):
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


@defop("nll_loss_backward", "NllLossBackwardBackward0", NN, tags=("index",))
def nll_loss_backward(g, x, target, weight, reduction, ignore_index):
    """d nll_loss / d x: -weight[target] * g scattered at the target class (g broadcast per element)."""
    _, w, safe = _nll_parts(x, target, weight, ignore_index)
    if reduction == "mean":
        w = w / w.sum()
    gx = np.zeros(x.shape, x.dtype)
    np.put_along_axis(gx, np.expand_dims(safe, 1), np.expand_dims(-w * g, 1), axis=1)
    return gx


@nll_loss.meta_
def _(x, target, weight, reduction, ignore_index):
    return meta_array(tuple(target.shape) if reduction == "none" else (), x._data.dtype)


nll_loss_backward.meta_(lambda g, x, *_: _same_shape(x))


@nll_loss.derivative_
def _(g, x, target, weight, reduction, ignore_index):
    return dispatch(nll_loss_backward, (g, x, target, weight), (reduction, ignore_index)), None, None


@nll_loss_backward.derivative_
def _(gg, g, x, target, weight, reduction, ignore_index):
    # linear in g, and its adjoint is nll_loss itself: sum_n -w_n * gg[n, t_n] (over the total weight for mean)
    return dispatch(nll_loss, (gg, target, weight), (reduction, ignore_index)), None, None, None


# ---- normalization -------------------------------------------------------------------------------------


@np.errstate(over="ignore", invalid="ignore", divide="ignore")  # (extreme values give inf/nan, as torch's)
def _normalize_kernel(a, axes, eps):
    w, dt = _wide(a)
    mean = w.mean(axis=axes, keepdims=True)
    c = w - mean
    var = np.mean(c * c, axis=axes, keepdims=True)
    return (c / np.sqrt(var + eps)).astype(dt, copy=False)


def _normalize_derivative(g, a, axes, eps, *, out):
    mean = a.mean(axes, keepdim=True)
    rstd = 1 / (((a - mean) ** 2).mean(axes, keepdim=True) + eps).sqrt()
    xhat = (a - mean) * rstd
    return rstd * (g - g.mean(axes, keepdim=True) - xhat * (g * xhat).mean(axes, keepdim=True))


def _norm_op(name, node, kernel_name, meta):
    op = defop(name, node, NN, dtypes=FLOATING, error=kernel_name)(_normalize_kernel)
    op.derivative_(lambda g, a, axes, eps: _normalize_derivative(g, a, axes, eps, out=None))
    op.meta_(meta)
    return op


def _like_input(a, *_):
    """The meta rule of batch norm: its output is laid out as its input (torch's `empty_like`)."""
    return meta_array(tuple(a.shape), a._data.dtype, like_strides(a))


#: (x - mean) / sqrt(var + eps) over `axes` (biased variance); the affine part is applied by the caller
layer_norm = _norm_op("native_layer_norm", "NativeLayerNormBackward0", "LayerNormKernelImpl", _same_shape)
batch_norm = _norm_op("native_batch_norm", "NativeBatchNormBackward0", "batch_norm", _like_input)
group_norm = _norm_op("native_group_norm", "NativeGroupNormBackward0", "GroupNormKernelImpl", _same_shape)


# NOTE [ Batch norm updates its running statistics ]
# As torch's native_batch_norm, the training-mode batch-norm op takes the running statistics as inputs and
# updates them in place (torch's `Tensor(a!)` arguments), so a mode sees the update as part of the op, not
# as constants computed on the side. Inputs: (x, running_mean, running_var); params: the normalized axes,
# eps, momentum and `per_instance` (instance norm: statistics per sample, then averaged over the batch).
# The running statistics get the unbiased variance (batch norm: computed in float64 for half-precision inputs), and are
# updated as torch's `running.mul_(1 - momentum).add_(stat * momentum)` in their own dtype. Their version
# counters move as torch's do: not at all for batch norm (its kernel writes them directly), once for instance
# norm (torch copies the averaged statistics in); the caller bumps those before dispatching, so the node saves
# them at their updated version. The gradient flows to x alone.


@defop("native_batch_norm", "NativeBatchNormBackward0", NN, overload="training")
@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def batch_norm_train(a, running_mean, running_var, axes, eps, momentum, per_instance):
    out = _normalize_kernel(a, axes, eps)
    n = int(np.prod([a.shape[d] for d in axes]))
    if per_instance:
        mean, var = a.mean(axis=axes).mean(0), (a.var(axis=axes) * n / (n - 1)).mean(0)
    else:
        w = a.astype(np.float64) if a.dtype.itemsize < 4 else a
        mean, var = w.mean(axis=axes), w.var(axis=axes) * (n / (n - 1))
    for running, stat in ((running_mean, mean), (running_var, var)):
        np.multiply(running, 1 - momentum, out=running)
        running += np.multiply(np.asarray(stat).astype(running.dtype), momentum)
    return out


batch_norm_train.meta_(_like_input)  # (the running statistics are updated in place: nothing to compute)


@batch_norm_train.derivative_
def _(g, a, running_mean, running_var, axes, eps, momentum, per_instance):
    return _normalize_derivative(g, a, axes, eps, out=None), None, None


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
    def fn(input, dim, dtype=None, *, _stacklevel=None):
        if dtype is not None:
            input = input.to(dtype)
        n = max(input.dim(), 1)
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
        return dispatch(op, (input,), (dim % n if input.dim() else None,))
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

"""Normalization, dropout and embedding functions of ember.nn.functional.

The norms are one primitive per flavour, affine part and running statistics included, as torch's native
ops (NOTE [ Native norms ] in ember/_ops/nn_ops.py); the argument checks and dtype rules are here.
"""

import math

import ml_dtypes

from ... import _dtypes
from ..._argparse import call_error
from ..._dispatch import FLOATING, FLOATING_COMPLEX, _modes, dispatch, dtype_word, require_dtype
from ..._meta import no_data
from ..._ops import nn_ops as P
from ..._ops._util import typed
from ..._ops.creation import arange
from ..._ops.sorting import searchsorted
from ..._tensor import Tensor, _version_counter
from ...autograd.grad_mode import no_grad

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "local_response_norm",
           "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
           "embedding", "embedding_bag"]


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, per_instance):
    """The output of the native batch-norm op, which applies the affine part and, training, updates the
    running statistics (NOTE [ Batch norm updates its running statistics ] in _ops/nn_ops.py)."""
    if training and per_instance and running_mean is not None:  # torch's instance norm copies the averaged
        for r in (running_mean, running_var):  # statistics in (one copy_ each); batch norm's kernel writes
            _version_counter(r)[0] += 1        # them without a version bump
    if training and (running_mean is None or running_var is None):
        running_mean = running_var = None
    return dispatch(P.batch_norm, (input, weight, bias, running_mean, running_var),
                    (bool(training), momentum, eps, per_instance))[0]


def _mixed_dtypes(input, *params):
    """torch's CPU batch norm takes parameters of the input's dtype, or float32 ones for a reduced-precision
    input; anything else is "mixed dtype"."""
    d = input.dtype
    for t in params:
        if t is not None and t.dtype is not d and not (
                d in (_dtypes.float16, _dtypes.bfloat16) and t.dtype is _dtypes.float32):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _widened(input, *params):
    """A float16 / bfloat16 input with float32 parameters: torch computes in float32 and returns the input's
    dtype (`_mixed_dtypes` allows no other mix)."""
    return any(t is not None and t.dtype is not input.dtype for t in params)


def _check_batch_norm(input, running_mean, running_var, weight, bias, training):
    """torch's checks of batch norm's arguments (_batch_norm_impl_index), before any kernel."""
    c = input.shape[1] if input.dim() > 1 else 1
    try:
        for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                        ("bias", bias)):
            if t is None:
                if not training and name.startswith("running"):
                    raise RuntimeError(f"{name} must be defined in evaluation mode")
            elif t.numel() != c:
                raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    require_dtype(input, FLOATING, "batch_norm")
    if training:
        size = input.numel() // input.shape[1]
        if size == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    if input.numel():
        _check_batch_norm(input, running_mean, running_var, weight, bias, training)
    _mixed_dtypes(input, running_mean, running_var, weight, bias)
    if _widened(input, running_mean, running_var, weight, bias):
        return batch_norm(input.float(), running_mean, running_var, weight, bias, training, momentum,
                          eps).to(input.dtype)
    return _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if use_input_stats:  # (torch's _verify_spatial_size, before its parser sees the other arguments)
        try:
            spatial = math.prod(input.shape[2:])
        except AttributeError as e:  # NOTE [ Argument types on the error path ]
            raise call_error(e) from None
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    try:
        if any(t is not None and not isinstance(t, Tensor) for t in (weight, bias, running_mean, running_var)):
            raise TypeError("instance_norm() takes tensors")  # (replaced by torch's parser error)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    require_dtype(input, FLOATING, "batch_norm")
    if use_input_stats:
        return _native_batch_norm(input, weight, bias, running_mean, running_var, True, momentum, eps, True)
    return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    try:
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        k = len(shape)
        for t, name in ((weight, "weight"), (bias, "bias")):  # (torch's _check_layer_norm_inputs order)
            if t is not None and tuple(t.shape) != shape:
                raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                                   f"shape {list(t.shape)} and normalized_shape = {list(shape)}")
        if tuple(input.shape[input.dim() - k:]) != shape:
            raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                               f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    _mixed_dtypes(input, weight, bias)
    if _widened(input, weight, bias):
        return layer_norm(input.float(), shape, weight, bias, eps).to(input.dtype)
    return dispatch(P.layer_norm, (input, weight, bias), (tuple(range(input.dim() - k, input.dim())), eps))[0]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    return dispatch(P.group_norm, (input, weight, bias), (num_groups, eps))[0]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    require_dtype(input, FLOATING_COMPLEX, "rms_norm")
    if eps is None:
        eps = 1.1920928955078125e-07
        if input.is_floating_point():
            eps = float(ml_dtypes.finfo(_dtypes.to_numpy(input.dtype)).eps)  # (NumPy's finfo lacks bfloat16)
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out * weight if weight is not None else out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    from .conv import avg_pool2d, avg_pool3d
    from .sampling import pad

    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    div = (input * input).unsqueeze(1)
    if dim == 3:
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.reshape(sizes)
    div = (div * alpha + k) ** beta
    return input / div


# ---- dropout ---------------------------------------------------------------------------------------------------


def _check_p(p):
    try:
        if p < 0.0 or p > 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def _noise(input, shape):
    """torch's dropout noise: `empty_like(input)` (the input's memory layout, so the mask is drawn in the
    input's memory order) for element-wise dropout, a contiguous (N, C, 1, ...) tensor for feature dropout."""
    from ..._ops.creation import empty_like

    return empty_like(input) if shape == tuple(input.shape) else input.new_empty(shape)


def _mask(input, shape, p):
    m = _noise(input, shape).bernoulli_(1 - p)
    return m / (1 - p) if p < 1 else m


def _cast_back_error(d):
    return RuntimeError(f"result type Float can't be cast to the desired output type {dtype_word(d)}")


def _alpha_cast_back_error(d):  # (torch's alpha dropout promotes a bool input to Long first)
    from ... import _dtypes

    return _cast_back_error(_dtypes.int64 if d.name == "bool" else d)


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if not training or p == 0:
        return input
    require_dtype(input, FLOATING_COMPLEX, _cast_back_error)
    out = input * _mask(input, tuple(input.shape), p)
    return input.copy_(out) if inplace else out


def _feature_dropout(input, p, training, inplace, batched_dim):
    _check_p(p)
    if not training or p == 0:
        return input
    require_dtype(input, FLOATING_COMPLEX, _cast_back_error)
    unbatched = input.dim() == batched_dim - 1
    x = input.unsqueeze(0) if unbatched else input
    shape = tuple(x.shape[:2]) + (1,) * (x.dim() - 2)
    out = x * _mask(x, shape, p)
    out = out.squeeze(0) if unbatched else out
    return input.copy_(out) if inplace else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 4)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 5)



def _alpha_dropout(input, p, training, shape):
    _check_p(p)
    if not training or p == 0:
        return input
    require_dtype(input, FLOATING_COMPLEX, _alpha_cast_back_error)
    if p == 1:
        return input * 0
    alpha = 1.7580993408473766  # -alpha_p of the SELU constants, as torch's _dropout_impl writes it
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    noise = _noise(input, shape).bernoulli_(1 - p)
    b = (noise - 1) * (alpha * a) + alpha * a * p  # torch's order of operations, for its roundings
    return input * (noise * a) + b


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    try:
        out = _alpha_dropout(input, p, training, tuple(input.shape))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return input.copy_(out) if inplace and out is not input else out


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    try:
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    out = _alpha_dropout(input, p, training, shape)
    return input.copy_(out) if inplace and out is not input else out


# ---- embeddings --------------------------------------------------------------------------------------------


def _renorm_(weight, input, max_norm, norm_type):
    """torch.embedding_renorm_: rows of `weight` picked by `input` whose norm exceeds max_norm are scaled to it,
    in place (through ops, so the write is a versioned in-place op on the weight)."""
    from ..._ops.pointwise import where

    with no_grad():
        rows = input.reshape(-1).unique()
        picked = weight[rows]
        norms = picked.double().norm(p=norm_type, dim=1)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = (picked * scale.unsqueeze(1)).to(weight.dtype)


_INDICES = frozenset({"int64", "int32"})


def _type_name(d):
    """How torch's argument checks name a dtype: its legacy tensor type where it has one, else CPU...Type."""
    legacy = d.name in ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
    return f"ember.{dtype_word(d)}Tensor" if legacy else f"CPU{dtype_word(d)}Type"


def _embedding_error(d):
    return RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar "
                        f"types: Long, Int; but got {_type_name(d)} instead (while checking arguments for "
                        "embedding)")


@typed
def embedding(input, weight, padding_idx: "int | None" = None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq: bool = False, sparse=False):
    """Rows of `weight` picked by the integer `input` (torch.nn.functional.embedding).

    padding_idx rows get no gradient; max_norm renormalizes the picked rows in place; scale_grad_by_freq
    divides each row's gradient by its index's count in the batch. sparse=True is accepted, but ember has
    no sparse tensors: `weight.grad` is the dense tensor with the values torch's sparse gradient holds.
    """
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    require_dtype(input, _INDICES, _embedding_error)  # (the kernel checks the range: no extra pass here)
    if max_norm is not None and input.numel():  # torch's renorm selects the distinct rows in sorted order
        u = input.unique()
        bad = u[(u < -weight.shape[0]) | (u >= weight.shape[0])]
        if bad.numel():
            raise IndexError(f"select(): index {int(bad[0])} out of range for tensor of size "
                             f"{list(weight.shape)} at dimension 0")
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    # sparse=True: ember has no sparse tensors, so the gradient is the same values as a dense tensor
    return dispatch(P.embedding, (weight, input), (padding_idx if padding_idx is not None else -1,
                                                   bool(scale_grad_by_freq)))


def _embedding_bag_error(d):
    return RuntimeError("Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, "
                        f"BFloat16, Float, Double; but got {_type_name(d)} instead (while checking arguments "
                        "for embedding_bag)")


def _embedding_bag_meta(input, weight, offsets, include_last_offset, padding_idx, max_norm, norm_type):
    """embedding_bag on meta: which bag each index falls in is data, but the result's shape (one row per bag)
    is not; a bag matrix of that shape, without values, keeps the result in the weight's graph."""
    nbags = input.shape[0] if input.dim() == 2 else offsets.shape[0] - bool(include_last_offset)
    emb = embedding(input.reshape(-1), weight, padding_idx, max_norm, norm_type)
    return emb.new_empty((nbags, emb.shape[0])).matmul(emb)


def _embedding_bag_args(input, weight, offsets, mode, per_sample_weights, scale_grad_by_freq, sparse):
    """torch's Python checks of embedding_bag's arguments, in its order (torch/nn/functional.py); (input,
    weight), swapped as torch swaps them for the old argument order."""
    if weight.dtype is _dtypes.int64 and input.is_floating_point():
        import warnings
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=3)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            kind = str(type(offsets))
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {kind}")
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    return input, weight


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxes of bags of embeddings, as one gather and one segment reduction."""
    if _modes:  # NOTE [ Composites under autocast ]: torch runs this as one kernel autocast does not list
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("embedding_bag", embedding_bag, input, weight, offsets, max_norm, norm_type,
                                 scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
                                 padding_idx)
    input, weight = _embedding_bag_args(input, weight, offsets, mode, per_sample_weights, scale_grad_by_freq,
                                        sparse)
    require_dtype(weight, FLOATING, _embedding_bag_error)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                  "on GitHub.")
    if no_data(input) or (offsets is not None and no_data(offsets)):
        return _embedding_bag_meta(input, weight, offsets, include_last_offset, padding_idx, max_norm, norm_type)
    # bag b holds the positions j with seg[j] == b (all ops: the indices and offsets stay op inputs)
    if input.dim() == 2:
        n, length = input.shape
        flat = input.reshape(-1)
        seg = arange(n, device=input.device).repeat_interleave(length)
        nbags = n
    else:
        flat = input
        offs = offsets.to(_dtypes.int64)
        if include_last_offset:
            offs = offs[:-1]
        nbags = offs.numel()
        seg = searchsorted(offs, arange(flat.shape[0], device=flat.device), right=True) - 1
    emb = embedding(flat, weight, padding_idx, max_norm, norm_type)
    if per_sample_weights is not None:
        emb = emb * per_sample_weights.reshape(-1, 1)
    onehot = seg.unsqueeze(0) == arange(nbags, device=seg.device).unsqueeze(1)  # (bags, positions)
    if padding_idx is not None:
        onehot = onehot & (flat != padding_idx % weight.shape[0]).unsqueeze(0)
    if mode == "max":
        from ..._ops.pointwise import where

        vals = where(onehot.unsqueeze(2), emb.unsqueeze(0), float("-inf")).amax(1)
        return where(onehot.any(1).unsqueeze(1), vals, 0.0)
    m = onehot.to(weight.dtype)
    if mode == "mean":
        m = m / m.sum(1, keepdim=True).clamp_min(1)
    return m.matmul(emb)



"""Attention: F.scaled_dot_product_attention and F.multi_head_attention_forward, composites of ember ops.

Both follow torch's math, masks and checks (torch.nn.functional); the multi-head path is torch's own
algorithm step by step (in-projection, bias_k/v, zero attention, key padding, heads folded into the batch),
so its parameters, errors and attention weights line up with torch's.

NOTE [ Fully masked rows ]
torch's CPU attention gives 0 (not NaN) for a query row whose keys are all masked out. Here such rows'
scores are replaced by zeros before the softmax (keeping it finite, and its backward too) and their
weights zeroed after, only when a mask actually masks a whole row.
"""

import math
import warnings

import numpy as np

from ... import _dtypes
from ..._argparse import call_error
from ..._dispatch import _modes
from ..._meta import no_data
from ..._ops.creation import ones, zeros
from ..._ops.shape import cat
from ..attention import _check_backends
from .activation import linear, softmax
from .norm import dropout

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


# ---- scaled dot-product attention -------------------------------------------------------------------------


def _sdpa_checks(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa):
    if not 0 <= dropout_p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    try:
        if not query.dtype == key.dtype == value.dtype:
            raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                               f"{_cname(query.dtype)} key.dtype: {_cname(key.dtype)} and value.dtype: "
                               f"{_cname(value.dtype)} instead.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if attn_mask is not None and attn_mask.dtype.name != "bool" and attn_mask.dtype != query.dtype \
            and not attn_mask.is_floating_point():
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_cname(attn_mask.dtype)} and  query.dtype: {_cname(query.dtype)} "
                           "instead.")
    if attn_mask is not None and is_causal:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")


def _cname(dtype):
    """The C type name torch prints for a dtype in attention errors ("float", "double", "long int")."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}.get(dtype.name, dtype.name)


def _repeat_heads(t, n):
    """`t.repeat_interleave(n, -3)` as a broadcast view made contiguous (keys/values shared by n heads)."""
    if n == 1:
        return t
    shape = tuple(t.shape)
    return t.unsqueeze(-3).expand(*shape[:-2], n, *shape[-2:]).reshape(*shape[:-3], shape[-3] * n, *shape[-2:])


# NOTE [ The causal bias is a constant ]
# With is_causal (a causal TransformerEncoder's every layer) the bias is the (L, S) matrix of 0 on and below
# the diagonal and -inf above it: five small ops to build, and three more (isneginf, all, any, with a sync on
# the result) to learn that no row is fully masked, per layer and step. It depends on (L, S, dtype, device)
# only and no row of it is fully masked (column 0 is always attended), so outside modes (where a tracer
# records the ops that build it) it is built once per key and kept. Nothing writes it (it only enters
# `scores + bias`, whose node saves no input), and the softmax takes it without the fully-masked-row check.
# A small GPT's train step made 20 such ops of its ~300.
_causal_biases: dict = {}


def _causal_bias(L, S, dtype, device):
    key = (L, S, dtype, str(device))
    bias = None if _modes else _causal_biases.get(key)
    if bias is None:
        causal = ones(L, S, dtype=_dtypes.bool, device=device).tril()
        bias = zeros(L, S, dtype=dtype, device=device).masked_fill(causal.logical_not(), float("-inf"))
        if _modes or no_data(bias):  # (under a mode, a tracer or a fake mode sees the ops; meta: not kept)
            return bias
        if len(_causal_biases) > 64:
            _causal_biases.clear()
        _causal_biases[key] = bias
    return bias


def _attention_bias(attn_mask, is_causal, L, S, dtype, device):
    """The additive float bias (or None) from a bool/float mask or the causal flag."""
    if is_causal:
        return _causal_bias(L, S, dtype, device)
    if attn_mask is None:
        return None
    if attn_mask.dtype.name == "bool":
        return zeros(attn_mask.shape, dtype=dtype, device=attn_mask.device).masked_fill(attn_mask.logical_not(),
                                                                                       float("-inf"))
    return attn_mask


def _masked_softmax(scores, bias, causal=False):
    """softmax(scores + bias) over the last dim; see NOTE [ Fully masked rows ] (causal: the causal bias,
    which masks no row fully)."""
    if bias is None:
        return softmax(scores, -1)
    scores = scores + bias
    if causal or not bias.is_floating_point():
        return softmax(scores, -1)
    full = bias.isneginf().all(-1, keepdim=True)  # rows masked everywhere (broadcasts against scores)
    if no_data(full) or not full.any():  # (on meta both branches give the same shape and layout)
        return softmax(scores, -1)
    return softmax(scores.masked_fill(full, 0.0), -1).masked_fill(full, 0.0)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    r"""softmax(Q K^T * scale + mask) V, with optional dropout on the weights.

    Args:
        query (Tensor): (N, ..., Hq, L, E); key (N, ..., H, S, E); value (N, ..., H, S, Ev).
        attn_mask (Tensor, optional): bool (True = attend) or float (added), broadcastable to (N, ..., L, S).
        dropout_p (float): dropout on the attention weights (applied whenever > 0, as torch).
        is_causal (bool): mask out keys after the query position (upper-left aligned); no attn_mask then.
        scale (float, optional): defaults to 1 / sqrt(E).
        enable_gqa (bool): grouped-query attention: key/value heads shared by Hq / H query heads.

    Returns:
        Tensor (N, ..., Hq, L, Ev).
    """
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("scaled_dot_product_attention", scaled_dot_product_attention, query, key,
                                 value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    _sdpa_checks(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
    _check_backends()  # (area N: sdpa_kernel, NOTE [ SDPA backends on the CPU ])
    L, S, E = query.shape[-2], key.shape[-2], query.shape[-1]
    scale_factor = 1 / math.sqrt(E) if scale is None else scale
    if enable_gqa and query.dim() >= 3:
        key = _repeat_heads(key, query.shape[-3] // key.shape[-3])
        value = _repeat_heads(value, query.shape[-3] // value.shape[-3])
    if key.shape[-1] != E:
        batch = int(np.prod(key.shape[:-2]))
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {E}] but got: "
                           f"[{batch}, {key.shape[-1]}].")
    if query.is_floating_point():
        scores = query.matmul(key.transpose(-2, -1)) * scale_factor
    else:  # torch's math fallback scales q and k by sqrt(scale) first: integer or bool inputs become float
        root = math.sqrt(scale_factor)
        scores = (query * root).matmul(key.transpose(-2, -1) * root)
    weights = _masked_softmax(scores, _attention_bias(attn_mask, is_causal, L, S, query.dtype, query.device),
                              is_causal)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights.matmul(value)


# ---- multi-head attention ------------------------------------------------------------------------------


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    qd, kd, vd = query.dim(), key.dim(), value.dim()
    if qd not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {qd}-D query tensor")
    batched = qd == 3
    word = "batched (3-D)" if batched else "unbatched (2-D)"
    if kd != qd or vd != qd:
        raise AssertionError(f"For {word} `query`, expected `key` and `value` to be {qd}-D but found {kd}-D and "
                             f"{vd}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != qd - 1:
        raise AssertionError(f"For {word} `query`, expected `key_padding_mask` to be `None` or {qd - 1}-D but found "
                             f"{key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {word} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.dim()}-D tensor instead")
        if not batched and attn_mask.dim() == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask as a float one (-inf where True); float masks pass through."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype.name != "bool" and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if not is_float:
        mask = zeros(mask.shape, dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def _in_projection_packed(q, k, v, w, b=None):
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)), ("value", w_v, (Eq, Ev))):
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _pad_last(mask):
    """pad(mask, (0, 1)): one more key column of 0 (attend)."""
    return cat([mask, zeros(*mask.shape[:-1], 1, dtype=mask.dtype)], -1)


def _prepare_masks(query, key_padding_mask, attn_mask, need_weights, is_causal):
    """torch's mask canonicalisation: (key_padding_mask, attn_mask, is_causal) as float masks or None."""
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype, "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal flag alone is enough for the SDPA path
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    return key_padding_mask, attn_mask, is_causal


def _check_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads):
    if attn_mask is None:
        return None
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _static(t, static, bsz, num_heads, head_dim, name):
    if static is None:
        return t.view(t.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if static.size(0) != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static


def _extend_keys(k, v, attn_mask, key_padding_mask, bias_k, bias_v, static_k, static_v, bsz):
    """Append the learned bias_k / bias_v as one more key (and a column of masks) when given."""
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.expand(1, bsz, bias_k.shape[-1])])
        v = cat([v, bias_v.expand(1, bsz, bias_v.shape[-1])])
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    return k, v, attn_mask, key_padding_mask


def _attend(q, k, v, attn_mask, dropout_p, need_weights, is_causal, bsz, num_heads, tgt_len):
    """Heads folded into the batch: q (bsz*heads, L, hd), k/v (bsz*heads, S, hd). Returns (out rows, weights)."""
    src_len, head_dim = k.size(1), q.size(2)
    if need_weights:
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        scores = (q * math.sqrt(1.0 / float(head_dim))).bmm(k.transpose(-2, -1))
        weights = softmax(scores if attn_mask is None else scores + attn_mask, -1)  # NaN rows as torch's here
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = weights.bmm(v).transpose(0, 1).reshape(tgt_len * bsz, q.size(2) * num_heads)
        return out, weights.view(bsz, num_heads, tgt_len, src_len)
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    out = scaled_dot_product_attention(q.view(bsz, num_heads, tgt_len, head_dim),
                                       k.view(bsz, num_heads, src_len, head_dim),
                                       v.view(bsz, num_heads, src_len, head_dim), attn_mask, dropout_p, is_causal)
    return out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, head_dim * num_heads), None


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    r"""The forward of nn.MultiheadAttention, as torch's function of the same name.

    Shape:
        query (L, N, E) or (L, E); key/value (S, N, E_k/E_v) or (S, E_*); key_padding_mask (N, S) or (S,);
        attn_mask (L, S) or (N * num_heads, L, S). Returns (output (L, N, E), weights (N, L, S) averaged over
        heads, (N, num_heads, L, S) if not `average_attn_weights`, or None without `need_weights`).
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _prepare_masks(query, key_padding_mask, attn_mask, need_weights,
                                                            is_causal)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight, q_proj_weight,
                       k_proj_weight, v_proj_weight)
    attn_mask = _check_attn_mask(attn_mask, tgt_len, key.shape[0], bsz, num_heads)
    k, v, attn_mask, key_padding_mask = _extend_keys(k, v, attn_mask, key_padding_mask, bias_k, bias_v,
                                                     static_k, static_v, bsz)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static(k, static_k, bsz, num_heads, head_dim, "static_k")
    v = _static(v, static_v, bsz, num_heads, head_dim, "static_v")
    if add_zero_attn:
        k = cat([k, zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype)], 1)
        v = cat([v, zeros(bsz * num_heads, 1, head_dim, dtype=v.dtype)], 1)
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    attn_mask = _merge_padding(attn_mask, key_padding_mask, bsz, num_heads, k.size(1))
    out, weights = _attend(q, k, v, attn_mask, dropout_p if training else 0.0, need_weights, is_causal, bsz,
                           num_heads, tgt_len)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if weights is not None and average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights


def _project(query, key, value, in_proj_weight, in_proj_bias, separate, q_w, k_w, v_w):
    if not separate:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if tuple(key.shape[:2]) != tuple(value.shape[:2]):
        raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}")
    for name, w in (("q", q_w), ("k", k_w), ("v", v_w)):
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
    b = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    return _in_projection(query, key, value, q_w, k_w, v_w, *b)


def _merge_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len):
    if key_padding_mask is None:
        return attn_mask
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1,
                                                                                        src_len)
    return kpm if attn_mask is None else attn_mask + kpm

"""Loss functions of ember.nn.functional (reduction 'none' | 'mean' | 'sum').

nll_loss is a primitive (ember/_ops/nn_ops.py); cross_entropy is log_softmax + nll_loss as in torch, so
logits of 1e4 stay finite. The rest are composites of stable pieces (softplus, log_sigmoid, xlogy).
"""

import warnings

from ... import _dtypes
from ..._argparse import call_error
from ..._dispatch import FLOATING, _modes, dispatch, dtype_word, require_dtype
from ..._meta import no_data
from ..._ops import nn_ops as P
from ..._ops.creation import arange
from ..._ops.pointwise import where
from .activation import log_softmax

__all__ = ["nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
           "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "multilabel_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "cosine_embedding_loss", "ctc_loss",
           "linear_cross_entropy"]  # (area N)


def _reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='{}' instead.".format(
        "mean" if (size_average is None or size_average) and (reduce is None or reduce) else
        ("sum" if reduce is None or reduce else "none")), stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_size(input, target, name):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def _integral_error(word):
    """torch's words when a float result is written back into an integral input's dtype."""
    return lambda d: RuntimeError(f"result type Float can't be cast to the desired output type {word(d)}")


_CAST_BACK = _integral_error(lambda d: dtype_word(d))


_F32_F64 = frozenset({"float32", "float64"})


def _kl_div_error(d):
    return RuntimeError(f"kl_div: {'Complex' if d.is_complex else 'Integral'} inputs not supported.")


def _refuse_grad(t, arg, fn):
    """torch's autograd refusal for an input its kernel has no derivative for (only while grad mode is on)."""
    from ...autograd.grad_mode import state

    try:
        if t is not None and state.enabled and t.requires_grad:
            raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{arg}'. "
                               "This input cannot have requires_grad True.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


# ---- classification ---------------------------------------------------------------------------------------


def _check_nll_args(input, target, weight):
    """torch's checks of nll_loss's arguments, in torch's order (nll_loss_nd, then the kernel's meta checks).

    See NOTE [ Loss argument checks ]."""
    n = input.dim()
    if n < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {n})")
    try:
        if n == 1 and target.dim() == 1 and target.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
        if n != 1 and input.shape[0] != (target.shape[0] if target.dim() else 0):
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                             f"({target.shape[0] if target.dim() else 0}).")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    c = input.shape[1] if n > 1 else input.shape[0]
    if n <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if weight is not None and (weight.dim() != 1 or weight.numel() != c):
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                               f"weight tensor of shape: {list(weight.shape)}")
    elif n == 4:
        if target.dim() != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {target.dim()}")
        if weight is not None and weight.numel() != c:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if tuple(target.shape) != tuple(input.shape[:1]) + tuple(input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    else:
        want = [input.shape[0]] + list(input.shape[2:])
        if list(target.shape[1:]) != want[1:]:
            raise RuntimeError(f"Expected target size {want}, got {list(target.shape)}")
        if weight is not None and weight.numel() != c:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
    td = target.dtype
    if td.name not in ("int64", "uint8"):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {dtype_word(target.dtype)}")
    if n > 2 and td.name != "int64":  # (the spatial kernel takes Long only)
        raise RuntimeError(f"expected scalar type Long but found {dtype_word(target.dtype)}")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {dtype_word(input.dtype)} but found {dtype_word(weight.dtype)}")


# NOTE [ Loss argument checks ]
# A loss given a target of the wrong dtype or shape must fail as torch's does, with torch's words, before any
# NumPy indexing sees it (NumPy's "`indices` and `arr` must have the same number of dimensions" is no
# answer). The checks follow torch's own order: F.*'s Python checks, then the op's meta function (shapes,
# weight), then the kernel (dtypes, then the values: class indices in range).


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("nll_loss", nll_loss, input, target, weight, size_average, ignore_index,
                                 reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    _check_nll_args(input, target, weight)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    # (the target's bounds are checked by the op's kernel: it reads the data)
    _refuse_grad(weight, "weight", "nll_loss_forward" if input.dim() < 3 else "nll_loss2d_forward")
    if input.dim() <= 2:  # (an unbatched (C,) input takes a 0-d or one-element target)
        return dispatch(P.nll_loss, (input, target, weight), (reduction, ignore_index))
    if input.dim() == 4:
        return dispatch(P.nll_loss2d, (input, target, weight), (reduction, ignore_index))
    # torch's nll_loss_nd: other spatial inputs are viewed as (N, C, 1, rest) (NOTE [ nll_loss and nll_loss2d ])
    n, c = input.shape[:2]
    x, t = input.contiguous(), target.contiguous()
    x = x.view(n, c, 1, x.numel() // (n * c)) if x.numel() else x.view(n, c, 0, 0)
    t = t.view(n, 1, t.numel() // n) if t.numel() else t.view(n, 0, 0)
    out = dispatch(P.nll_loss2d, (x, t, weight), (reduction, ignore_index))
    return out.view((n,) + tuple(input.shape[2:])) if reduction == "none" else out


def _soft_target_error(d):
    return RuntimeError("Expected floating point type for target with class probabilities, got "
                        f"{dtype_word(d)}")


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("cross_entropy_loss", cross_entropy, input, target, weight, size_average,
                                 ignore_index, reduce, reduction, label_smoothing)
    reduction = _reduction(size_average, reduce, reduction)
    try:
        if not 0.0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    cdim = 1 if input.dim() > 1 else 0
    try:
        if tuple(target.shape) == tuple(input.shape):  # class probabilities: torch tells them apart by shape
            if not target.is_floating_point():
                raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                                   f"{dtype_word(target.dtype)}")
            if ignore_index >= 0:
                raise RuntimeError("ignore_index is not supported for floating point target")
            c = input.shape[cdim]
            if weight is not None and (weight.dim() != 1 or weight.numel() != c):
                raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {c} classes or no "
                                   f"classes but got weight tensor of shape: {list(weight.shape)}")
        else:
            _check_nll_args(input, target, weight)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    logp = log_softmax(input, cdim)
    if tuple(target.shape) == tuple(input.shape):
        c = input.shape[cdim]
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        wlogp = logp * _bcast_weight(weight, input.dim(), cdim) if weight is not None else logp
        loss = -(wlogp * target).sum(cdim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // c) if input.dim() else loss
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing <= 0:
        return nll
    c = input.shape[cdim]
    wlogp = logp * _bcast_weight(weight, input.dim(), cdim) if weight is not None else logp
    smooth = -wlogp.sum(cdim)
    keep = target != ignore_index
    smooth = where(keep, smooth, 0.0)
    if reduction == "mean":
        if weight is not None:
            denom = weight.index_select(0, where(keep, target, 0).reshape(-1)).reshape(target.shape)
            smooth = smooth.sum() / where(keep, denom, 0.0).sum()
        else:
            smooth = smooth.sum() / keep.sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


def _bcast_weight(weight, ndim, cdim):
    return weight.reshape((-1,) + (1,) * (ndim - cdim - 1))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("binary_cross_entropy", binary_cross_entropy, input, target, weight,
                                 size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    require_dtype(input, FLOATING, "binary_cross_entropy")
    if weight is not None:
        _check_weight_broadcast(weight, target)
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {dtype_word(target.dtype)} but expected {dtype_word(input.dtype)}")
    if not no_data(input) and bool(((input < 0) | (input > 1)).any()):  # (torch's kernel checks the
        raise RuntimeError("all elements of input should be between 0 and 1")   # data; its meta function can't)
    _refuse_grad(weight, "weight", "binary_cross_entropy")
    # torch clamps the logs at -100 so that 0 * log(0) stays finite
    loss = -(target * input.log().clamp_min(-100) + (1 - target) * (1 - input).log().clamp_min(-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _check_weight_broadcast(weight, target):
    """torch's error (from F.binary_cross_entropy's expand of the weight) for a weight that does not broadcast."""
    w, t = tuple(weight.shape), tuple(target.shape)
    for k in range(1, len(w) + 1):
        if w[-k] != 1 and (k > len(t) or w[-k] != t[-k]):
            raise RuntimeError(f"Attempting to broadcast a dimension of length {w[-k]} at {-k}! Mismatching argument "
                               f"at index 1 had {weight.shape}; but expected shape should be broadcastable to "
                               f"{list(t)}")


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("binary_cross_entropy_with_logits", binary_cross_entropy_with_logits, input,
                                 target, weight, size_average, reduce, reduction, pos_weight)
    reduction = _reduction(size_average, reduce, reduction)
    try:
        if tuple(target.shape) != tuple(input.shape):
            raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    require_dtype(input, FLOATING, "log_sigmoid_cpu")
    if target.dtype.is_floating_point is False and not target.is_complex():
        # torch computes `(1 - target).mul_(input)`: an integer target cannot hold the float product
        if target.dtype.name == "bool":
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
                               "or `logical_xor()` operator instead.")
        from ..._dtypes import promote_types

        raise RuntimeError(f"result type {dtype_word(promote_types(input.dtype, target.dtype))} can't be cast to "
                           f"the desired output type {dtype_word(target.dtype)}")
    _refuse_grad(weight, "weight", "binary_cross_entropy_with_logits")
    _refuse_grad(pos_weight, "pos_weight", "binary_cross_entropy_with_logits")
    neg_log_sig = dispatch(P.softplus, (-input,), (1.0, 20.0))  # -log(sigmoid(x)), exact for large |x|
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * neg_log_sig
    else:
        loss = (1 - target) * input + neg_log_sig
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _ctc_lengths(lengths, name):
    """input_lengths / target_lengths as an int64 array: a tensor of integers (any shape) or ints."""
    import numpy as np

    from ... import _dtypes
    from ..._tensor import Tensor

    if isinstance(lengths, Tensor):
        if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype is _dtypes.bool:
            raise RuntimeError(f"{name} must be integral")
        return np.asarray(lengths.reshape(-1).tolist(), np.int64)  # int parameters of the op, as torch's
    return np.asarray([int(v) for v in lengths], np.int64).reshape(-1)


def _ctc_arg_types(input_lengths, target_lengths):
    """Both lengths tensors, or both sequences of ints, as torch's two overloads of ctc_loss accept."""
    from ..._tensor import Tensor

    kinds = [isinstance(v, Tensor) for v in (input_lengths, target_lengths)]
    seqs = [isinstance(v, (tuple, list)) for v in (input_lengths, target_lengths)]
    if not (all(kinds) or all(seqs)):
        names = [type(v).__name__ if not isinstance(v, Tensor) else "Tensor" for v in (input_lengths, target_lengths)]
        sig = ("(Tensor log_probs, Tensor targets, {0} input_lengths, {0} target_lengths, int blank = 0, "
               "int reduction = at::Reduction::Mean, bool zero_infinity = False)")
        raise TypeError(f"ctc_loss() received an invalid combination of arguments - got (Tensor, Tensor, {names[0]}, "
                        f"{names[1]}, int, int, bool), but expected one of:\n * {sig.format('tuple of ints')}\n"
                        f" * {sig.format('Tensor')}\n")


def _ctc_check(lp, targets, il, tl, blank):
    """torch's argument checks of ctc_loss (ctc_loss_allocate_outputs)."""
    where_ = " (while checking arguments for ctc_loss_allocate_outputs)"
    if lp.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.dim()}-dimensional tensor for argument #1 "
                           f"'log_probs'{where_}")
    if not 1 <= targets.dim() <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for argument "
                           f"#2 'targets'{where_}")
    t_max, n, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if il.shape[0] != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.shape[0] != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in tl:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {v}{where_}")
    want = int(tl.sum()) if targets.dim() == 1 else n
    if targets.shape[0] != want:
        raise RuntimeError(f"Expected tensor to have size {want} at dimension 0, but got size {targets.shape[0]} "
                           f"for argument #2 'targets'{where_}")
    if targets.dim() == 2 and n and targets.shape[1] < tl.max():
        raise RuntimeError(f"Expected tensor to have size at least {tl.max()} at dimension 1, but got size "
                           f"{targets.shape[1]} for argument #2 'targets'{where_}")
    for v in il:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {v}{where_}")
        if v > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {v}{where_}")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The Connectionist Temporal Classification loss (torch.nn.functional.ctc_loss).

    Args:
        log_probs: (T, N, C) or unbatched (T, C) log-probabilities (float32 / float64).
        targets: (N, S) padded targets, or (sum(target_lengths),) concatenated (unbatched: (S,)).
        input_lengths, target_lengths: (N,) tensors of integers or tuples of ints.
        blank: the blank label. reduction: 'none' | 'mean' (each loss over its target length, then the
        batch mean) | 'sum'. zero_infinity: infinite losses (impossible alignments) and their grads become 0.

    See NOTE [ CTC forward-backward ] in ember/_ops/nn_ops.py.
    """
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("ctc_loss.IntList", ctc_loss, log_probs, targets, input_lengths,
                                 target_lengths, blank, reduction, zero_infinity)
        from ..._ops._util import per_sample

        r = per_sample(ctc_loss, (log_probs, targets, input_lengths, target_lengths, blank, reduction,
                                  zero_infinity))
        if r is not NotImplemented:  # (NOTE [ Composites that read data under vmap ] in ember/_ops/_util.py)
            return r
    from ..._dtypes import float32, float64, int64
    from ..._ops.creation import from_numpy

    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_probs.dtype not in (float32, float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{dtype_word(log_probs.dtype)}'")
    _ctc_arg_types(input_lengths, target_lengths)
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    il = _ctc_lengths(input_lengths, "input_lengths")
    tl = _ctc_lengths(target_lengths, "target_lengths")
    _ctc_check(lp, targets, il, tl, blank)
    lengths = (tuple(il.tolist()), tuple(tl.tolist()))  # int[] params as torch's (never arrays)
    res = dispatch(P.ctc_loss, (lp, targets.to(int64)), (*lengths, blank, bool(zero_infinity)))[0]
    if zero_infinity:
        res = where(res == float("inf"), res.new_zeros(()), res)
    if reduction == "mean":
        return (res / from_numpy(tl).to(res.dtype).clamp_min(1)).mean()
    if reduction == "sum":
        return res.sum()
    return res if batched else res.squeeze(0)


# ---- regression -----------------------------------------------------------------------------------------------


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("mse_loss", mse_loss, input, target, size_average, reduce, reduction, weight)
    reduction = _reduction(size_average, reduce, reduction)
    _check_size(input, target, "mse")
    require_dtype(input, FLOATING, "mse_cpu", target)
    d = input - target
    loss = d * d
    return _reduce(loss * weight if weight is not None else loss, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("l1_loss", l1_loss, input, target, size_average, reduce, reduction, weight)
    reduction = _reduction(size_average, reduce, reduction)
    _check_size(input, target, "l1")
    loss = (input - target).abs()
    return _reduce(loss * weight if weight is not None else loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("smooth_l1_loss", smooth_l1_loss, input, target, size_average, reduce,
                                 reduction, beta)
    reduction = _reduction(size_average, reduce, reduction)
    _check_size(input, target, "smooth_l1")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    require_dtype(input, FLOATING, "smooth_l1_cpu", target)
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("huber_loss", huber_loss, input, target, reduction, delta, weight)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_size(input, target, "huber")
    require_dtype(input, FLOATING, "huber_cpu", target)
    d = (input - target).abs()
    loss = where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss * weight if weight is not None else loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("kl_div", kl_div, input, target, size_average, reduce, reduction, log_target)
    reduction = _reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    require_dtype(input, FLOATING, _kl_div_error, target)
    try:
        if log_target:
            loss = target.exp() * (target - input)
        else:
            loss = target.xlogy(target) - target * input
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("poisson_nll_loss", poisson_nll_loss, input, target, log_input, full,
                                 size_average, eps, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * 3.141592653589793 * target).log()
        loss = loss + where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    # torch's checks, in its order: var's sign (a non-tensor var meets `<` or `any` first), then its size
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input.new_full(tuple(input.shape), var)
    else:
        from ..._tensor import Tensor

        negative = var < 0
        if not isinstance(negative, Tensor):
            from ..._argparse import parser_error
            raise parser_error("torch", "any", (negative,), {})
        if bool(negative.any()):  # (a complex var meets lt's refusal here, as in torch)
            raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() != var.dim() or sum(y for x, y in zip(input.shape, var.shape) if x != y) != 1:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    from ...autograd.grad_mode import no_grad

    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * 1.8378770664093453  # log(2*pi)
    return _reduce(loss, reduction)


# ---- margins and embeddings --------------------------------------------------------------------------------


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("margin_ranking_loss", margin_ranking_loss, input1, input2, target, margin,
                                 size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    diff = input1 - input2  # (first, as in torch: its bool error comes before the negation's)
    return _reduce((-target * diff + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("hinge_embedding_loss", hinge_embedding_loss, input, target, margin,
                                 size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    # torch's C++ `margin - self` fills a tensor of self's dtype with margin first (an integer input stays
    # integral and its mean is refused; two bool tensors cannot be subtracted)
    margin_clamp = (input.new_full(tuple(input.shape), margin) - input).clamp_min(0)
    zeros = input.new_zeros(tuple(input.shape))
    out_margin = where(target != 1, margin_clamp, zeros)
    out_self = where(target != -1, input, zeros)
    return _reduce(out_margin + out_self, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("soft_margin_loss", soft_margin_loss, input, target, size_average, reduce,
                                 reduction)
    reduction = _reduction(size_average, reduce, reduction)
    _refuse_grad(target, "target", "soft_margin_loss")
    z = -input * target  # (torch's operand order)
    if z.is_complex():
        return _reduce((z.exp() + 1).log(), reduction)
    require_dtype(z, FLOATING, _CAST_BACK)  # (torch writes log1p(exp(z)) into z's integral dtype)
    return _reduce(dispatch(P.softplus, (z,), (1.0, 20.0)), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * dispatch(P.log_sigmoid, (input,)) + (1 - target) * dispatch(P.log_sigmoid, (-input,)))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum_{j in targets, i not in targets} max(0, 1 - (x[j] - x[i])) / C, targets read up to the first -1."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("multilabel_margin_loss", multilabel_margin_loss, input, target,
                                 size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    require_dtype(input, _F32_F64, "multilabel_margin_loss_forward_out_frame")
    try:
        if tuple(target.shape) != tuple(input.shape) or input.dim() > 2:
            raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if target.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {dtype_word(target.dtype)}")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    t = target if target.dim() == 2 else target.unsqueeze(0)
    if t.numel() and not no_data(t) and (t.min() < -1 or t.max() >= x.shape[1]):  # (values, where there are)
        raise RuntimeError("argument #2 'target' is out of range")
    c = x.shape[1]
    # a row's targets are its entries before the first -1; is_target[n, k]: class k is one of them
    valid = (t != -1).to(_dtypes.int64).cumprod(1).to(_dtypes.bool)
    is_target = ((t.unsqueeze(2) == arange(c, device=t.device)) & valid.unsqueeze(2)).any(1)
    xt = x.unsqueeze(2)  # j: target classes
    xi = x.unsqueeze(1)  # i: other classes
    pair = is_target.unsqueeze(2) & is_target.logical_not().unsqueeze(1)
    loss = where(pair, (1 - (xt - xi)).clamp_min(0), 0.0).sum((1, 2)) / c
    if input.dim() == 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("multi_margin_loss", multi_margin_loss, input, target, p, margin, weight,
                                 size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    require_dtype(input, _F32_F64, "multi_margin_loss_cpu_kernel")
    _refuse_grad(weight, "weight", "multi_margin_loss")
    nframe = input.shape[0] if input.dim() == 2 else 1
    try:
        if target.dim() > 1 or target.numel() != nframe:
            raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                               f"samples (batch size). Expected target size [{nframe}], but got {list(target.shape)}. "
                               f"Input has shape {list(input.shape)}.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    c = input.shape[-1] if input.dim() else 1
    if weight is not None and (weight.dim() > 1 or weight.numel() != c):
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    if target.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {dtype_word(target.dtype)}")
    if target.numel() and not no_data(target) and (target.min() < 0 or target.max() >= c):
        raise RuntimeError("target out of range")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    tgt = target.reshape(-1, 1)
    xy = x.index_select(1, target.reshape(-1)).diagonal().unsqueeze(1) if x.shape[0] > 0 else x[:, :1]
    z = (margin - xy + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, target.reshape(-1)).unsqueeze(1)
    not_target = arange(x.shape[1], device=x.device).unsqueeze(0) != tgt
    loss = where(not_target, z, 0.0).sum(1) / x.shape[1]
    if input.dim() == 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("cosine_embedding_loss", cosine_embedding_loss, input1, input2, target,
                                 margin, size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    try:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    eps = 1e-12
    d = input1.dim() - 1
    prod = (input1 * input2).sum(d)
    mag1 = (input1 * input1).sum(d) + eps
    mag2 = (input2 * input2).sum(d) + eps
    cos = prod / (mag1 * mag2).sqrt()
    loss = where(target == 1, 1 - cos, where(target == -1, (cos - margin).clamp_min(0), 0.0))
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("triplet_margin_loss", triplet_margin_loss, anchor, positive, negative,
                                 margin, p, eps, swap, size_average, reduce, reduction)
    from .activation import pairwise_distance

    reduction = _reduction(size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    from .activation import pairwise_distance

    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


# ---- linear_cross_entropy (area N) -------------------------------------------------------------------------------
# NOTE [ linear_cross_entropy's options ]
# torch computes cross_entropy(linear(input, W, b), target) in one piece, or, given `options`
# (LinearCrossEntropyOptions), in batch chunks that never hold all the logits at once: a memory saving whose
# result is the same loss up to the rounding of its chunked sums. ember takes and validates the options (and
# warns where torch ignores them) but computes the one-piece form, so with options its result equals torch's
# to rounding rather than bit for bit.


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target): the classifier head and its loss in
    one call; linear_weight (num_classes, *out_features, in_features) gives K-dimensional logits."""
    from .activation import linear

    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if options is not None and (out_features or reduction not in {"mean", "sum", "none"} or label_smoothing != 0.0
                                or target.dtype is not _dtypes.int64):
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype="
                      f"{str(target.dtype).replace('ember.', 'torch.')}, out_features={out_features}, tracing=False"
                      ", linear_bias.shape="
                      f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    if out_features:
        rows = num_classes
        for f in out_features:
            rows *= f
        linear_weight = linear_weight.reshape((rows, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)

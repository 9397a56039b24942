"""Gradient clipping: clip_grad_norm_, clip_grad_value_, get_total_norm, clip_grads_with_norm_.

NOTE [ Clipping arithmetic ]
As torch's: the gradients are grouped by device and dtype (in order of first appearance); each group's norms
come from one `_foreach_norm`, the total norm is `linalg.vector_norm` of their stack (mixed dtypes promote),
and the scale is ``clamp(max_norm / (total + 1e-6), max=1)`` in the norm's dtype, multiplied into every
gradient in place by one `_foreach_mul_` per group, even when it is 1 (no data-dependent branch).
`clip_grad_value_` is `_foreach_clamp_min_` then `_foreach_clamp_max_`. On meta tensors torch has no foreach
kernels and loops with single-tensor ops (`vector_norm`, `mul_`, `clamp_`), and so does ember, version counts
included. All of it is ops: meta gradients work and a mode sees it; an inf or nan gradient gives an inf/nan
norm and scale silently, as in torch.
"""

import types
import warnings

from ..._naming import named
from ..._ops.creation import tensor as _tensor
from ..._ops.foreach import _foreach_clamp_max_, _foreach_clamp_min_, _foreach_mul_, _foreach_norm
from ..._ops.linalg_ext import vector_norm
from ..._ops.shape import stack
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _by_dtype(tensors):
    """The tensors grouped by device and dtype, groups in order of first appearance (torch's
    `_group_tensors_by_device_and_dtype`), each with whether torch runs it with foreach ops (on the CPU; not
    on meta tensors, where it loops over the tensors with single-tensor ops)."""
    groups = {}
    for t in tensors:
        groups.setdefault((t.device.type, t.dtype), []).append(t)
    return [(g, dev == "cpu") for (dev, _), g in groups.items()]


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    r"""The norm of the norms of `tensors` (as if they were concatenated into one vector).

    Args:
        tensors (Tensor or iterable of Tensors): the tensors (usually gradients).
        norm_type (float, str): the p of the p-norm; ``inf`` for the infinity norm (default: 2.0).
        error_if_nonfinite (bool): raise if the total norm is nan or inf (default: False).
        foreach (bool): accepted for torch compatibility; ember has one implementation.

    Returns:
        Total norm of the tensors (viewed as a single vector), a 0-d Tensor.
    """
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _tensor(0.0)
    norms = []
    for group, foreach in _by_dtype(tensors):
        norms.extend(_foreach_norm(group, norm_type) if foreach else [vector_norm(g, norm_type) for g in group])
    total = vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and (total.isnan() | total.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`")
    return total


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    r"""Scale the gradients of `parameters` in place by ``min(1, max_norm / (total_norm + 1e-6))``.

    Args:
        parameters (Tensor or iterable of Tensors): tensors whose gradients are scaled.
        max_norm (float): max norm of the gradients.
        total_norm (Tensor): total norm of the gradients, e.g. from `get_total_norm`.
        foreach (bool): accepted for torch compatibility.
    """
    grads = _grads(parameters)
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)  # See NOTE [ Clipping arithmetic ]
    for group, foreach in _by_dtype(grads):
        if foreach:
            _foreach_mul_(group, coef)
        else:
            for g in group:
                g.mul_(coef)


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    r"""Clip the gradient norm of an iterable of parameters, in place.

    The norm is computed over the norms of the individual gradients, as if they were concatenated into a
    single vector; gradients are scaled by ``min(1, max_norm / (total_norm + 1e-6))``.

    Args:
        parameters (Tensor or iterable of Tensors): tensors whose gradients will be normalized.
        max_norm (float): max norm of the gradients.
        norm_type (float, str): the p of the p-norm; ``inf`` for the infinity norm (default: 2.0).
        error_if_nonfinite (bool): raise if the total norm is nan or inf (default: False).
        foreach (bool): accepted for torch compatibility.

    Returns:
        Total norm of the parameter gradients (viewed as a single vector).

    Example:
        >>> loss.backward()
        >>> ember.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    total_norm = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of `clip_grad_norm_`."""
    warnings.warn(named("`ember.nn.utils.clip_grad_norm` is now deprecated in favor of "
                        "`ember.nn.utils.clip_grad_norm_`."), FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    r"""Clamp the gradients of `parameters` in place to ``[-clip_value, clip_value]``.

    Args:
        parameters (Tensor or iterable of Tensors): tensors whose gradients will be clipped.
        clip_value (float): maximum allowed absolute value of the gradients.
        foreach (bool): accepted for torch compatibility.

    Example:
        >>> ember.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
    """
    clip_value = float(clip_value)
    for group, foreach in _by_dtype(_grads(parameters)):
        if foreach:
            _foreach_clamp_min_(group, -clip_value)
            _foreach_clamp_max_(group, clip_value)
        else:
            for g in group:
                g.clamp_(min=-clip_value, max=clip_value)

"""Gradient clipping: clip_grad_norm_, clip_grad_value_, get_total_norm, clip_grads_with_norm_.

NOTE [ Clipping arithmetic ]
Like torch, the total norm is the vector norm of the per-tensor norms (each in its tensor's dtype; mixed
dtypes promote), and the scale is ``clamp((total + 1e-6).reciprocal() * max_norm, max=1)`` computed in the
norm's dtype (torch evaluates ``max_norm / tensor`` as ``tensor.reciprocal() * max_norm``); every gradient
is multiplied in place by it, even when it is 1. The work is done on the NumPy arrays, with each gradient's
version counter bumped as an in-place op would. An inf or nan gradient gives an inf/nan norm and scale as in
torch, silently: the NumPy work runs under `quiet_numpy()` (NOTE [ Quiet NumPy ] in ember/_dispatch.py).
"""

import functools
import math
import types
import warnings

import numpy as np

from ... import _dtypes
from ..._dispatch import quiet_numpy
from ..._naming import named
from ..._tensor import Tensor, _version_counter, _wrap

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]

_LOW = (np.dtype(np.float16), np.dtype(_dtypes.to_numpy(_dtypes.bfloat16)))


def _norm(a, norm_type):
    """torch.linalg.vector_norm(a, norm_type) of an array, as a 0-d array of a's real dtype."""
    if a.dtype.kind == "c":
        a = np.abs(a)
    out_dtype = a.dtype
    if a.dtype in _LOW:
        a = a.astype(np.float32)  # torch accumulates low-precision norms in float32
    if norm_type == 2:
        flat = a.reshape(-1)
        r = np.sqrt(np.dot(flat, flat))
    elif norm_type == math.inf:
        r = np.abs(a).max() if a.size else 0
    elif norm_type == -math.inf:
        r = np.abs(a).min() if a.size else math.inf
    elif norm_type == 0:
        r = np.count_nonzero(a)
    elif norm_type == 1:
        r = np.abs(a).sum()
    else:
        r = np.sum(np.abs(a) ** norm_type) ** (1.0 / norm_type)
    return np.asarray(r).astype(out_dtype)


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


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
        return _wrap(np.array(0.0, _dtypes.to_numpy(_dtypes.get_default_dtype())))
    with quiet_numpy():
        norms = [_norm(t._data, norm_type) for t in tensors]
        dtype = functools.reduce(_dtypes.promote_types, [_dtypes.from_numpy(n.dtype) for n in norms])
        total = _norm(np.array([n.astype(_dtypes.to_numpy(dtype)) for n in norms]), norm_type)
    if error_if_nonfinite and not np.isfinite(total.astype(np.float64)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`")
    return _wrap(total)


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
    t = total_norm._data
    with quiet_numpy():
        wide = t.astype(np.float32) if t.dtype in _LOW else t  # low precision: one rounding at the end
        coef = np.minimum(np.reciprocal(wide + 1e-6) * max_norm, 1.0)  # See NOTE [ Clipping arithmetic ]
        coef = np.asarray(coef).astype(t.dtype)
        for g in grads:
            np.multiply(g._data, coef, out=g._data, casting="unsafe")
            _version_counter(g)[0] += 1


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
    with quiet_numpy():
        for g in _grads(parameters):
            np.clip(g._data, -clip_value, clip_value, out=g._data)
            _version_counter(g)[0] += 1

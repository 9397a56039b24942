"""Helpers shared by the distributions (torch.distributions.utils): broadcasting parameters together, the
probs/logits conversions, `lazy_property`, and the packing of a lower triangle into a vector and back.
"""

from functools import update_wrapper
from numbers import Number

import ml_dtypes
import numpy as np

import ember

from .. import _dtypes, _naming

__all__ = [
    "broadcast_all",
    "logits_to_probs",
    "clamp_probs",
    "probs_to_logits",
    "lazy_property",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


class _FloatInfo:
    """eps / tiny / max / min of a floating dtype, as torch.finfo reports them."""

    def __init__(self, dtype):
        np_dtype = _dtypes.to_numpy(dtype)
        info = ml_dtypes.finfo(np_dtype) if np_dtype.name == "bfloat16" else np.finfo(np_dtype)
        self.eps = float(info.eps)
        self.tiny = float(info.tiny)
        self.max = float(info.max)
        self.min = float(info.min)


_FINFO = {}


def finfo(dtype):
    """The floating limits of `dtype` (cached; used where torch's distributions call torch.finfo)."""
    info = _FINFO.get(dtype)
    if info is None:
        info = _FINFO[dtype] = _FloatInfo(dtype)
    return info


def _is_tensor_like(v):
    return isinstance(v, ember.Tensor) or hasattr(type(v), "__torch_function__")


def broadcast_all(*values):
    """Broadcast tensors and numbers together; numbers become tensors of the first tensor's dtype (or the
    default dtype when there is none).

    Raises:
        ValueError: if an argument is neither a number nor a tensor.
    """
    if not all(_is_tensor_like(v) or isinstance(v, Number) for v in values):
        raise ValueError(
            _naming.named("Input arguments must all be instances of Number, "
                          "ember.Tensor or objects implementing __torch_function__.")
        )
    if all(_is_tensor_like(v) for v in values):
        return ember.broadcast_tensors(*values)
    like = next((v for v in values if isinstance(v, ember.Tensor)), None)
    if like is None:
        options = {"dtype": ember.get_default_dtype()}
    else:
        options = {"dtype": like.dtype, "device": like.device}
    return ember.broadcast_tensors(*[v if _is_tensor_like(v) else ember.tensor(v, **options) for v in values])


def _standard_normal(shape, dtype, device):
    return ember.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sum out the `dim` rightmost dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: a sigmoid for binary events, a softmax over the last dim otherwise."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamp probabilities into [eps, 1 - eps] of their dtype."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (clamped first): log-odds for binary events, log-probabilities otherwise."""
    p = clamp_probs(probs)
    if is_binary:
        return ember.log(p) - ember.log1p(-p)
    return ember.log(p)


class lazy_property:
    """A property computed once per instance, on first access, then stored on the instance (so the
    class attribute is shadowed). The computation runs with grad enabled."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class: both, so that documentation tools see a property."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag, device):
    idx = ember.arange(n, device=device)
    return idx < idx.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (below diagonal `diag`) of the last two dims of `mat`, row by row, as a vector."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """Inverse of `tril_matrix_to_vec`: a square matrix whose lower triangle is `vec`, zeros elsewhere."""
    k = 1 + 2 * diag
    n = (-k + (k * k + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + ember.Size((n, n)))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat

"""The decompositions: each registered op's computation in primitives, written as torch's are.

Each function's parameters are the op's call as a graph node states it: tensor inputs positionally, then
its params by the kernel's names (see `ember.ops`). Imported by `ember._decomp` on first use.
"""

from __future__ import annotations

import ember

from ..ops import aten
from . import register_decomposition

inf = float("inf")

#: the entries torch's `core_aten_decompositions` leaves out (ops a backend takes as they are): they are in
#: the table, for `get_decompositions`, but not in `core_aten_decompositions()`
NOT_CORE = frozenset({"hardtanh", "leaky_relu", "elu", "softmax", "log_softmax", "addmm"})


# ---- activations -------------------------------------------------------------------------------------------
@register_decomposition(aten.silu)
def silu(a):
    return a * ember.sigmoid(a)


@register_decomposition(aten.hardsigmoid)
def hardsigmoid(a):
    return ember.clamp(ember.clamp(a + 3, min=0), max=6) / 6


@register_decomposition(aten.hardswish)
def hardswish(a):
    return a * ember.clamp(ember.clamp(a + 3, min=0), max=6) / 6


@register_decomposition(aten.hardtanh)
def hardtanh(a, lo=-1.0, hi=1.0):
    return ember.clamp(a, lo, hi)


@register_decomposition(aten.leaky_relu)
def leaky_relu(a, slope=0.01):
    return ember.where(a > 0, a, a * slope)


@register_decomposition(aten.softplus)
def softplus(a, beta=1.0, thresh=20.0):
    if beta == 1:  # (torch's reference takes beta=None for the default: no scaling)
        scaled_input = a
        rhs = ember.log1p(ember.exp(scaled_input))
    else:
        scaled_input = a * beta
        rhs = ember.log1p(ember.exp(scaled_input)) / beta
    return ember.where(scaled_input > thresh, a, rhs)


@register_decomposition(aten.mish)
def mish(a):
    return a * ember.tanh(softplus(a))


@register_decomposition(aten.elu)
def elu(a, alpha=1.0, scale=1.0, input_scale=1.0):
    negcoef = alpha * scale
    return ember.where(a > 0, a * scale, ember.expm1(a * input_scale) * negcoef)


# ---- softmax family -----------------------------------------------------------------------------
@register_decomposition(aten.softmax)
def softmax(a, dim):
    x_max = ember.amax(a, dim, keepdim=True)
    unnormalized = ember.exp(a - x_max)
    return unnormalized / ember.sum(unnormalized, dim, keepdim=True)


@register_decomposition(aten.log_softmax)
def log_softmax(a, dim):
    x_max = ember.amax(a, dim, keepdim=True)
    shifted = a - x_max
    shifted_logsumexp = ember.log(ember.sum(ember.exp(shifted), dim, keepdim=True))
    return shifted - shifted_logsumexp


@register_decomposition(aten.logsumexp)
def logsumexp(a, dims, keepdim=False):
    maxes = ember.amax(a, dims, keepdim=True)
    maxes = ember.masked_fill(maxes, maxes.abs() == inf, 0)
    maxes_squeezed = maxes if keepdim else ember.squeeze(maxes, dims)
    result = ember.sum(ember.exp(a - maxes), dims, keepdim)
    return result.log().add(maxes_squeezed)


@register_decomposition(aten.masked_fill)
def masked_fill(a, mask, value):
    return ember.where(mask, value, a)


# ---- pointwise composites ----------------------------------------------------------------------------------
@register_decomposition(aten.addcmul)
def addcmul(a, t1, t2, value=1):
    return a + value * t1 * t2


@register_decomposition(aten.addcdiv)
def addcdiv(a, t1, t2, value=1):
    return a + value * t1 / t2


@register_decomposition(aten.rsub)
def rsub(a, b):
    return ember.sub(b, a)


@register_decomposition(aten.addmm)
def addmm(c, a, b, beta=1, alpha=1):
    out = alpha * ember.mm(a, b)
    if beta == 0:
        return out
    return beta * c + out


# ---- backward formulas --------------------------------------------------------------------------
@register_decomposition(aten.tanh_backward)
def tanh_backward(g, out):
    return g * (1 - out * out)


@register_decomposition(aten.sigmoid_backward)
def sigmoid_backward(g, out):
    return g * (out * (1 - out))


@register_decomposition(aten.threshold_backward)
def threshold_backward(g, out):
    return ember.where(out <= 0, 0, g)

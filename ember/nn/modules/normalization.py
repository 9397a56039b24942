"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm and the legacy CrossMapLRN2d (torch.nn.modules.normalization);
the instance norms are in instancenorm.py, as in torch."""

import numbers

from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .batchnorm import _affine_parameters, _reset_affine
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


def _shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Normalizes over the last len(normalized_shape) dims; weight 1 and bias 0 per element."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, elementwise_affine, bias, self.normalized_shape, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)


class GroupNorm(Module):
    """Normalizes each of num_groups channel groups; per-channel affine."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, affine, bias, (num_channels,), dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last dims."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


class LocalResponseNorm(Module):
    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


# ---- CrossMapLRN2d ---------------------------------------------------------------------------------------------
# NOTE [ CrossMapLRN2d ]
# torch's legacy (Lua) cross-channel LRN is an autograd.Function whose forward builds each channel's sum of
# squares with a running window that never drops channel 0 once past it, while its backward is the gradient of
# the symmetric window: the backward is not the derivative of the forward. ember keeps both as torch writes
# them (a Function with the same two passes, vectorized over channels), so values and gradients are torch's.


def _lrn_scale(sq, size, alpha, k):
    channels = sq.shape[1]
    pre_pad = int((size - 1) / 2 + 1)
    first = sq[:, :min(pre_pad, channels)].sum(1)
    scales = [first]
    for c in range(1, channels):
        cur = scales[-1]
        if c < channels - pre_pad + 1:
            cur = cur + sq[:, c + pre_pad - 1]
        if c > pre_pad:
            cur = cur - sq[:, c - pre_pad]
        scales.append(cur)
    from ..._ops.shape import stack

    return stack(scales, 1).mul(alpha / size).add(k)


def _cross_map_lrn2d_function():
    from ...autograd.function import Function

    class _CrossMapLRN2d(Function):
        @staticmethod
        def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
            if input.dim() != 4:
                raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
            scale = _lrn_scale(input.pow(2), size, alpha, k)
            output = scale.pow(-beta).mul(input)
            ctx.size, ctx.alpha, ctx.beta, ctx.scale = size, alpha, beta, scale
            ctx.save_for_backward(input, output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            from ..._ops.creation import zeros

            input, output = ctx.saved_tensors
            n, channels, h, w = input.shape
            size = ctx.size
            inv = int(size - (size - 1) / 2)
            ratio = grad_output.mul(output).div(ctx.scale)
            padded = zeros((n, channels + size - 1, h, w), dtype=input.dtype)
            padded[:, inv:inv + channels] = ratio
            csum = padded.cumsum(1)
            lo = csum[:, :channels] - padded[:, :channels]  # sum of padded[c .. c + size - 1] per channel c
            accum = csum[:, size - 1:size - 1 + channels] - lo
            grad_input = ctx.scale.pow(-ctx.beta).mul(grad_output)
            return grad_input - input * accum * (2 * ctx.alpha * ctx.beta / size), None, None, None, None

    return _CrossMapLRN2d


class CrossMapLRN2d(Module):
    """Local response normalization across channels of a 4-d input (torch's legacy form,
    NOTE [ CrossMapLRN2d ])."""

    _function = None

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        if CrossMapLRN2d._function is None:
            CrossMapLRN2d._function = _cross_map_lrn2d_function()
        return CrossMapLRN2d._function.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)

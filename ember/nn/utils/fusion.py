"""fuse_conv_bn_eval / fuse_linear_bn_eval: fold an eval-mode BatchNorm into the preceding layer."""

import copy

from ...autograd.grad_mode import no_grad
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of `conv` whose weight and bias absorb `bn`'s running statistics and affine (both in eval)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    with no_grad():
        conv_weight_dtype = conv_w.dtype
        conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
        if conv_b is None:
            conv_b = bn_rm.new_zeros(tuple(bn_rm.shape))
        if bn_w is None:
            bn_w = bn_rm.new_ones(tuple(bn_rm.shape))
        if bn_b is None:
            bn_b = bn_rm.new_zeros(tuple(bn_rm.shape))
        bn_var_rsqrt = (bn_rv + bn_eps).rsqrt()
        shape = [1] * conv_w.dim()
        shape[1 if transpose else 0] = -1
        fused_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(conv_weight_dtype)
        fused_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(conv_bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    with no_grad():
        if linear_b is None:
            linear_b = bn_rm.new_zeros(tuple(bn_rm.shape))
        bn_scale = bn_w * (bn_rv + bn_eps).rsqrt()
        fused_w = linear_w * bn_scale.unsqueeze(-1)
        fused_b = (linear_b - bn_rm) * bn_scale + bn_b
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)

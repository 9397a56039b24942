"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d (weights U(+-1/sqrt(fan_in)) as in torch)."""

import math

from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _ntuple, _reverse_repeat_tuple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d"]


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(empty(shape + tuple(kernel_size), dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    _nd = 2
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        t = _ntuple(self._nd)
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride),
                         padding if isinstance(padding, str) else t(padding), t(dilation), False, t(0), groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            x = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(x, weight, bias, self.stride, _ntuple(self._nd)(0), self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over (N, C_in, L)."""

    _nd = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-d convolution over (N, C_in, H, W)."""

    _nd = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-d convolution over (N, C_in, D, H, W)."""

    _nd = 3
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _nd = 2
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        t = _ntuple(self._nd)
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), t(padding), t(dilation), True,
                         t(output_padding), groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        nd = self._nd
        output_size = list(output_size)[-nd:]
        res = []
        for d in range(nd):
            dim_size = input.size(d + input.dim() - nd)
            min_size = ((dim_size - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            max_size = min_size + self.stride[d] - 1
            if not min_size <= output_size[d] <= max_size:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {min_size} "
                                 f"to {max_size} (for an input of {list(input.shape[2:])})")
            res.append(output_size[d] - min_size)
        return tuple(res)

    def forward(self, input, output_size=None):
        op = self._output_padding(input, output_size)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                              self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _nd = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    _nd = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    _nd = 3
    _fn = staticmethod(F.conv_transpose3d)


# ---- lazy convolutions (in_channels from the first input) ----------------------------------------------------


class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            from ...autograd.grad_mode import no_grad

            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):
        no_batch = self._nd + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]

    def _get_num_spatial_dims(self):
        return self._nd


def _lazy_placeholders(module, out_channels, bias, dtype):
    module.weight = UninitializedParameter(dtype=dtype)
    module.out_channels = out_channels
    if bias:
        module.bias = UninitializedParameter(dtype=dtype)


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        _lazy_placeholders(self, out_channels, bias, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)
        _lazy_placeholders(self, out_channels, bias, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose in_channels is inferred from the first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose in_channels is inferred from the first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose in_channels is inferred from the first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels is inferred from the first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels is inferred from the first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels is inferred from the first input."""

    cls_to_become = ConvTranspose3d

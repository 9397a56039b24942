"""Pooling layers over ember.nn.functional's pooling functions, with torch's reprs."""

from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "LPPool1d", "LPPool2d",
           # (area N)
           "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, dilation={dilation}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool3d)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        t = F.conv._tup
        self.kernel_size = t(kernel_size, 1)
        self.stride = t(stride if stride is not None else kernel_size, 1)
        self.padding = t(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]
    _fn = staticmethod(F.avg_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)


class AvgPool3d(AvgPool2d):
    _fn = staticmethod(F.avg_pool3d)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]
    _fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        return type(self)._fn(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _fn = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _fn = staticmethod(F.adaptive_max_pool3d)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, ceil_mode={ceil_mode}".format(
            **self.__dict__)

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool1d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool3d)


# ---- unpooling and fractional max pooling (area N) -----------------------------------------------------------


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _MaxUnpoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._nd
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input, indices, output_size=None):
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._nd - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of MaxPool1d (its indices put each value back; the rest are zeros)."""

    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of MaxPool2d (its indices put each value back; the rest are zeros)."""

    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of MaxPool3d (its indices put each value back; the rest are zeros)."""

    _nd = 3


class _FractionalMaxPoolNd(Module):
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        n = self._nd
        if n == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, H, W) (Graham, 2014): windows at pseudo-random strides."""

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, T, H, W) (Graham, 2014): windows at pseudo-random strides."""

    _nd = 3

"""Convolution, pooling and patch functions of ember.nn.functional (kernels in ember/_ops/conv.py, pooling.py)."""

from collections.abc import Iterable
from operator import index

from ... import _dtypes
from ..._argparse import call_error
from ..._dispatch import COMPLEX, FLOATING, REAL, _modes, dispatch, dtype_word, require_dtype, require_op_dtype
from ..._meta import conv_out_size, conv_transpose_out_size
from ..._ops import conv as C
from ..._ops import pooling as PL
from ..._ops import unpool as UP
from ..._ops._util import check_bool, int_tuple
from ..._ops.creation import eye as _eye
from ...autograd.grad_mode import is_grad_enabled as grad_enabled

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "lp_pool1d", "lp_pool2d", "unfold", "fold", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
           # (area N: unpooling, fractional and 3-d pools, conv_tbc, native_channel_shuffle)
           "adaptive_max_pool3d_with_indices", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices", "conv_tbc", "native_channel_shuffle"]


def _tup(v, n):
    if isinstance(v, (tuple, list)):
        return tuple(int(x) for x in v) if len(v) != 1 else (int(v[0]),) * n
    try:
        return (int(v),) * n
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def _batched(input, nd, name):
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    if input.dim() != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input.shape)}")
    return input, False


def _conv_pads(padding, nd, ksize, dil, stride):
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            tot = [d * (k - 1) for d, k in zip(dil, ksize)]
            return tuple((t // 2, t - t // 2) for t in tot)
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    return tuple((p, p) for p in _tup(padding, nd))


def _check_conv(x, w, b, groups, name, transposed=False, params=()):
    op = C.conv_transpose if transposed else C.convolution
    require_op_dtype(op, x.dtype, (x, w, b) + params)  # torch checks the dtype first
    try:
        if x.dtype != w.dtype and x.dtype in (_dtypes.bfloat16, _dtypes.complex64, _dtypes.complex128):
            tail = "" if x.is_complex() else (" or input should be a MKLDNN tensor and weight is a dense "
                                              "tensor")
            raise RuntimeError(f"Input type (CPU{dtype_word(x.dtype)}Type) and weight type ({w.type()}) should be "
                               f"the same{tail}")
        if x.dtype != w.dtype:
            raise RuntimeError(f"expected scalar type {dtype_word(x.dtype)} but found {dtype_word(w.dtype)}")
        if b is not None and b.dtype != x.dtype:
            raise RuntimeError(f"Input type ({dtype_word(x.dtype).lower()}) and bias type "
                               f"({dtype_word(b.dtype).lower()}) should be the same")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    try:
        cin = w.shape[0] if transposed else w.shape[1] * groups
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if x.shape[1] != cin:
        if transposed:
            raise RuntimeError(f"Given transposed=1, weight of size {list(w.shape)}, expected input "
                               f"{list(x.shape)} to have {w.shape[0]} channels, but got {x.shape[1]} channels "
                               "instead")
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected input{list(x.shape)} "
                           f"to have {cin} channels, but got {x.shape[1]} channels instead")


def _convnd(nd, input, weight, bias, stride, padding, dilation, groups):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call(f"conv{nd}d", _convnd, nd, input, weight, bias, stride, padding, dilation, groups)
    x, unbatched = _batched(input, nd, f"conv{nd}d")
    stride, dil = _tup(stride, nd), _tup(dilation, nd)
    _check_conv(x, weight, bias, groups, f"conv{nd}d", params=(stride, None, dil))
    pads = _conv_pads(padding, nd, weight.shape[2:], dil, stride)
    for n, k, p, d in zip(x.shape[2:], weight.shape[2:], pads, dil):
        if conv_out_size(n, k, 1, p, d) < 1:
            padded = " x ".join(str(a + b[0] + b[1]) for a, b in zip(x.shape[2:], pads))
            kernel = " x ".join(str(d * (k - 1) + 1) for k, d in zip(weight.shape[2:], dil))
            raise RuntimeError(f"Calculated padded input size per channel: ({padded}). Kernel size: ({kernel}). "
                               "Kernel size can't be greater than actual input size")
    out = dispatch(C.convolution, (x, weight, bias), (stride, pads, dil, groups))
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transposend(nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call(f"conv_transpose{nd}d.input" if nd > 1 else "conv_transpose1d", _conv_transposend,
                                 nd, input, weight, bias, stride, padding, output_padding, groups, dilation)
    x, unbatched = _batched(input, nd, f"conv_transpose{nd}d")
    stride, pad, opad, dil = _tup(stride, nd), _tup(padding, nd), _tup(output_padding, nd), _tup(dilation, nd)
    _check_conv(x, weight, bias, groups, f"conv_transpose{nd}d", transposed=True, params=((0,) * nd,))
    out_sp = tuple(conv_transpose_out_size(n, k, s, p, d, op)
                   for n, s, p, d, k, op in zip(x.shape[2:], stride, pad, dil, weight.shape[2:], opad))
    # the transposed conv of padding p is the input-grad of a conv with padding p; output_padding adds
    # rows at the high end that no input touches
    pads = tuple((p, p) for p in pad)
    out = dispatch(C.conv_transpose, (x, weight, bias), (out_sp, stride, pads, dil, groups))
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transposend(1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transposend(2, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transposend(3, input, weight, bias, stride, padding, output_padding, groups, dilation)


# ---- pooling ------------------------------------------------------------------------------------------------


_MAX_POOL = {1: "max_pool2d", 2: "max_pool2d", 3: "max_pool3d"}  # (1-d with indices is 2-d's kernel)
_NOT_BOOL = REAL - {"bool"}
_FOLD = FLOATING | COMPLEX | {"bool"}
_AVG_POOL = FLOATING | {"int64"}
_AVG_POOL3D = frozenset({"float32", "float64", "int64"})


# NOTE [ Pool shape checks ]
# torch's pooling meta functions check, before the kernel's dtype dispatch: the input's rank, each pooled dim's
# output size (`pooling_output_shape`: stride not zero, padding within half the effective kernel), then
# pool2d_shape_check / pool3d_shape_check (kernel, stride, dilation positive; the sizes, where only the
# batch dim may be 0; the padding within half the kernel; an output of at least 1). The 1-d pools check the
# rank range in their own words and run the 2-d checks on the input with a size-1 dim inserted; max_pool1d
# without indices (no grad) has its own checks (check_max_pool1d). The adaptive pools check rank and sizes
# only, each in its own order. Each check below is one of torch's, in torch's order and words.


def _pool_out(n, k, p, s, d, ceil_mode):
    """torch's pooling_output_shape: the output size of one pooled dim, with its checks."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if p < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    if p > ((k - 1) * d + 1) // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} "
                           f"and dilation={d}")
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _rank_range(x, name):
    """torch's checkDimRange(name, self, 2, 4) of the 1-d pools."""
    if not 2 <= x.dim() <= 3:
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {name})")


def _pool2d_checks(x, k, s, p, d, ceil_mode):
    """The rest of max_pool2d_with_indices' and avg_pool2d's meta after the rank: NOTE [ Pool shape checks ]."""
    c, h, w = x.shape[-3:]
    oh, ow = _pool_out(h, k[0], p[0], s[0], d[0], ceil_mode), _pool_out(w, k[1], p[1], s[1], d[1], ceil_mode)
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}")
    n = x.shape
    if not ((len(n) == 3 and n[0] and n[1] and n[2]) or (len(n) == 4 and n[1] and n[2] and n[3])):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(n)}")
    if k[1] // 2 < p[1] or k[0] // 2 < p[0]:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {p[1]}, "
                           f"padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
    if ow < 1 or oh < 1:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output "
                           "size is too small")


def _pool3d_checks(x, k, s, p, d, ceil_mode, fn, avg):
    """The rest of max_pool3d's and avg_pool3d's checks after the rank (pool3d_shape_check)."""
    c, t, h, w = x.shape[-4:]
    o = [_pool_out(n, kk, pp, ss, dd, ceil_mode) for n, kk, pp, ss, dd in zip((t, h, w), k, p, s, d)]
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} kH: {k[1]} kW: {k[2]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} dW: {s[2]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} dilationH: {d[1]} "
                           f"dilationW: {d[2]}")
    for i, n in enumerate(x.shape):
        if n <= 0 and not (x.dim() == 5 and i == 0):  # (torch prints the size where it means the dim)
            raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive length, but input "
                               f"has a shape of {list(x.shape)} and non-batch dimension {n} has length zero!")
    if avg and (t < k[0] or h < k[1] or w < k[2]):
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: {k[0]} kH: {k[1]} "
                           f"kW: {k[2]})")
    if k[0] // 2 < p[0] or k[2] // 2 < p[2] or k[1] // 2 < p[1]:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {k[0]} kW: "
                           f"{k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}")
    if min(o) < 1:
        raise RuntimeError(f"Given input size: ({c}x{t}x{h}x{w}). Calculated output size: ({c}x{o[0]}x{o[1]}x"
                           f"{o[2]}). Output size is too small")


def _check_pool(nd, x, k, s, p, d, ceil_mode, kind):
    """NOTE [ Pool shape checks ]: `kind` is "max" or "avg"; a 1-d pool is checked as the 2-d one it runs."""
    if nd == 1:
        _rank_range(x, f"{kind}_pool1d")
        x, k, s, p, d = x.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + p, (1,) + d
        nd = 2
    if nd == 2:
        if kind == "max" and x.dim() not in (3, 4):
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        x.size(-3)  # (avg_pool2d reads the planes first: torch's dim error for fewer than 3 dims)
        return _pool2d_checks(x, k, s, p, d, ceil_mode)
    if x.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    fn = "avg_pool3d()" if kind == "avg" else "max_pool3d_with_indices_out_cpu_template()"
    return _pool3d_checks(x, k, s, p, d, ceil_mode, fn, kind == "avg")


def _check_max_pool1d(x, k, s, p, d, ceil_mode):
    """torch's check_max_pool1d: max_pool1d's own checks where it runs without indices."""
    n = x.shape
    if not ((len(n) == 2 and n[0] and n[1]) or (len(n) == 3 and n[1] and n[2])):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(n)}")
    for ok, what in ((k[0] > 0, f"kernel_size must be greater than zero, but got {k[0]}"),
                     (s[0] > 0, f"stride must be greater than zero, but got {s[0]}"),
                     (p[0] >= 0, f"padding must be non-negative, but got {p[0]}"),
                     (p[0] <= k[0] // 2, f"padding should be at most half of kernel size, but got padding={p[0]} "
                                         f"and kernel_size={k[0]}"),
                     (d[0] > 0, f"dilation must be greater than zero, but got {d[0]}")):
        if not ok:
            raise RuntimeError(f"max_pool1d() {what}")
    out = _pool_out(n[-1], k[0], p[0], s[0], d[0], ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def _max_poolnd(nd, input, kernel_size, stride, padding, dilation, ceil_mode, name=None, indices=True):
    # torch's parser checks the arguments' types first (NOTE [ Argument types in torch's words ])
    name = name or f"max_pool{nd}d"
    k = int_tuple(kernel_size, nd, name, "kernel_size", 2)
    s = int_tuple(stride, nd, name, "stride", 3) if stride is not None and stride != [] and stride != () else k
    p, d = int_tuple(padding, nd, name, "padding", 4), int_tuple(dilation, nd, name, "dilation", 5)
    check_bool(ceil_mode, name, "ceil_mode", 6)
    if nd == 1 and not indices:
        _check_max_pool1d(input, k, s, p, d, ceil_mode)
    else:
        _check_pool(nd, input, k, s, p, d, ceil_mode, "max")
    require_dtype(input, _NOT_BOOL, _MAX_POOL[nd])
    x = input
    if nd == 1:  # torch's 1-d pool: the 2-d op on (..., 1, L) (NOTE [ Pooling ops per dimension ])
        out, idx = dispatch(PL.max_pool[2], (x.unsqueeze(-2),), ((1,) + k, (1,) + s, (0,) + p, (1,) + d, ceil_mode))
        return out.squeeze(-2), idx.squeeze(-2)
    return dispatch(PL.max_pool[nd], (x,), (k, s, p, d, ceil_mode))


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_poolnd(1, input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool1d_with_indices")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_poolnd(2, input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d_with_indices")


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_poolnd(3, input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool3d_with_indices")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    int_tuple(kernel_size, 1, "max_pool1d", "kernel_size", 2)  # (the parser's check comes before the dtype's)
    indices = return_indices or (input.requires_grad and grad_enabled())  # (torch's with-indices path runs
    if not indices:                                                         # where grad is needed)
        k = int_tuple(kernel_size, 1, "max_pool1d", "kernel_size", 2)
        s = int_tuple(stride, 1, "max_pool1d", "stride", 3) if stride is not None and stride != [] \
            and stride != () else k
        _check_max_pool1d(input, k, s, int_tuple(padding, 1, "max_pool1d", "padding", 4),
                          int_tuple(dilation, 1, "max_pool1d", "dilation", 5), ceil_mode)
        require_dtype(input, FLOATING, "max_pool1d_impl")
    r = _max_poolnd(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                    "max_pool1d_with_indices" if return_indices else None, indices)
    return r if return_indices else r[0]


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    r = _max_poolnd(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                    "max_pool2d_with_indices" if return_indices else None)
    return r if return_indices else r[0]


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if _modes and not return_indices:  # torch.max_pool3d is listed, max_pool3d_with_indices is not
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("max_pool3d", max_pool3d, input, kernel_size, stride, padding, dilation, ceil_mode)
    r = _max_poolnd(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                    "max_pool3d_with_indices" if return_indices else None)
    return r if return_indices else r[0]


def _avg_poolnd(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    # torch's parser checks the arguments' types first (NOTE [ Argument types in torch's words ])
    name = f"avg_pool{nd}d"
    k = int_tuple(kernel_size, nd, name, "kernel_size", 2)
    s = int_tuple(stride, nd, name, "stride", 3) if stride is not None and stride != [] and stride != () else k
    p = int_tuple(padding, nd, name, "padding", 4)
    check_bool(ceil_mode, name, "ceil_mode", 5)
    check_bool(count_include_pad, name, "count_include_pad", 6)
    if divisor_override == 0 and nd > 1:
        raise RuntimeError("divisor must be not zero")
    _check_pool(nd, input, k, s, p, (1,) * nd, ceil_mode, "avg")
    if nd < 3:
        require_dtype(input, _AVG_POOL, "avg_pool2d")
    else:
        require_dtype(input, _AVG_POOL3D, "avg_pool3d_out_frame")
    if nd == 1:  # (NOTE [ Pooling ops per dimension ] in ember/_ops/pooling.py)
        return dispatch(PL.avg_pool[2], (input.unsqueeze(-2),), ((1,) + k, (1,) + s, (0,) + p, ceil_mode,
                                                                 count_include_pad, divisor_override)).squeeze(-2)
    return dispatch(PL.avg_pool[nd], (input,), (k, s, p, ceil_mode, count_include_pad, divisor_override))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _avg_poolnd(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_poolnd(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("avg_pool3d", avg_pool3d, input, kernel_size, stride, padding, ceil_mode,
                                 count_include_pad, divisor_override)
    return _avg_poolnd(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _out_sizes(x, output_size, nd):
    sizes = _tup(output_size, nd) if not isinstance(output_size, (tuple, list)) else tuple(output_size)
    return tuple(x.shape[-nd + i] if s is None else int(s) for i, s in enumerate(sizes))


def _check_adaptive(nd, x, kind):
    """The adaptive pools' rank and size checks, in each one's order (NOTE [ Pool shape checks ])."""
    name, n = f"adaptive_{kind}_pool{nd}d()", x.shape
    if kind == "max" or nd == 2:  # (adaptive_avg_pool3d checks the sizes first, then the rank)
        if x.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D tensor, but got{':' * (kind == 'max')} "
                               f"{list(n)}")
    dims = range(len(n) - 2, len(n)) if kind == "avg" and nd == 2 else range(1, len(n))
    for i in dims:
        if n[i] <= 0:
            raise RuntimeError(f"{name}: Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(n)} with dimension {i} being empty")
    if kind == "avg" and nd == 3 and x.dim() not in (4, 5):
        raise RuntimeError(f"{name}: Expected 4D or 5D tensor, but got {list(n)}")


def _adaptive_avg(nd, input, output_size):
    if nd == 1:
        _rank_range(input, "adaptive_avg_pool1d")
    out = _out_sizes(input, output_size, nd)
    if nd == 1:  # (NOTE [ Pooling ops per dimension ] in ember/_ops/pooling.py)
        return _adaptive_avg(2, input.unsqueeze(-2), (1,) + out).squeeze(-2)
    if min(out) < 0:  # (torch's words, its 3-d list printed without a space before the last)
        sizes = ", ".join(map(str, out)) if nd == 2 else f"{out[0]}, {out[1]},{out[2]}"
        raise RuntimeError(f"adaptive_avg_pool{nd}d: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{sizes}}}")
    if all(o == 1 for o in out):  # torch's: a mean over the pooled dims (with mean's dtype rules)
        return input.mean(tuple(range(-1, -nd - 1, -1)), keepdim=True)
    _check_adaptive(nd, input, "avg")
    require_dtype(input, FLOATING, "adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d")
    return dispatch(PL.adaptive_avg_pool[nd], (input,), (out,))


def adaptive_avg_pool1d(input, output_size):
    return _adaptive_avg(1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg(2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("adaptive_avg_pool3d", adaptive_avg_pool3d, input, output_size)
    return _adaptive_avg(3, input, output_size)


def _adaptive_max(nd, input, output_size):
    if nd == 1:
        _rank_range(input, "adaptive_max_pool1d")
    _check_adaptive(nd, input, "max")
    require_dtype(input, FLOATING, "adaptive_max_pool3d_cpu" if nd == 3 else "adaptive_max_pool2d")
    out = _out_sizes(input, output_size, nd)
    if min(out) < 0:  # (torch allocates the result first: the empty() error)
        shape = list(input.shape[:-nd]) + ([1] if nd == 1 else []) + list(out)
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {shape}")
    if nd == 1:  # (NOTE [ Pooling ops per dimension ] in ember/_ops/pooling.py)
        v, idx = dispatch(PL.adaptive_max_pool[2], (input.unsqueeze(-2),), ((1,) + out,))
        return v.squeeze(-2), idx.squeeze(-2)
    return dispatch(PL.adaptive_max_pool[nd], (input,), (out,))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(1, input, output_size)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(2, input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    r = _adaptive_max(1, input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    r = _adaptive_max(2, input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("adaptive_max_pool3d", adaptive_max_pool3d, input, output_size,
                                 return_indices)
    r = _adaptive_max(3, input, output_size)
    return r if return_indices else r[0]


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    if nd > 1 and isinstance(kernel_size, (tuple, list)) and len(kernel_size) != nd:  # torch's `kw, kh = ...`
        raise ValueError(f"not enough values to unpack (expected {nd}, got {len(kernel_size)})"
                         if len(kernel_size) < nd else f"too many values to unpack (expected {nd})")
    k = _tup(kernel_size, nd)
    if isinstance(norm_type, (int, float)) and norm_type in (float("inf"), -float("inf")):
        pooled = _max_poolnd(nd, input.abs() if norm_type > 0 else -input.abs(), kernel_size, stride, 0, 1,
                             ceil_mode)[0]
        return pooled if norm_type > 0 else -pooled
    avg = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    out = avg(input.pow(norm_type), k, stride, 0, ceil_mode)
    n = 1
    for kk in k:
        n *= kk
    return (out.sign() * out.abs().relu()).mul(n).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(3, input, output_size)


# ---- unpooling and fractional max pooling (area N) ----------------------------------------------------------


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """torch's nn.functional._unpool_output_size: the default size, or `output_size` checked against it."""
    nd = len(kernel_size)
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has "
                             f"a length of '{len(output_size)}'")
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
        ret = output_size
    for d in range(nd):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={ret[d]}")
    return ret


def _check_unpool(nd, input, indices):
    op = f"max_unpooling{nd}d_forward_out_cpu"
    if indices.dtype is not _dtypes.int64:
        got = f" but got: {dtype_word(indices.dtype)}" if nd == 2 else ""
        raise RuntimeError(f"elements in indices should be type int64{got}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor "
                           f"with {input.dim()} dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError("Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    for d in range(1, input.dim()):
        if input.shape[d] <= 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but got "
                               f"{list(input.shape)} with dimension {d} being empty.")
    require_dtype(input, FLOATING, f"max_unpool{nd}d")


def _max_unpoolnd(nd, input, indices, kernel_size, stride, padding, output_size):
    # torch's _ntuple (an iterable as a tuple, else repeated) feeds the size arithmetic: a wrong type fails
    # there, in Python's words, as in torch
    k = tuple(kernel_size) if isinstance(kernel_size, Iterable) else (kernel_size,) * nd
    s = (tuple(stride) if isinstance(stride, Iterable) else (stride,) * nd) if stride is not None else k
    p = tuple(padding) if isinstance(padding, Iterable) else (padding,) * nd
    if output_size is not None and not isinstance(output_size, (tuple, list)):
        output_size = _tup(output_size, nd)
    size = [int(v) for v in _unpool_output_size(input, k, s, p, output_size)]
    k, s, p = _tup(k, nd), _tup(s, nd), _tup(p, nd)
    if nd == 1:
        return _max_unpoolnd(2, input.unsqueeze(-1), indices.unsqueeze(-1), (k[0], 1), (s[0], 1), (p[0], 0),
                             size + [1]).squeeze(-1)
    _check_unpool(nd, input, indices)
    params = (tuple(size),) if nd == 2 else (tuple(size), s, p)
    return dispatch(UP.max_unpool[nd], (input, indices), params)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of MaxPool1d: values back at their indices, zeros elsewhere."""
    return _max_unpoolnd(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of MaxPool2d: values back at their indices, zeros elsewhere."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("max_unpool2d", max_unpool2d, input, indices, kernel_size, stride, padding,
                                 output_size)
    return _max_unpoolnd(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of MaxPool3d: values back at their indices, zeros elsewhere."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("max_unpool3d", max_unpool3d, input, indices, kernel_size, stride, padding,
                                 output_size)
    return _max_unpoolnd(3, input, indices, kernel_size, stride, padding, output_size)


def _fractional(nd, input, kernel_size, output_size, output_ratio, _random_samples):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:  # (torch takes len() of a plain number too: a TypeError)
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * nd
        ratio = ratio * nd if len(ratio) == 1 else ratio
        output_size = [int(input.shape[-nd + d] * ratio[d]) for d in range(nd)]
    k = _tup(kernel_size, nd)
    out = _tup(output_size, nd)
    if _random_samples is None:
        from ..._ops.random import rand

        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        _random_samples = rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    _check_fractional(nd, input, k, out, _random_samples)
    return dispatch(UP.fractional_max_pool[nd], (input, _random_samples), (k, out))


def _check_fractional(nd, x, k, out, samples):
    name = f"fractional_max_pool{nd}d"
    if samples.dtype is not x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if x.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(x.shape)}")
    for d in range(1, x.dim()):
        if x.shape[d] <= 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{list(x.shape)} with dimension {d} being empty.")
    if samples.dim() != 3 or samples.shape[1] != x.shape[-nd - 1] or samples.shape[2] != nd:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    prefix = f"{name}()" if nd == 2 else f"{name}_out()"
    for d in range(nd):
        size = x.shape[-nd + d]
        if out[d] + k[d] - 1 > size:
            word = ("height", "width")[d] if nd == 2 else ("time", "height", "width")[d]
            raise RuntimeError(f"{prefix}: pool {word} {k[d]} too large relative to input {word} {size}")
    require_dtype(x, FLOATING, f"{name}_out_frame")


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Fractional max pooling (Graham, 2014) over (N, C, H, W): windows at random fractional strides."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Fractional max pooling (Graham, 2014) over (N, C, T, H, W): windows at random fractional strides."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fractional_max_pool2d", fractional_max_pool2d, input, kernel_size,
                                 output_size, output_ratio, return_indices, _random_samples)
    r = _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return r if return_indices else r[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fractional_max_pool3d", fractional_max_pool3d, input, kernel_size,
                                 output_size, output_ratio, return_indices, _random_samples)
    r = _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return r if return_indices else r[0]


# ---- patches and channel shuffles ------------------------------------------------------------------------------


def _pair_of(v):
    """torch's nn.modules.utils._pair: an iterable as a tuple, anything else twice."""
    return tuple(v) if isinstance(v, Iterable) else (v, v)


def _im2col_check(input, k, d, p, s):
    for name, v in (("kernel_size", k), ("dilation", d), ("padding", p), ("stride", s)):
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} "
                           f"kernel_width: {k[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} "
                           f"dilation_width: {d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")
    nd = input.dim()
    valid = input.size(1) != 0 and input.size(2) != 0  # (torch reads these sizes first: a low rank's IndexError)
    if nd == 3:
        valid = valid and input.size(0) != 0
    elif nd == 4:
        valid = valid and input.size(3) != 0
    if nd not in (3, 4) or not valid:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    h, w = input.shape[-2:]
    oh = (h + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    ow = (w + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array of "
                           f"sliding blocks as ({oh}, {ow}), but its components must be at least one.")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) -> (N, C*kh*kw, L), as a convolution with an identity weight would read it."""
    # torch's _pair, then im2col's checks in its order (im2col_out_cpu_template, im2col_shape_check), the
    # dtype last; the parser reads the pairs (NOTE [ Python functions of torch that call one native ])
    kernel_size, dilation, padding, stride = (_pair_of(v) for v in (kernel_size, dilation, padding, stride))
    try:
        k, d, p, s = (tuple(index(x) for x in v) for v in (kernel_size, dilation, padding, stride))
        _im2col_check(input, k, d, p, s)
    except (AttributeError, TypeError, ValueError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    require_dtype(input, _FOLD, "im2col_out_cpu")
    mask = input.dtype is _dtypes.bool  # the convolution below takes no bool; in uint8 it is exact
    src = input.to(_dtypes.uint8) if mask else input
    x, unbatched = _batched(src, 2, "unfold") if src.dim() == 3 else (src, False)
    c = x.shape[1]
    eye = _eye(c * k[0] * k[1], dtype=x.dtype, device=x.device).reshape(c * k[0] * k[1], c, *k)
    out = dispatch(C.convolution, (x, eye, None), (s, ((p[0], p[0]), (p[1], p[1])), d, 1))
    out = out.reshape(out.shape[0], out.shape[1], -1)
    out = out.to(input.dtype) if mask else out
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im: the adjoint of `unfold`, summing overlapping patches."""
    require_dtype(input, _FOLD, "col2im_out_cpu")
    x, unbatched = (input.unsqueeze(0), True) if input.dim() == 2 else (input, False)
    o, k, d, p, s = _tup(output_size, 2), _tup(kernel_size, 2), _tup(dilation, 2), _tup(padding, 2), _tup(stride, 2)
    ck = x.shape[1]
    c = ck // (k[0] * k[1])
    oh = (o[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (o[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if x.shape[2] != oh * ow:
        raise RuntimeError(
            f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
            f"padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected size of input's dimension 2 to match the "
            f"calculated number of sliding blocks {oh} * {ow} = {oh * ow}, but got input.size(2)={x.shape[2]}.")
    eye = _eye(ck, dtype=x.dtype, device=x.device).reshape(ck, c, *k)
    g = x.reshape(x.shape[0], ck, oh, ow)
    out = dispatch(C.conv_input_grad, (g, eye), (o, s, ((p[0], p[0]), (p[1], p[1])), d, 1))
    return out.squeeze(0) if unbatched else out


def pixel_shuffle(input, upscale_factor):
    r = upscale_factor
    *b, c, h, w = input.shape
    oc = c // (r * r)
    x = input.reshape(*b, oc, r, r, h, w)
    n = len(b)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*b, oc, h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    r = downscale_factor
    *b, c, h, w = input.shape
    x = input.reshape(*b, c, h // r, r, w // r, r)
    n = len(b)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*b, c * r * r, h // r, w // r)


def _check_shuffle(input, groups):
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.shape[1] % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                           f"{groups} groups.")


def channel_shuffle(input, groups):
    _check_shuffle(input, groups)
    n, c = input.shape[:2]
    rest = tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


def native_channel_shuffle(input, groups):
    """channel_shuffle's native kernel (the same permutation of channels)."""
    _check_shuffle(input, groups)
    n, c = input.shape[:2]
    rest = tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).contiguous().view(n, c, *rest)


def conv_tbc(input, weight, bias, pad=0):
    """1-d convolution over (time, batch, channels) input with a (kernel, in, out) weight."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.dtype is _dtypes.bool:  # (torch's conv_tbc is a loop of addmm calls)
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return out.permute(2, 0, 1).contiguous()  # (torch returns a fresh (T, B, C_out) tensor)

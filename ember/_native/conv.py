"""The Python side of the convolution and pooling kernels (conv.c, pool.c): one wrapper per kernel, called
from the op's NumPy kernel in ember/_ops/conv.py and ember/_ops/pooling.py, returning the result or None
(native off or unavailable, too small, a dtype or layout the C code does not take), as in ops.py.

The convolution kernels multiply with NumPy's own OpenBLAS sgemm, called from C inside their parallel loop
(NOTE [ Convolution threads ] in conv.c); `_blas()` finds it. A NumPy without its bundled 64-bit-index
OpenBLAS (a distribution build) keeps the NumPy convolution.

NOTE [ Native convolution and pooling at every size ]
Unlike the pointwise kernels (NOTE [ Choosing the native kernel ] in __init__.py), these take the C path at
every size: the NumPy kernels they replace make several calls per tap or per block (window views, padding
copies, one ufunc pass per tap), so even the smallest convolution or pooling costs less in C (measured: a 1x1x8x8
max_pool2d 18 us against 66 us, a 3x3 conv2d forward and backward on 2x3x8x8 452 us against 569 us). Threads
are still spent only above PARALLEL_SIZE (`pool_threads_for`; NOTE [ Convolution threads by size ]). Running the
C path at every size also makes the float32 pooling results torch's to the bit at every size, which the
NumPy kernels are not (their sums and scatters add in another order).
"""

from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

from .. import _native
from . import function, pool_threads_for
from .blas import one_blas_thread

_P, _I, _C = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)
_ND = np.ndarray
_state: dict = {}


def _blas():
    """(sgemm address, set_num_threads) of NumPy's bundled OpenBLAS, or None."""
    if "blas" not in _state:
        _state["blas"] = None
        libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
        for path in sorted(glob.glob(os.path.join(libs, "*openblas64*.so*"))):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            gemm = getattr(lib, "scipy_cblas_sgemm64_", None)
            setter = getattr(lib, "scipy_openblas_set_num_threads64_", None)
            getter = getattr(lib, "scipy_openblas_get_num_threads64_", None)
            if gemm is not None and setter is not None and getter is not None:
                setter.argtypes, setter.restype, getter.restype = [ctypes.c_int], None, ctypes.c_int
                _state["blas"] = (ctypes.cast(gemm, ctypes.c_void_p).value, setter, getter)
                break
    return _state["blas"]


def _ok(*arrays) -> bool:
    return all(a is None or (type(a) is _ND and a.dtype == _F32 and a.flags.c_contiguous) for a in arrays)


def _shape(xs, ws, stride, pads, dil, groups, out):
    """The int64 shape vector of conv.c (N C H W O KH KW SH SW PH PW DH DW G OH OW) for input shape `xs` and
    weight shape `ws`; a 1-d convolution as one of height 1."""
    if len(xs) == 3:
        return np.array([xs[0], xs[1], 1, xs[2], ws[0], 1, ws[2], 1, stride[0], 0, pads[0][0], 1, dil[0], groups,
                         1, out[0]], np.int64)
    return np.array([*xs, ws[0], *ws[2:], *stride, pads[0][0], pads[1][0], *dil, groups, *out], np.int64)


# NOTE [ Convolution threads by size ]
# A convolution takes threads only from CONV_PARALLEL_WORK multiply-adds (2M), and then as `pool_threads_for`
# gives them. While the convolutions' loops ran on the kernels' passive OpenMP team, the floor was 16.7M (a
# matrix product's, NOTE [ BLAS threads by size ] in blas.py): each loop's wake-ups cost about what LeNet's
# 5.5M-9.8M multiply-add convolutions gained from the second core, and LeNet's 2-thread step took the time of
# its 1-thread step. On ember's pool (NOTE [ Kernels on ember's pool ] in common.h), whose idle workers spin
# between loops while that gets them there in time (NOTE [ Spinning while it pays ] in threadpool.c), the
# same convolutions gain: LeNet's step alone (benchmarks/alone.py, idle machine, medians of 2 processes) went
# from 2.39 / 2.62 ms at 2 threads with the 16.7M floor (1 thread: 2.40 / 2.55) to 2.06 / 2.18 ms with 2M
# (1 thread: 2.41 / 2.47), and the MNIST example's network stayed at 7.2-7.3 ms. With PARALLEL_SIZE 0
# (EMBER_NATIVE=force, the tests) every convolution splits.
CONV_PARALLEL_WORK = 1 << 21


def _conv_threads(work, n):
    if work < CONV_PARALLEL_WORK and _native.PARALLEL_SIZE:
        return 1
    return min(pool_threads_for(work), n)  # (NOTE [ Kernels on ember's pool ] in common.h)


def _conv_call(name, work, n, argtypes):
    """(fn, blas, threads) for a convolution kernel, or None."""
    blas = _blas()
    fn = blas and function("conv", name, argtypes, ctypes.c_int)
    if not fn:
        return None
    nt = _conv_threads(work, n)
    return fn, blas, nt


def _run(call, args):
    """Call a convolution kernel with OpenBLAS on one thread (NOTE [ Convolution threads ]), where ember keeps
    it once it has made a product (NOTE [ BLAS threads by size ]); False when its buffers could not be
    allocated. (On one thread too when the kernel itself runs on one: right after `set_num_threads(2)` an
    OpenBLAS pool of 2 split the kernel's sgemm calls, which woke that pool and changed the bits.)"""
    fn, (gemm, _, _), nt = call
    one_blas_thread()
    rc = fn(*args, gemm, nt)
    return rc == 0


def _fits(x, w, nd):
    return x.ndim == w.ndim == nd + 2 and nd in (1, 2) and x.size and w.size


# NOTE [ Same-size convolutions take the direct kernel ]
# A convolution at stride 1 whose output has its input's size runs conv_direct.c's kernel, forward and input
# gradient, and so does the forward at stride 2 of a large enough output (`_phased`, NOTE [ Stride 2 as four
# phases ] there): no im2col (NOTE [ Same-size convolutions without im2col ]). A depthwise one too, with one
# output a channel (and its weight gradient: NOTE [ Depthwise weight gradient ] there), but not a 1x1 (conv.c
# multiplies its input as it is), nor one torch runs on its native path
# rather than oneDNN's (`_onednn`): that path multiplies the padding's zeros too, so an inf or NaN weight makes
# NaN at the border, where oneDNN and conv_direct.c add nothing for the padding (NOTE [ Padding adds nothing ]
# there), and conv.c's im2col gives torch's NaN. The same holds for the weight gradient's kernel
# (conv_wgrad.c, NOTE [ Which weight gradients go direct ]), except that oneDNN's grouped weight gradient adds
# nothing for the padding where its grouped forward multiplies it. The kernel answers NOT_BUILT where the build
# has no AVX-512 (then never again) and NOT_TAKEN for a shape it does not take (more than 64 taps); then conv.c's
# kernels run.
_NOT_BUILT = -2


def _onednn(xs, ws, groups):
    """Whether torch 2.13 runs this float32 convolution of input shape xs, weight shape ws (KH x KW > 1) on
    oneDNN: its `use_mkldnn` (aten/src/ATen/native/Convolution.cpp) for such a shape."""
    return groups > 1 or (len(ws) == 4 and ws[-1] > 3 and ws[-2] > 3) or xs[0] > 1 or int(np.prod(xs)) > 20480


def _same(xs, w, stride, out, groups):
    """Whether conv_direct.c takes this forward or input gradient: not grouped (oneDNN's grouped forward
    multiplies the padding too, measured) unless depthwise with one output a channel (torch's depthwise kernel
    adds nothing for the padding; with a channel multiplier, torch's forward multiplies it: measured)."""
    depthwise = groups == xs[1] == w.shape[0] and w.shape[1] == 1
    return all(s == 1 for s in stride) and tuple(out) == tuple(xs[2:]) and w[0, 0].size > 1 \
        and (depthwise or (groups == 1 and w.shape[1] > 1 and _onednn(xs, w.shape, groups))) \
        and _state.get("direct") is not False


def _phased(xs, w, stride, out, groups):
    """Whether conv_direct.c takes this forward at stride 2 (NOTE [ Stride 2 as four phases ] there): 2-d, each
    phase of the input no larger than the output, an output plane of PHASED_MIN positions or more, as `_same`
    otherwise."""
    return len(xs) == 4 and tuple(stride) == (2, 2) and (xs[2] + 1) // 2 <= out[0] and (xs[3] + 1) // 2 <= out[1] \
        and out[0] * out[1] >= PHASED_MIN and w[0, 0].size > 1 and groups == 1 and _onednn(xs, w.shape, groups) \
        and _state.get("direct") is not False


PHASED_MIN = 256


def _direct(a, w, b, y, shape, grad, work):
    """Run conv2d_same_f32 into y; False where it cannot (then the im2col path runs)."""
    fn = function("conv_direct", "conv2d_same_f32", [_P, _P, _P, _P, _P, _C, _C], ctypes.c_int)
    if not fn:
        return False
    rc = fn(a.ctypes.data, w.ctypes.data, None if b is None else b.ctypes.data, y.ctypes.data,
            shape.ctypes.data, grad, _conv_threads(work, a.shape[0]))
    if rc == _NOT_BUILT:
        _state["direct"] = False
    return rc == 0


def conv_forward(x, w, b, stride, pads, dil, groups, out):
    """conv(x, w) + b for float32 x (N, C, *sp) with 1 or 2 spatial dims and output size `out`, or None."""
    nd = len(stride)
    if not _fits(x, w, nd) or not _ok(x, w, b) or min(out) < 1:
        return None
    work = x.shape[0] * w.size * int(np.prod(out))
    if _same(x.shape, w, stride, out, groups) or _phased(x.shape, w, stride, out, groups):
        # (NOTE [ Same-size convolutions take the direct kernel ])
        y = np.empty((x.shape[0], w.shape[0]) + tuple(out), _F32)
        if _direct(x, w, b, y, _shape(x.shape, w.shape, stride, pads, dil, groups, out), 0, work):
            return y
    call = _conv_call("conv2d_forward_f32", work, x.shape[0], [_P, _P, _P, _P, _P, _P, _C])
    if call is None:
        return None
    y = np.empty((x.shape[0], w.shape[0]) + tuple(out), _F32)
    shape = _shape(x.shape, w.shape, stride, pads, dil, groups, out)
    ok = _run(call, (x.ctypes.data, w.ctypes.data, None if b is None else b.ctypes.data, y.ctypes.data,
                     shape.ctypes.data))
    return y if ok else None


def conv_input_grad(g, w, in_sp, stride, pads, dil, groups):
    """The gradient of a convolution's float32 input of spatial size `in_sp` from the output gradient g."""
    nd = len(stride)
    if not _fits(g, w, nd) or not _ok(g, w):
        return None
    n = g.shape[0]
    work = n * w.size * int(np.prod(g.shape[2:]))
    xs = (n, w.shape[1] * groups) + tuple(in_sp)
    if _same(xs, w, stride, g.shape[2:], groups):  # (NOTE [ Same-size convolutions take the direct kernel ])
        gx = np.empty(xs, _F32)
        if _direct(g, w, None, gx, _shape(gx.shape, w.shape, stride, pads, dil, groups, g.shape[2:]), 1, work):
            return gx
    call = _conv_call("conv2d_input_grad_f32", work, n, [_P, _P, _P, _P, _P, _C])
    if call is None:
        return None
    gx = np.empty((n, w.shape[1] * groups) + tuple(in_sp), _F32)
    shape = _shape(gx.shape, w.shape, stride, pads, dil, groups, g.shape[2:])
    return gx if _run(call, (g.ctypes.data, w.ctypes.data, gx.ctypes.data, shape.ctypes.data)) else None


# NOTE [ Weight gradient chunks ]
# The samples are summed in chunks, one partial weight gradient each, added in chunk order (conv.c): the
# chunks are what the threads split, and every chunk costs one more pass over a weight-sized buffer in the
# sum. Their count comes from the shape alone (never the threads, so results do not depend on them): at most
# 16 and one per sample, at most 32 MiB of partial sums (glibc's largest mmap threshold: a larger buffer is
# fresh pages, a page fault per 4 KiB, at every call), at least CHUNK_K output positions per chunk but at
# least 2 chunks where the batch allows, and an even count of them (two threads split them evenly). The sum
# reads one float of partial sums per 2 K multiply-adds of the chunk's products: at CHUNK_K 192 (the value
# before) ResNet's layer3 3x3 conv at batch 8 (14 x 14 maps, 2.4 MB of weights) made 8 chunks of one sample,
# whose sum took about 2 of its weight gradient's 10 ms; at 768 it makes 2 chunks of 4 (thread CPU time, one
# thread: 9.9 -> 9.1 ms), and 7 x 7 layer4 maps 2 chunks of 4 as before (NOTE [ Weight gradient in blocks
# of samples ] in conv.c).
_PARTIALS_BYTES = 32 << 20
_CHUNK_K = 768


def conv_weight_grad(x, g, ksize, stride, pads, dil, groups):
    """The gradient of a convolution's float32 weight (O, C/G, *ksize) from its input and output gradient."""
    nd = len(stride)
    if x.ndim != nd + 2 or nd not in (1, 2) or not x.size or not g.size or not _ok(x, g):
        return None
    n, o = g.shape[:2]
    wshape = (o, x.shape[1] // groups) + tuple(ksize)
    wsize = int(np.prod(wshape))
    work = n * wsize * int(np.prod(g.shape[2:]))
    if groups == x.shape[1] and wshape[1] == 1 and all(s == 1 for s in stride) and x.shape[2:] == g.shape[2:] \
            and int(np.prod(ksize)) > 1 and _state.get("direct") is not False:  # depthwise, same size
        gw = np.empty(wshape, _F32)  # (NOTE [ Depthwise weight gradient ] in conv_direct.c)
        fn = function("conv_direct", "conv2d_dw_weight_grad_f32", [_P, _P, _P, _P, _C], ctypes.c_int)
        shape = _shape(x.shape, wshape, stride, pads, dil, groups, g.shape[2:])
        if fn and fn(x.ctypes.data, g.ctypes.data, gw.ctypes.data, shape.ctypes.data, _conv_threads(work, o)) == 0:
            return gw
    if _same_size(x, g, wshape, stride, groups):  # (NOTE [ Direct weight gradient ] in conv_wgrad.c)
        gw = _weight_grad_same(x, g, wshape, pads, dil, groups, work)
        if gw is not None:
            return gw
    call = _conv_call("conv2d_weight_grad_f32", work, n, [_P, _P, _P, _P, _I, _P, _P, _C])
    if call is None:
        return None
    length = int(np.prod(g.shape[2:]))  # (NOTE [ Weight gradient chunks ])
    chunks = max(1, min(n, 16, _PARTIALS_BYTES // (wsize * 4), max(2, n * length // _CHUNK_K)))
    chunks -= chunks % 2 if chunks > 1 else 0  # an even count: two threads split them evenly
    gw = np.empty(wshape, _F32)
    partials = np.empty((chunks, wsize), _F32)  # (NOTE [ Weight gradient as cols @ g^T ] in conv.c)
    shape = _shape(x.shape, wshape, stride, pads, dil, groups, g.shape[2:])
    ok = _run(call, (x.ctypes.data, g.ctypes.data, gw.ctypes.data, partials.ctypes.data, chunks,
                     shape.ctypes.data))
    return gw if ok else None


# NOTE [ Which weight gradients go direct ]
# conv_wgrad.c's kernel takes stride-1 convolutions whose output has the input's size, when the weight has
# at least DIRECT_MIN_CK im2col rows per group (C/G KH KW) and is not depthwise: its tile reads each output
# gradient block once per row, and with the few rows of a first layer (CIFAR's 27, MNIST's 25) the
# transposition of the output gradient costs about what the products do (measured, one thread, batch 64:
# CIFAR's first conv 0.68 ms against 0.70 on conv.c's path, MNIST's 0.45 against 0.33). Depthwise
# convolutions keep their own loop (conv.c), and 1x1 convolutions conv.c's product of x as it is (no im2col
# to save). The kernel's tiles cover blocks of DIRECT_BLOCK outputs of a group; where a quarter of their
# lanes or more would be padding (O/G of 16 or 8, 40), conv.c's path was as fast or faster (one thread:
# O = 16, C = 16, 16 x 16 maps, batch 64: 0.74 ms against 0.69; 32 groups of 16 of ResNet's 14 x 14 x 512:
# 3.08 against 2.50; O/G = 24: 1.42 against 1.86, 48: 1.93 against 1.92, 32 or 64: 0.69 against 0.89,
# 2.62 against 3.65).
DIRECT_MIN_CK = 64
DIRECT_BLOCK = 32  # conv_wgrad.c's OB


def _same_size(x, g, wshape, stride, groups):
    ck, og = int(np.prod(wshape[1:])), wshape[0] // groups
    lanes = -(-og // DIRECT_BLOCK) * DIRECT_BLOCK
    return (all(s == 1 for s in stride) and x.shape[2:] == g.shape[2:] and ck >= DIRECT_MIN_CK
            and 4 * og >= 3 * lanes and not (groups > 1 and wshape[1] == 1) and any(k > 1 for k in wshape[2:])
            and _onednn(x.shape, wshape, groups))  # (NOTE [ Same-size convolutions take the direct kernel ])


def _weight_grad_same(x, g, wshape, pads, dil, groups, work):
    fn = function("conv_wgrad", "conv2d_weight_grad_same_f32", [_P, _P, _P, _P, _C], _C)
    if not fn:
        return None
    gw = np.empty(wshape, _F32)
    if x.ndim == 3:  # a 1-d convolution as one of height 1
        p = [x.shape[0], x.shape[1], 1, x.shape[2], wshape[0], 1, wshape[2], 0, pads[0][0], 1, dil[0], groups]
    else:
        p = [*x.shape, wshape[0], *wshape[2:], pads[0][0], pads[1][0], *dil, groups]
    shape = np.array(p, np.int64)
    nt = _conv_threads(work, x.shape[0] * wshape[0])
    return gw if fn(x.ctypes.data, g.ctypes.data, gw.ctypes.data, shape.ctypes.data, nt) == 0 else None


# ---- pooling (pool.c) --------------------------------------------------------------------------------------

def _pool_ok(x, nd):
    return nd == 2 and x.ndim == 4 and x.size and _ok(x)


def max_pool2d(x, ksize, stride, pads, dil, out):
    """(values, int64 flat per-plane indices) of the max pooling of float32 (N, C, H, W) x, or None (NOTE
    [ Max pooling forward in C ] in pool.c)."""
    if not _pool_ok(x, len(ksize)) or min(out) < 1:
        return None
    fn = function("pool", "max_pool2d_f32", [_P, _P, _P, _I, _P, _C])
    if not fn:
        return None
    shape = x.shape[:2] + tuple(out)
    y, ind = np.empty(shape, _F32), np.empty(shape, _I64)
    p = np.array([*x.shape[2:], *out, *ksize, *stride, *pads, *dil], np.int64)
    fn(x.ctypes.data, y.ctypes.data, ind.ctypes.data, x.shape[0] * x.shape[1], p.ctypes.data,
       pool_threads_for(x.size))  # (NOTE [ Kernels on ember's pool ] in common.h)
    return y, ind


def max_pool2d_backward(g, ind, in_shape):
    """g added at the flat per-plane indices `ind` into zeros of `in_shape` (N, C, H, W), outputs in order."""
    if len(in_shape) != 4 or g.ndim != 4 or not g.size or not _ok(g) \
            or type(ind) is not _ND or ind.dtype != _I64 or not ind.flags.c_contiguous or ind.shape != g.shape:
        return None
    fn = function("pool", "max_pool2d_backward_f32", [_P, _P, _P, _I, _I, _I, _C])
    if not fn:
        return None
    gx = np.empty(in_shape, _F32)
    planes = in_shape[0] * in_shape[1]
    fn(g.ctypes.data, ind.ctypes.data, gx.ctypes.data, planes, in_shape[2] * in_shape[3], g.shape[2] * g.shape[3],
       pool_threads_for(gx.size))
    return gx


def avg_pool2d(x, ksize, stride, pads, out, count_include_pad, divisor_override):
    if not _pool_ok(x, len(ksize)) or min(out) < 1:
        return None
    fn = function("pool", "avg_pool2d_f32", [_P, _P, _I, _P, _C, ctypes.c_double, _C])
    if not fn:
        return None
    y = np.empty(x.shape[:2] + tuple(out), _F32)
    p = np.array([*x.shape[2:], *out, *ksize, *stride, *pads, 1, 1], np.int64)
    fn(x.ctypes.data, y.ctypes.data, x.shape[0] * x.shape[1], p.ctypes.data, int(bool(count_include_pad)),
       float(divisor_override or 0), pool_threads_for(x.size))  # (NOTE [ Kernels on ember's pool ] in common.h)
    return y


def avg_pool2d_backward(g, in_shape, ksize, stride, pads, count_include_pad, divisor_override):
    if len(ksize) != 2 or g.ndim != 4 or not g.size or not _ok(g):
        return None
    fn = function("pool", "avg_pool2d_backward_f32", [_P, _P, _I, _P, _C, ctypes.c_double, _C])
    if not fn:
        return None
    gx = np.empty(in_shape, _F32)
    p = np.array([*in_shape[2:], *g.shape[2:], *ksize, *stride, *pads, 1, 1], np.int64)
    fn(g.ctypes.data, gx.ctypes.data, in_shape[0] * in_shape[1], p.ctypes.data, int(bool(count_include_pad)),
       float(divisor_override or 0), pool_threads_for(gx.size))
    return gx


def adaptive_avg_pool2d(x, in_sp, out_sp, backward):
    """Adaptive average pooling of float32 x (*lead, *sp) from `in_sp` to `out_sp` (backward: the adjoint, x
    being the output gradient, answering (*lead, *in_sp)), or None."""
    if len(out_sp) != 2 or not x.size or not _ok(x):
        return None
    if min(out_sp) < 1 or min(in_sp) < 1:
        return None
    name = "adaptive_avg_pool2d_backward_f32" if backward else "adaptive_avg_pool2d_f32"
    fn = function("pool", name, [_P, _P, _I, _I, _I, _I, _I, _C])
    if not fn:
        return None
    lead = x.shape[:-2]
    y = np.empty(lead + tuple(in_sp if backward else out_sp), _F32)
    planes = int(np.prod(lead))
    fn(x.ctypes.data, y.ctypes.data, planes, in_sp[0], in_sp[1], out_sp[0], out_sp[1],
       pool_threads_for(y.size + x.size))
    return y

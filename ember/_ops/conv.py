"""Convolution primitives (1-d, 2-d and 3-d, groups, stride, dilation, asymmetric zero padding).

float32 1-d and 2-d convolutions run the native kernels (ember/_native/conv.c: im2col and sgemm per sample
over OpenMP threads, NOTE [ Convolution threads ]); the NumPy code below is their fallback and runs the
other cases.

NOTE [ Convolution as one GEMM ]
A convolution is a matrix product once the input is unrolled (im2col): a strided view of the padded
input with shape (N, C, *kernel, *out) lays every receptive field out as a column; copied into an
(N, C*K, L) block it meets the weight (O, C*K) in a batched GEMM whose output (N, O, L) is already the
NCHW result (no transpose copy), one BLAS call per sample and group. The three products of a
convolution's autograd are GEMMs of the same operands:

    forward        out   = W @ cols(x)             (O, L) per sample
    input grad     x'    = stride 1: the full correlation of g with the flipped, transposed W (itself a
                           forward convolution); otherwise cols' = W^T @ g folded back (col2im)
    weight grad    dW    = sum_n g_n @ cols(x)_n^T  (O, C*K)

Each is an op here whose derivative is written with the other two, so convolutions differentiate any
number of times. `conv_transpose` is the input-grad op with its own output size, as in torch.

NOTE [ Cache-sized column blocks ]
The column matrix of a large convolution is many times the input (x K); written whole it streams
through memory twice (copy, then GEMM). The batch is therefore processed in blocks of samples whose
columns fit in ~256 KB (or one sample if bigger): each block is unrolled and multiplied while still in
cache (ResNet-sized 3x3 convs: ~1.3x faster than one big GEMM). Blocks of a few MB measured slower than
both small blocks and one whole-batch block (allocator: each such block is a fresh mmap, page-faulted).
The weight gradient recomputes the columns block by block the same way rather than keeping the
forward's (K times the input) alive until backward.

NOTE [ Batch-last columns for short rows ]
Unrolling NCHW copies runs of out_w contiguous elements; when output rows are short (LeNet's second conv:
8 wide) the copy is all loop overhead. With the input transposed batch-last (C, *sp, N) a run is
out_w * N elements, and the columns (C*K, L*N) meet the weight in one GEMM; transposing the (small)
output back costs far less than it saves (LeNet conv2 forward ~2x faster). Used for groups == 1 when the
output rows are short and the whole column matrix is a few MB; the weight gradient does the same.
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._dispatch import COMPLEX, FLOATING, NN, NUMERIC, defop, dispatch, not_implemented
from .._meta import conv_out_size, meta_array
from .._native import conv as _native
from ..autograd.graph import needs_grad
from ._util import c_contiguous

__all__ = []

_BLOCK_BYTES = 256 << 10


def _pad(x, pads):
    if not any(lo or hi for lo, hi in pads):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(pads))


def _window_view(x, ksize, stride, pads, dil):
    """Read-only view (N, C, *kernel, *out) of x (N, C, *sp) zero-padded: every receptive field."""
    xp = _pad(x, pads)
    out = tuple(conv_out_size(s, k, st, p, d) for s, k, st, p, d in zip(x.shape[2:], ksize, stride, pads, dil))
    ssp = xp.strides[2:]
    strides = xp.strides[:2] + tuple(s * d for s, d in zip(ssp, dil)) + tuple(s * st for s, st in zip(ssp, stride))
    return as_strided(xp, xp.shape[:2] + tuple(ksize) + out, strides, writeable=False), out


_SHORT_ROW = 16
_SUM_BLOCK = 128
_BATCH_LAST_BYTES = 8 << 20


def _batch_last(a):
    """a (N, ...) copied to (..., N). A transpose reading rows a multiple of 4 KB apart maps them all to the
    same cache sets (~10x slower: LeNet's conv2 gradient, 4 KB per sample), so such an array is first
    copied into rows padded off that stride."""
    n = a.shape[0]
    m = a.size // n if n else 0
    if not m or not a.flags.c_contiguous or (m * a.itemsize) % 4096:
        return np.ascontiguousarray(np.moveaxis(a, 0, -1))
    buf = np.empty((n, m + 16), a.dtype)
    buf[:, :m] = a.reshape(n, m)
    return np.ascontiguousarray(buf[:, :m].T).reshape(a.shape[1:] + (n,))


def _batch_last_cols(x, ksize, stride, pads, dil, out):
    """Columns (C*K, L*N) of x (N, C, *sp) zero-padded, batch-last (NOTE [ Batch-last columns for short rows ]);
    None where that layout does not pay: short output rows, and columns of a few MB at most."""
    n, c = x.shape[:2]
    k, length = int(np.prod(ksize)), int(np.prod(out))
    if n == 1 or not out or out[-1] >= _SHORT_ROW or c * k * length * n * x.itemsize > _BATCH_LAST_BYTES:
        return None
    xt = _batch_last(x)  # (C, *sp, N)
    if any(lo or hi for lo, hi in pads):
        xt = np.pad(xt, ((0, 0),) + tuple(pads) + ((0, 0),))
    ssp = xt.strides[1:-1]
    strides = (xt.strides[0],) + tuple(s * d for s, d in zip(ssp, dil)) + tuple(s * st for s, st in zip(ssp, stride))
    view = as_strided(xt, (c,) + tuple(ksize) + tuple(out) + (n,), strides + (xt.strides[-1],), writeable=False)
    return view.reshape(c * k, length * n)


def _blocks(n, per_sample_bytes):
    """Sample ranges whose column blocks stay cache-sized (NOTE [ Cache-sized column blocks ])."""
    nb = max(1, min(n, _BLOCK_BYTES // max(per_sample_bytes, 1)))
    return [(i, min(i + nb, n)) for i in range(0, n, nb)]


def _conv_fwd(x, w, b, stride, pads, dil, groups):
    out = tuple(conv_out_size(s, k, st, p, d) for s, k, st, p, d in zip(x.shape[2:], w.shape[2:], stride, pads, dil))
    done = _native.conv_forward(x, w, b, stride, pads, dil, groups, out)  # (NOTE [ Convolution threads ])
    if done is not None:
        return done
    n, o = x.shape[0], w.shape[0]
    ksize = w.shape[2:]
    view, out = _window_view(x, ksize, stride, pads, dil)
    cols = _batch_last_cols(x, ksize, stride, pads, dil, out) if groups == 1 else None
    if cols is not None:
        res = np.matmul(w.reshape(o, -1), cols)  # (O, L*N)
        if b is not None:
            res += b.reshape(o, 1).astype(res.dtype, copy=False)
        return np.ascontiguousarray(np.moveaxis(res.reshape((o,) + out + (n,)), -1, 0))
    ck = view.shape[1] // groups * int(np.prod(ksize))
    length = int(np.prod(out))
    dt = np.result_type(x, w)
    res = np.empty((n, groups, o // groups, length), dt)
    wg = w.reshape(groups, o // groups, ck)
    bias = b.reshape(o, 1).astype(dt, copy=False) if b is not None else None
    for i, j in _blocks(n, ck * groups * length * x.itemsize):
        cols = view[i:j].reshape(j - i, groups, ck, length)
        np.matmul(wg, cols, out=res[i:j])
        if bias is not None:
            blk = res[i:j].reshape(j - i, o, length)
            blk += bias
    return res.reshape((n, o) + out)


def _conv_input_grad(g, w, in_sp, stride, pads, dil, groups):
    """The gradient of conv w.r.t. its input of spatial shape `in_sp` (NOTE [ Convolution as one GEMM ])."""
    done = _native.conv_input_grad(g, w, in_sp, stride, pads, dil, groups)
    if done is not None:
        return done
    ksize = w.shape[2:]
    o, cg = w.shape[:2]
    # correlation padding giving the input length back: lo' = d(k-1) - lo, hi' = in - out + lo
    full = [(d * (k - 1) - lo, s - m + lo) for d, k, (lo, hi), s, m in zip(dil, ksize, pads, in_sp, g.shape[2:])]
    l_in, l_out = int(np.prod(in_sp)), int(np.prod(g.shape[2:]))
    cheap = o * l_in <= 2 * cg * groups * l_out  # the correlation's columns are no bigger than col2im's work
    cheap = cheap and np.result_type(g, w).name not in ("float16", "bfloat16")  # these round as col2im does
    if cheap and all(st == 1 for st in stride) and all(a >= 0 and b >= 0 for a, b in full):
        wt = w.reshape(groups, o // groups, cg, *ksize).swapaxes(1, 2).reshape(groups * cg, o // groups, *ksize)
        wt = wt[(Ellipsis,) + (slice(None, None, -1),) * len(ksize)]
        return _conv_fwd(g, np.ascontiguousarray(wt), None, (1,) * len(ksize), full, dil, groups)
    return _col2im_grad(g, w, in_sp, stride, pads, dil, groups)


def _col2im_grad(g, w, in_sp, stride, pads, dil, groups):
    """W^T @ g, each kernel tap's columns added back at its strided input positions (col2im).

    float16 / bfloat16 as torch's slow transposed convolution: columns from a float32 GEMM rounded once,
    then added tap by tap in the narrow dtype (NOTE [ Reduced-precision convolutions ]).

    Laid out channels-first and batch-last (C, *sp, N) so every tap's add runs over long contiguous rows
    (out_w * N) rather than out_w-long ones; blocked over channels to stay cache-sized."""
    n, o = g.shape[:2]
    out = tuple(g.shape[2:])
    ksize = tuple(w.shape[2:])
    cg = w.shape[1]
    k = int(np.prod(ksize))
    dt = np.result_type(g, w)
    if dt.name in ("float16", "bfloat16"):
        g, w = g.astype(np.float32), w.astype(np.float32)
    gt = _batch_last(g).reshape(groups, o // groups, -1)  # (G, O/G, L*N)
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(in_sp, pads))
    xp = np.zeros((groups * cg,) + padded + (n,), dt)
    per_channel = k * gt.shape[-1] * g.itemsize
    step = cg if groups > 1 else max(1, 4 * _BLOCK_BYTES // max(per_channel, 1))
    for c0 in range(0, groups * cg if groups == 1 else cg, step):
        c1 = min(c0 + step, cg)
        if groups > 1:
            wt = w.reshape(groups, o // groups, cg * k).transpose(0, 2, 1)  # (G, Cg*K, O/G)
            cols = np.matmul(wt, gt).reshape((-1,) + ksize + out + (n,))
            taps, dest = (cols[(slice(None),) + tap] for tap in np.ndindex(*ksize)), slice(None)
        else:  # rows tap-major, (K, c1-c0): each tap's block is contiguous, so its add streams
            wt = w.reshape(o, cg, k)[:, c0:c1].transpose(2, 1, 0).reshape(-1, o)
            taps, dest = np.matmul(wt, gt[0]).reshape((k, c1 - c0) + out + (n,)), slice(c0, c1)
        for tap, col in zip(np.ndindex(*ksize), taps):
            sl = tuple(slice(t * d, t * d + st * (m - 1) + 1, st) for t, d, st, m in zip(tap, dil, stride, out))
            xp[(dest,) + sl] += col.astype(dt, copy=False)
    crop = tuple(slice(lo, lo + s) for s, (lo, hi) in zip(in_sp, pads))
    return np.ascontiguousarray(np.moveaxis(xp[(slice(None),) + crop], -1, 0))


def _conv_weight_grad(x, g, ksize, stride, pads, dil, groups):
    done = _native.conv_weight_grad(x, g, ksize, stride, pads, dil, groups)
    if done is not None:
        return done
    n, o = g.shape[:2]
    out = g.shape[2:]  # a transposed conv's output_padding leaves x longer than g's receptive fields
    cols = _batch_last_cols(x, ksize, stride, pads, dil, out) if groups == 1 else None
    if cols is not None:
        gt = _batch_last(g).reshape(o, -1)  # (O, L*N), the columns' order
        # NOTE [ Weight gradient sums in blocks ]: one product over all N*L positions is one float32 chain of
        # N*L terms per weight; products over blocks of _SUM_BLOCK positions, added in order, keep the error
        # near the C kernels' (conv.c sums a few samples per product) and torch's
        k = gt.shape[1]
        gw = np.matmul(gt[:, :_SUM_BLOCK], cols[:, :_SUM_BLOCK].T)
        for i in range(_SUM_BLOCK, k, _SUM_BLOCK):
            gw += np.matmul(gt[:, i:i + _SUM_BLOCK], cols[:, i:i + _SUM_BLOCK].T)
        return gw.reshape((o, x.shape[1]) + tuple(ksize))
    view, _ = _window_view(x, ksize, stride, pads, dil)
    view = view[(Ellipsis,) + tuple(slice(0, m) for m in out)]
    ck = x.shape[1] // groups * int(np.prod(ksize))
    length = int(np.prod(out))
    g2 = g.reshape(n, groups, o // groups, length)
    gw = np.zeros((groups, o // groups, ck), np.result_type(x, g))
    for i, j in _blocks(n, ck * groups * length * x.itemsize):
        cols = view[i:j].reshape(j - i, groups, ck, length)
        part = np.matmul(g2[i:j], cols.swapaxes(-1, -2))  # (nb, G, O/G, Cg*K)
        gw += part[0] if j - i == 1 else part.sum(0)
    return gw.reshape((o, x.shape[1] // groups) + tuple(ksize))


# ---- the ops ---------------------------------------------------------------------------------------------


# NOTE [ Reduced-precision convolutions ]
# torch's CPU convolutions of float16 / bfloat16 accumulate in float32 and round the result once (NumPy has
# no bfloat16 matmul: it would answer in float32), so `_wide` runs them in float32 and rounds back. Its
# float16 transposed convolutions (slow_conv_transpose) round the GEMM's columns to float16 and add them
# tap by tap in float16 (col2im), and so does `_col2im_grad` for the narrow dtypes; bfloat16 ones go to
# oneDNN, which rounds once.


def _wide(kernel):
    def run(x, w, b, *params):
        low = x.dtype.name in ("float16", "bfloat16")
        if not low:
            return kernel(x, w, b, *params)
        f = np.float32
        out = kernel(x.astype(f), w.astype(f), None if b is None else b.astype(f), *params)
        return out.astype(x.dtype)
    run.__name__ = kernel.__name__
    return run


def _conv_error(d, x, w, b, stride, pads=None, dil=(), *rest):
    if _dilated(dil):
        return not_implemented("slow_conv_dilated<>", d)
    return not_implemented("compute_columns3d" if len(stride) == 3 else "slow_conv2d_cpu", d)


def _dilated(dil):
    return dil.count(1) != len(dil)


# torch runs a dilated convolution with its own kernel (slow_conv_dilated), which takes fewer dtypes than the
# undilated ones (those take every integer type): the op's declared dtypes hold for dilation 1, these beyond
_DILATED = FLOATING | COMPLEX | {"int64"}


def _conv_transpose_error(d, x, w, b, out_sp, *rest):
    return not_implemented(f"slow_conv_transpose{3 if len(out_sp) == 3 else 2}d_out_cpu", d)


@defop("convolution", "ConvolutionBackward0", NN, dtypes=NUMERIC, error=_conv_error)
@_wide
def convolution(x, w, b, stride, pads, dil, groups):
    if x.dtype.kind in "iu" and _dilated(dil) and x.dtype.name not in _DILATED:
        raise _conv_error(x.dtype, x, w, b, stride, pads, dil)
    return _conv_fwd(x, w, b, stride, pads, dil, groups)


@defop("convolution_backward_input", "ConvolutionBackwardBackward0", NN)
def conv_input_grad(g, w, in_sp, stride, pads, dil, groups):
    if g.dtype.name in ("float16", "bfloat16"):
        return _conv_input_grad(g.astype(np.float32), w.astype(np.float32), in_sp, stride, pads, dil,
                                groups).astype(g.dtype)
    return _conv_input_grad(g, w, in_sp, stride, pads, dil, groups)


@defop("convolution_backward_weight", "ConvolutionBackwardBackward0", NN)
def conv_weight_grad(x, g, ksize, stride, pads, dil, groups):
    if x.dtype.name in ("float16", "bfloat16"):
        return _conv_weight_grad(x.astype(np.float32), g.astype(np.float32), ksize, stride, pads, dil,
                                 groups).astype(x.dtype)
    return _conv_weight_grad(x, g, ksize, stride, pads, dil, groups)


# the wrappers (nn.functional.conv*) check channels, dtypes and that the kernel fits, as torch's meta does
convolution.meta_(lambda x, w, b, stride, pads, dil, groups: meta_array(
    (x.shape[0], w.shape[0]) + tuple(conv_out_size(n, k, s, p, d) for n, k, s, p, d in
                                     zip(x.shape[2:], w.shape[2:], stride, pads, dil)), x._data.dtype))
conv_input_grad.meta_(lambda g, w, in_sp, stride, pads, dil, groups: meta_array(
    (g.shape[0], w.shape[1] * groups) + tuple(in_sp), g._data.dtype))
conv_weight_grad.meta_(lambda x, g, ksize, stride, pads, dil, groups: meta_array(
    (g.shape[1], x.shape[1] // groups) + tuple(ksize), x._data.dtype))


@convolution.derivative_
def _(g, x, w, b, stride, pads, dil, groups):
    p = (stride, pads, dil, groups)
    # the first layer's input is data: skipping its gradient saves a whole convolution
    gx = dispatch(conv_input_grad, (g, w), (tuple(x.shape[2:]),) + p) if needs_grad(0) else None
    gw = dispatch(conv_weight_grad, (x, g), (tuple(w.shape[2:]),) + p) if needs_grad(1) else None
    gb = g.sum([0] + list(range(2, g.dim()))) if b is not None and needs_grad(2) else None
    return gx, gw, gb


@convolution.jvp_
def _(inputs, params, out, tangents):
    """Bilinear in (x, w), affine in the bias: conv(tx, w) + conv(x, tw) + tb."""
    (x, w, _), (tx, tw, tb) = inputs, tangents
    res = dispatch(convolution, (tx, w, None), params) if tx is not None else None
    if tw is not None:
        r = dispatch(convolution, (x, tw, None), params)
        res = r if res is None else res + r
    if tb is not None:
        r = tb.reshape((1, -1) + (1,) * (out.dim() - 2))
        res = r.expand(out.shape) if res is None else res + r
    return res


@conv_input_grad.derivative_
def _(gg, g, w, in_sp, stride, pads, dil, groups):
    p = (stride, pads, dil, groups)
    return dispatch(convolution, (gg, w, None), p), dispatch(conv_weight_grad, (gg, g), (tuple(w.shape[2:]),) + p)


def _crop_to(y, like):
    """y cut to like's spatial size: a transposed conv's output_padding rows reach no input."""
    if tuple(y.shape[2:]) == tuple(like.shape[2:]):
        return y
    return y[(Ellipsis,) + tuple(slice(0, n) for n in like.shape[2:])].contiguous()


@conv_weight_grad.derivative_
def _(gg, x, g, ksize, stride, pads, dil, groups):
    p = (stride, pads, dil, groups)
    gx = dispatch(conv_input_grad, (g, gg), (tuple(x.shape[2:]),) + p)
    return gx, _crop_to(dispatch(convolution, (x, gg, None), p), g)


def _conv_transpose(x, w, b, out_sp, stride, pads, dil, groups):
    """Transposed convolution: the input-gradient of a convolution whose weight is `w` (Cin, Cout/G, *k)."""
    if x.dtype.kind == "V":  # torch runs it with oneDNN: float32 accumulation, one rounding
        f = np.float32
        return _conv_transpose(x.astype(f), w.astype(f), None if b is None else b.astype(f), out_sp, stride,
                               pads, dil, groups).astype(x.dtype)
    out = _conv_input_grad(x, w, out_sp, stride, pads, dil, groups)
    if b is not None:
        out += b.reshape((-1,) + (1,) * len(out_sp))
    return c_contiguous(out)  # (a batch of 1 keeps torch's stride for its size-1 dim)


conv_transpose = defop("convolution_transpose", "ConvolutionBackward0", NN,
                       dtypes=FLOATING | COMPLEX | {"int64"}, error=_conv_transpose_error)(_conv_transpose)
conv_transpose.meta_(lambda x, w, b, out_sp, stride, pads, dil, groups: meta_array(
    (x.shape[0], w.shape[1] * groups) + tuple(out_sp), x._data.dtype))


@conv_transpose.derivative_
def _(g, x, w, b, out_sp, stride, pads, dil, groups):
    p = (stride, pads, dil, groups)
    gx = _crop_to(dispatch(convolution, (g, w, None), p), x)
    gw = dispatch(conv_weight_grad, (g, x), (tuple(w.shape[2:]),) + p)
    gb = g.sum([0] + list(range(2, g.dim()))) if b is not None else None
    return gx, gw, gb

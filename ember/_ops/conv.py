"""Convolution primitives (1-d, 2-d and 3-d, groups, stride, dilation, asymmetric zero padding).

NOTE [ Convolution as one GEMM ]
A convolution is a matrix product once the input is unrolled (im2col): a strided view of the padded
input with shape (C, *kernel, N, *out) lays every receptive field out as a column; copied into a
(C*K, N*L) matrix it meets the weight (O, C*K) in ONE BLAS call per group (NumPy's batched matmul over
groups). The three products of a convolution's autograd are three GEMMs of the same operands:

    forward        out   = W @ cols(x)             (O, N*L)
    input grad     cols' = W^T @ g ; col2im        (C*K, N*L) folded back, one strided add per kernel tap
    weight grad    dW    = g @ cols(x)^T            (O, C*K)

Each is an op here whose derivative is written with the other two, so convolutions differentiate any
number of times. `conv_transpose` is the input-grad op with its own output size, as in torch.
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._dispatch import NN, defop, dispatch

__all__ = []


def out_size(size, k, stride, pad, dil):
    """Output length of one spatial dim for padding (lo, hi)."""
    return (size + pad[0] + pad[1] - dil * (k - 1) - 1) // stride + 1


def _pad(x, pads):
    if not any(lo or hi for lo, hi in pads):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(pads))


def _cols(x, ksize, stride, pads, dil):
    """The im2col matrix (C*K, N*L) of x (N, C, *sp), and the output spatial shape."""
    xp = _pad(x, pads)
    n, c = xp.shape[:2]
    out = tuple(out_size(s, k, st, p, d) for s, k, st, p, d in zip(x.shape[2:], ksize, stride, pads, dil))
    sn, sc = xp.strides[:2]
    ssp = xp.strides[2:]
    strides = ((sc,) + tuple(s * d for s, d in zip(ssp, dil)) + (sn,)
               + tuple(s * st for s, st in zip(ssp, stride)))
    view = as_strided(xp, (c,) + tuple(ksize) + (n,) + out, strides, writeable=False)
    k = int(np.prod(ksize))
    return view.reshape(c * k, n * int(np.prod(out))), out


def _conv_fwd(x, w, b, stride, pads, dil, groups):
    n, o = x.shape[0], w.shape[0]
    ksize = w.shape[2:]
    cols, out = _cols(x, ksize, stride, pads, dil)
    wg = w.reshape(groups, o // groups, -1)
    res = np.matmul(wg, cols.reshape(groups, -1, cols.shape[1]))  # (G, O/G, N*L)
    res = res.reshape((o, n) + out)
    if b is not None:
        res += b.reshape((o,) + (1,) * (len(out) + 1))
    return np.ascontiguousarray(np.moveaxis(res, 0, 1))


def _conv_input_grad(g, w, in_sp, stride, pads, dil, groups):
    """The gradient of conv w.r.t. its input of spatial shape `in_sp`: W^T @ g folded back (col2im)."""
    n, o = g.shape[:2]
    out = g.shape[2:]
    ksize = w.shape[2:]
    cg = w.shape[1]
    g2 = np.moveaxis(g, 1, 0).reshape(groups, o // groups, -1)  # (G, O/G, N*L)
    wt = w.reshape(groups, o // groups, -1).transpose(0, 2, 1)  # (G, Cg*K, O/G)
    cols = np.matmul(wt, g2).reshape((groups * cg,) + tuple(ksize) + (n,) + tuple(out))
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(in_sp, pads))
    xp = np.zeros((groups * cg, n) + padded, g.dtype)
    for tap in np.ndindex(*ksize):
        sl = tuple(slice(t * d, t * d + st * (m - 1) + 1, st) for t, d, st, m in zip(tap, dil, stride, out))
        xp[(slice(None), slice(None)) + sl] += cols[(slice(None),) + tap]
    crop = tuple(slice(lo, lo + s) for s, (lo, hi) in zip(in_sp, pads))
    return np.ascontiguousarray(np.moveaxis(xp[(slice(None), slice(None)) + crop], 0, 1))


def _conv_weight_grad(x, g, ksize, stride, pads, dil, groups):
    o = g.shape[1]
    cols, _ = _cols(x, ksize, stride, pads, dil)
    g2 = np.moveaxis(g, 1, 0).reshape(groups, o // groups, -1)
    gw = np.matmul(g2, cols.reshape(groups, -1, cols.shape[1]).transpose(0, 2, 1))  # (G, O/G, Cg*K)
    return gw.reshape((o, x.shape[1] // groups) + tuple(ksize))


# ---- the ops ---------------------------------------------------------------------------------------------


@defop("convolution", "ConvolutionBackward0", NN)
def convolution(x, w, b, stride, pads, dil, groups):
    return _conv_fwd(x, w, b, stride, pads, dil, groups)


@defop("convolution_backward_input", "ConvolutionBackwardBackward0", NN)
def conv_input_grad(g, w, in_sp, stride, pads, dil, groups):
    return _conv_input_grad(g, w, in_sp, stride, pads, dil, groups)


@defop("convolution_backward_weight", "ConvolutionBackwardBackward0", NN)
def conv_weight_grad(x, g, ksize, stride, pads, dil, groups):
    return _conv_weight_grad(x, g, ksize, stride, pads, dil, groups)


@convolution.derivative_
def _(g, x, w, b, stride, pads, dil, groups):
    p = (stride, pads, dil, groups)
    gx = dispatch(conv_input_grad, (g, w), (tuple(x.shape[2:]),) + p)
    gw = dispatch(conv_weight_grad, (x, g), (tuple(w.shape[2:]),) + p)
    gb = g.sum([0] + list(range(2, g.dim()))) if b is not None else None
    return gx, gw, gb


@conv_input_grad.derivative_
def _(gg, g, w, in_sp, stride, pads, dil, groups):
    p = (stride, pads, dil, groups)
    return dispatch(convolution, (gg, w, None), p), dispatch(conv_weight_grad, (gg, g), (tuple(w.shape[2:]),) + p)


@conv_weight_grad.derivative_
def _(gg, x, g, ksize, stride, pads, dil, groups):
    p = (stride, pads, dil, groups)
    return dispatch(conv_input_grad, (g, gg), (tuple(x.shape[2:]),) + p), dispatch(convolution, (x, gg, None), p)


@defop("convolution_transpose", "ConvolutionBackward0", NN)
def conv_transpose(x, w, b, out_sp, stride, pads, dil, groups):
    """Transposed convolution: the input-gradient of a convolution whose weight is `w` (Cin, Cout/G, *k)."""
    out = _conv_input_grad(x, w, out_sp, stride, pads, dil, groups)
    if b is not None:
        out += b.reshape((-1,) + (1,) * len(out_sp))
    return out


@conv_transpose.derivative_
def _(g, x, w, b, out_sp, stride, pads, dil, groups):
    p = (stride, pads, dil, groups)
    gx = dispatch(convolution, (g, w, None), p)
    gw = dispatch(conv_weight_grad, (g, x), (tuple(w.shape[2:]),) + p)
    gb = g.sum([0] + list(range(2, g.dim()))) if b is not None else None
    return gx, gw, gb

"""Max unpooling and fractional max pooling: torch's `max_unpool2d`/`max_unpool3d` and
`fractional_max_pool2d`/`fractional_max_pool3d` ops (1-d unpooling is the 2-d op on an unsqueezed input, as
in torch's nn.functional; NOTE [ Pooling ops per dimension ] in pooling.py).

Unpooling writes each input value at its flat spatial index into zeros (the inverse of max pooling's
indices); its derivative is a gather at the same indices (torch's `max_pool_double_backward`). Fractional
max pooling picks its window starts from one uniform sample per (batch, channel, dim) with torch's
`generate_intervals`, computed in the input's dtype as torch's kernel does, so the same samples give the
same windows; its backward scatters as max pooling's does.
"""

import numpy as np

from .._dispatch import ARGUMENT, NN, defop, dispatch
from .._meta import NoData, meta_array
from .pooling import _max_backward_derivative, _max_pool_backward_kernel, _running_max, _unbatched

__all__ = ["max_unpool", "fractional_max_pool", "fractional_max_pool_backward"]


# ---- max unpooling ------------------------------------------------------------------------------------------


def _sizes_word(sizes):
    return "x".join(str(s) for s in sizes)


def _max_unpool_kernel(x, idx, out_size):
    nd = len(out_size)
    lead = x.shape[:2]
    sp = int(np.prod(out_size))
    flat = idx.reshape(lead[0] * lead[1], -1)
    bad = (flat < 0) | (flat >= sp)
    if bad.any():  # torch checks each index as it writes it and reports the last bad one in memory order
        last = flat[bad][-1]
        raise RuntimeError(f"Found an invalid max index: {int(last)} (output volumes are of size "
                           f"{_sizes_word(out_size)})")
    out = np.zeros((lead[0] * lead[1], sp), x.dtype)
    rows = np.arange(flat.shape[0])[:, None]
    out[rows, flat] = x.reshape(flat.shape)  # (a repeated index keeps its last value, as torch's loop does)
    return out.reshape(lead + tuple(out_size)) if nd else out


def _max_unpool_derivative(nd):
    def derivative(g, x, idx, out_size, *rest):
        lead = tuple(idx.shape[:len(idx.shape) - nd]) + (-1,)
        return g.contiguous().view(lead).gather(-1, idx.reshape(lead)).view(tuple(idx.shape)), None
    return derivative


def _max_unpool3d_kernel(x, idx, out_size, stride, padding):
    return _max_unpool_kernel(x, idx, out_size)


max_unpool = {
    2: defop("max_unpool2d", "MaxUnpool2DBackward0", NN, tags=("index",))(_unbatched(_max_unpool_kernel, 2)),
    3: defop("max_unpool3d", "MaxUnpool3DBackward0", NN, tags=("index",))(_unbatched(_max_unpool3d_kernel, 3)),
}
for _n in (2, 3):
    max_unpool[_n].derivative_(_max_unpool_derivative(_n))
    max_unpool[_n].meta_(lambda x, idx, out_size, *_: meta_array(
        tuple(x.shape[:len(x.shape) - len(out_size)]) + tuple(out_size), x._data.dtype))


# ---- fractional max pooling ---------------------------------------------------------------------------------


def intervals(sample, size, out, k, dtype):
    """torch's `generate_intervals`: the window starts of `out` windows of `k` over `size` for one sample,
    in the input's dtype. `sample` is an array (one per (batch, channel)); the result adds an axis of `out`."""
    seq = np.zeros(sample.shape + (out,), np.int64)
    if out > 1:
        one = np.dtype(dtype).type
        alpha = one(size - k) / one(out - 1)
        i = np.arange(out - 1).astype(dtype)
        s = sample.astype(dtype)[..., None]
        with np.errstate(invalid="ignore", over="ignore"):
            seq[..., :-1] = ((i + s) * alpha).astype(np.int64) - (s * alpha).astype(np.int64)
    if out > 0:
        seq[..., -1] = size - k
    return seq


def _fractional_kernel(x, samples, ksize, out_size):
    """(values, flat indices) of fractional max pooling (N, C, *spatial) -> (N, C, *out_size); an unbatched
    (C, *spatial) input takes samples of batch 1."""
    nd = len(ksize)
    if type(x) is not np.ndarray:  # a meta payload: the meta rule answers
        raise NoData()
    if x.ndim == nd + 1:
        vals, flat = _fractional_kernel(x[None], samples, ksize, out_size)
        return vals[0], flat[0]
    n, c = x.shape[:2]
    sp = x.shape[2:]
    # per dim: the window positions (N, C, out, k) along that dim
    pos = []
    for d in range(nd):
        # 2-d: sample 0 is the width's, 1 the height's; 3-d: samples in (T, H, W) order (torch's kernels)
        si = (nd - 1 - d) if nd == 2 else d
        starts = intervals(samples[:, :, si], sp[d], out_size[d], ksize[d], x.dtype)
        pos.append(starts[..., None] + np.arange(ksize[d]))
    # the windows (N, C, *out, *k), gathered with broadcast index arrays
    idx = [np.arange(n).reshape((n,) + (1,) * (1 + 2 * nd)), np.arange(c).reshape((1, c) + (1,) * (2 * nd))]
    for d in range(nd):
        idx.append(pos[d].reshape([n, c] + [out_size[d] if j == d else 1 for j in range(nd)]
                                  + [ksize[d] if j == d else 1 for j in range(nd)]))
    win = x[tuple(idx)]
    vals, arg = _running_max(win, nd)
    taps = np.unravel_index(arg, tuple(ksize))
    flat = np.zeros(arg.shape, np.int64)
    for d in range(nd):
        start = pos[d][..., 0].reshape([n, c] + [out_size[d] if j == d else 1 for j in range(nd)])
        flat = flat * sp[d] + start + taps[d]
    return vals, flat


fractional_max_pool = {
    n: defop(f"fractional_max_pool{n}d", f"FractionalMaxPool{n}DBackward0", NN, save_output=True)(
        _fractional_kernel) for n in (2, 3)}
fractional_max_pool_backward = {
    n: defop(f"fractional_max_pool{n}d_backward", f"FractionalMaxPool{n}DBackwardBackward0", NN, saves="meta",
             tags=("index",))(_unbatched(_max_pool_backward_kernel, n)) for n in (2, 3)}


def _fractional_derivative(g, x, samples, ksize, out_size, *, out):
    op = fractional_max_pool_backward[len(ksize)]
    return dispatch(op, (g[0] if type(g) is tuple else g, x, out[1])), None


for _n in (2, 3):
    fractional_max_pool[_n].edges = 1  # (the random samples take no edge, as in torch)
    fractional_max_pool[_n].derivative_(_fractional_derivative)
    fractional_max_pool[_n].refuses_(ARGUMENT, f"fractional_max_pool{_n}d", inputs={1: "random_samples"})
    fractional_max_pool_backward[_n].derivative_(_max_backward_derivative(_n))
    fractional_max_pool[_n].meta_(lambda x, samples, ksize, out_size: (
        meta_array(tuple(x.shape[:len(x.shape) - len(ksize)]) + tuple(out_size), x._data.dtype),
        meta_array(tuple(x.shape[:len(x.shape) - len(ksize)]) + tuple(out_size), np.dtype(np.int64))))
    fractional_max_pool_backward[_n].meta_(lambda g, x, *_: meta_array(tuple(x.shape), g._data.dtype))

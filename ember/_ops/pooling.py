"""Pooling primitives: max pooling with indices, average pooling, adaptive max and average pooling, as
torch's 2-d and 3-d ops (NOTE [ Pooling ops per dimension ]; 1-d pools are the 2-d ops on an unsqueezed input).

Windows are strided views of the padded input (no copy until the reduction); max pooling records the
flat spatial index of each maximum as torch does; its backward scatters with one fancy-index assignment when
windows are disjoint (kernel <= stride) and with one `np.bincount` (which sums collisions) otherwise.
Each backward is an op whose derivative is the forward pooling again (a gather for max pooling), so pooling
differentiates twice and more.

float32 2-d max pooling (forward and backward), average and adaptive average pooling (and 1-d, through the
2-d ops) run the native kernels
(ember/_native/pool.c, torch's loops, results equal to torch's bits); the NumPy code is their fallback.
"""


import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._argparse import call_error
from .._dispatch import FLOATING, NN, defop, dispatch
from .._meta import NoData, meta_array, pool_out_size
from .._native import conv as _native

__all__ = ["pool_out_size"]


def _windows(x, ksize, stride, pads, dil, out, fill):
    """View (N, C, *out, *k) of x padded by `pads` low and as needed high, filled with `fill`."""
    nd = len(ksize)
    hi = [max(0, (o - 1) * s + d * (k - 1) + 1 - n - p) for o, s, d, k, n, p in
          zip(out, stride, dil, ksize, x.shape[2:], pads)]
    if any(pads) or any(hi):
        x = np.pad(x, ((0, 0), (0, 0)) + tuple(zip(pads, hi)), constant_values=fill)
    st = x.strides
    shape = x.shape[:2] + tuple(out) + tuple(ksize)
    try:
        strides = (st[:2] + tuple(st[2 + i] * stride[i] for i in range(nd))
                   + tuple(st[2 + i] * dil[i] for i in range(nd)))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return as_strided(x, shape, strides, writeable=False)


# ---- max pooling ---------------------------------------------------------------------------------------


def _running_max(win, nd):
    """Max and argmax (tap number) over the trailing `nd` tap axes of a window view, one tap at a time on
    strided slices, so the (out x K) window matrix is never copied out: torch's forward scan
    `if (val > max || isnan(val)) max = val, idx = tap` (first maximum; for a NaN window the last NaN).

    NOTE [ Branch-free argmax ]
    The max is a running np.maximum (NaN propagates). The argmax is kept branch-free: taps are scanned in
    increasing order, so where a tap beats the running max its number is larger than any recorded one and
    `arg = max(arg, (val > max) * tap)` records it; np.copyto(where=) / np.where on such a random mask
    mispredict a branch per element (~4x slower). Tap numbers are bytes while they fit (less to move).
    Once a window's max is NaN no comparison is true, so NaN windows get a second, rare pass."""
    taps = list(np.ndindex(*win.shape[-nd:]))
    lead = (Ellipsis,)
    vals = win[lead + taps[0]].copy()
    small = len(taps) <= 256
    arg = np.zeros(vals.shape, np.uint8 if small else np.intp)
    hit = np.empty(vals.shape, np.bool_)
    step = np.empty(vals.shape, arg.dtype)
    for i, tap in enumerate(taps[1:], 1):
        w = win[lead + tap]
        np.greater(w, vals, out=hit)
        np.multiply(hit.view(np.uint8) if small else hit, i, out=step, dtype=arg.dtype, casting="unsafe")
        np.maximum(arg, step, out=arg)
        np.maximum(w, vals, out=vals)  # (on a tie the second: the earlier tap, so -0.0 vs 0.0 is torch's)
    if vals.dtype.kind == "f":
        nan = np.isnan(vals)
        if nan.any():
            for i, tap in enumerate(taps):
                np.copyto(arg, i, where=nan & np.isnan(win[lead + tap]), casting="unsafe")
    return vals, arg


def _unbatched(kernel, nd):
    """`kernel` of (N, C, *spatial) arrays also taking unbatched (C, *spatial) ones, as torch's 2-d and 3-d
    pooling kernels do (the batch dim is added to every array argument and taken off every result)."""
    def run(*args):
        if args[0].ndim != nd + 1:
            return kernel(*args)
        if type(args[0]) is not np.ndarray:  # a meta payload: its op's meta rule answers
            raise NoData()
        res = kernel(*[a[None] if isinstance(a, np.ndarray) else a for a in args])
        return tuple(r[0] for r in res) if type(res) is tuple else res[0]
    run.__wrapped__ = kernel
    return run


# NOTE [ Pooling ops per dimension ]
# torch has one op per pooling kind and dimension (max_pool2d_with_indices, avg_pool3d, ...), whose nodes
# are named for it (MaxPool2DWithIndicesBackward0, AvgPool3DBackward0); a 1-d pool is the 2-d op between
# unsqueeze(-2) and squeeze(-2) (so its graph ends in SqueezeBackward1), and an unbatched input goes to
# the op as it is. ember declares the 2-d and 3-d ops from one kernel each (`_per_dim`). Each backward op
# takes the pooled input as an input, as torch's (`max_pool2d_with_indices_backward(grad, self, ...,
# indices)`), so its derivative, the double backward, gives that input torch's zeros; its gradient w.r.t.
# the incoming gradient is the forward pooling again (a gather at the indices for max pooling).


def _per_dim(name, node, kernel, **kw):
    """The 2-d and 3-d ops `name % n` (node `node % n`) of one kernel, as a dict {2: op2d, 3: op3d}."""
    return {n: defop(name % n, node % n, NN, **kw)(_unbatched(kernel, n)) for n in (2, 3)}


def _lead(x, nd):
    """The batch (and channel) dims of a pooled input."""
    return tuple(x.shape[:len(x.shape) - nd])


def _max_pool_kernel(x, ksize, stride, pads, dil, ceil_mode):
    nd = len(ksize)
    out = tuple(pool_out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
                zip(x.shape[2:], ksize, stride, pads, dil))
    # NOTE [ Max pooling forward stays in NumPy ]
    # The running max over strided window views below is branch-free and gives torch's values and indices
    # (the first of equal maxima, NaN taken) bit for bit; a scalar scan as torch writes it (a branch per tap
    # that random data mispredicts half the time) measured 3x slower (0.9 vs 0.28 ms for LeNet's first pool).
    # float32 2-d pooling now runs a C scan that selects instead of branching (NOTE [ Max pooling forward in
    # C ] in ember/_native/pool.c; the MNIST example's first pool: 0.2 vs 1.06 ms); other dtypes and 3-d
    # pooling keep this NumPy code, which is also the fallback without a compiler.
    if nd == 2:
        done = _native.max_pool2d(x, ksize, stride, pads, dil, out)
        if done is not None:
            return done
    fill = -np.inf if x.dtype.kind == "f" or x.dtype.kind == "V" else np.iinfo(x.dtype).min
    vals, arg = _running_max(_windows(x, ksize, stride, pads, dil, out, fill), nd)
    # flat input index = (index of the window's corner) + (offset of the tap inside the input)
    sp = x.shape[2:]
    corner = np.zeros((1,) * nd, np.int64)
    tap_off = np.zeros((1,) * nd, np.int64)
    for i in range(nd):
        shape = [1] * nd
        shape[i] = -1
        corner = corner * sp[i] + (np.arange(out[i]) * stride[i] - pads[i]).reshape(shape)
        tap_off = tap_off * sp[i] + (np.arange(ksize[i]) * dil[i]).reshape(shape)
    return vals, corner + tap_off.reshape(-1)[arg]


def _with_indices(x, shape):
    """The values and int64 indices a max pooling of `x` to `shape` returns."""
    return meta_array(shape, x._data.dtype), meta_array(shape, np.dtype(np.int64))


def _disjoint(ksize, stride, dil):
    """No input position lies in two pooling windows (so the backward scatter has no collisions)."""
    return all(s >= d * (k - 1) + 1 for k, s, d in zip(ksize, stride, dil))


def _scatter_kernel(g, idx, in_shape, nd, disjoint=False):
    """g scattered (summed) at the flat spatial indices idx into zeros of `in_shape` (*lead, *spatial),
    `nd` spatial dims."""
    lead = g.shape[:g.ndim - nd]
    nc = int(np.prod(lead))
    sp = int(np.prod(in_shape[len(lead):]))
    offs = (np.arange(nc) * sp).reshape(lead + (1,) * nd)
    if disjoint:  # every index at most once: a plain scatter at flat indices, in g's dtype (~4x faster
        out = np.zeros(nc * sp, g.dtype)  # than np.put_along_axis, which builds an index grid)
        out[(idx + offs).ravel()] = g.ravel()
        if out.dtype.kind in "fcV":
            out += out.dtype.type(0)  # torch adds g into zeros: a -0.0 gradient lands as +0.0
        return out.reshape(in_shape)
    out = np.bincount((idx + offs).ravel(), weights=g.ravel(), minlength=nc * sp)
    return out.astype(g.dtype, copy=False).reshape(in_shape)


def _max_pool_backward_kernel(g, x, idx, disjoint=False):
    done = _native.max_pool2d_backward(g, idx, x.shape)
    if done is not None:
        return done
    return _scatter_kernel(g, idx, x.shape, g.ndim - 2, disjoint)


max_pool = _per_dim("max_pool%dd_with_indices", "MaxPool%dDWithIndicesBackward0", _max_pool_kernel, save_output=True)
max_pool_backward = _per_dim("max_pool%dd_with_indices_backward", "MaxPool%dDWithIndicesBackwardBackward0",
                             _max_pool_backward_kernel, saves="meta", tags=("index",))
adaptive_max_pool_backward = _per_dim("adaptive_max_pool%dd_backward", "AdaptiveMaxPool%dDBackwardBackward0",
                                      _max_pool_backward_kernel, saves="meta", tags=("index",))


def _max_meta(x, ksize, stride, pads, dil, ceil_mode):
    return _with_indices(x, _lead(x, len(ksize)) + tuple(pool_out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d
                                                         in zip(x.shape[-len(ksize):], ksize, stride, pads, dil)))


for _n in (2, 3):
    max_pool[_n].meta_(_max_meta)
    max_pool_backward[_n].meta_(lambda g, x, *_: meta_array(tuple(x.shape), g._data.dtype))
    adaptive_max_pool_backward[_n].meta_(lambda g, x, *_: meta_array(tuple(x.shape), g._data.dtype))


def _max_pool_derivative(g, x, ksize, stride, pads, dil, ceil_mode, *, out):
    op = max_pool_backward[len(ksize)]
    return dispatch(op, (g[0] if type(g) is tuple else g, x, out[1]), (_disjoint(ksize, stride, dil),))


def _max_backward_derivative(nd):
    def derivative(gg, g, x, idx, disjoint=False):
        # torch's max_pool_double_backward: gg at the indices, a gather over the flattened spatial dims
        lead = tuple(idx.shape[:len(idx.shape) - nd]) + (-1,)
        gathered = gg.contiguous().view(lead).gather(-1, idx.view(lead)).view(tuple(idx.shape))
        return gathered, gg.new_zeros(tuple(x.shape)), None
    return derivative


for _n in (2, 3):
    max_pool[_n].derivative_(_max_pool_derivative)
    max_pool_backward[_n].derivative_(_max_backward_derivative(_n))
    adaptive_max_pool_backward[_n].derivative_(_max_backward_derivative(_n))


# ---- adaptive max pooling --------------------------------------------------------------------------------


def adaptive_windows(size, out):
    """Start and end of each of `out` adaptive windows over `size` (torch's floor/ceil rule)."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _adaptive_max_kernel(x, out):
    nd = len(out)
    fill = -np.inf if x.dtype.kind == "f" or x.dtype.kind == "V" else np.iinfo(x.dtype).min
    index, valid = [], []
    for i, (n, o) in enumerate(zip(x.shape[2:], out)):
        start, end = adaptive_windows(n, o)
        kmax = int((end - start).max())
        pos = start[:, None] + np.arange(kmax)[None, :]
        shape = [1] * (2 * nd)
        shape[2 * i], shape[2 * i + 1] = o, kmax
        index.append(np.minimum(pos, n - 1).reshape(shape))
        valid.append((pos < end[:, None]).reshape(shape))
    win = x[(Ellipsis,) + tuple(index)]  # (N, C, o0, k0, o1, k1, ...)
    mask = np.logical_and.reduce(np.broadcast_arrays(*valid)) if nd > 1 else valid[0]
    win = np.where(mask, win, np.asarray(fill, x.dtype))  # (a bare -inf would make bfloat16 float64)
    perm = tuple(range(2)) + tuple(2 + 2 * i for i in range(nd)) + tuple(3 + 2 * i for i in range(nd))
    ks = tuple(ix.shape[2 * i + 1] for i, ix in enumerate(index))
    try:
        win = win.transpose(perm).reshape(x.shape[:2] + tuple(out) + (int(np.prod(ks)),))  # (no -1: N may be 0)
        arg = np.argmax(win, axis=-1)
        vals = np.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
        taps = np.unravel_index(arg, ks)
        flat = np.zeros(arg.shape, np.int64)
        for i in range(nd):
            start = adaptive_windows(x.shape[2 + i], out[i])[0].reshape((-1,) + (1,) * (nd - 1 - i))
            flat = flat * x.shape[2 + i] + start + taps[i]
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return vals, flat


adaptive_max_pool = _per_dim("adaptive_max_pool%dd", "AdaptiveMaxPool%dDBackward0", _adaptive_max_kernel,
                             save_output=True)


def _adaptive_max_derivative(g, x, out_size, *, out):
    op = adaptive_max_pool_backward[len(out_size)]
    return dispatch(op, (g[0] if type(g) is tuple else g, x, out[1]))


for _n in (2, 3):
    adaptive_max_pool[_n].meta_(lambda x, out: _with_indices(x, _lead(x, len(out)) + tuple(out)))
    adaptive_max_pool[_n].derivative_(_adaptive_max_derivative)


# ---- average pooling ---------------------------------------------------------------------------------------


def _divisor(in_sp, out, ksize, stride, pads, count_include_pad, divisor_override):
    if divisor_override:
        return float(divisor_override)
    div = np.ones((), np.float64)
    for n, o, k, s, p in zip(in_sp, out, ksize, stride, pads):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if count_include_pad:
            cnt = end - start
        else:
            cnt = np.minimum(end, n) - np.maximum(start, 0)
        div = np.multiply.outer(div, cnt)
    return div


def _avg_params(in_sp, ksize, stride, pads, ceil_mode):
    return tuple(pool_out_size(n, k, s, p, 1, ceil_mode) for n, k, s, p in zip(in_sp, ksize, stride, pads))


@np.errstate(over="ignore", invalid="ignore")  # (sums of extreme values overflow to inf, as torch's)
def _avg_pool_kernel(x, ksize, stride, pads, ceil_mode, count_include_pad, divisor_override):
    nd = len(ksize)
    out = _avg_params(x.shape[2:], ksize, stride, pads, ceil_mode)
    done = _native.avg_pool2d(x, ksize, stride, pads, out, count_include_pad, divisor_override)
    if done is not None:
        return done
    win = _windows(x, ksize, stride, pads, (1,) * nd, out, 0)
    acc = np.float32 if x.dtype.itemsize < 4 else x.dtype
    s = win.sum(axis=tuple(range(2 + nd, 2 + 2 * nd)), dtype=acc)
    return (s / _divisor(x.shape[2:], out, ksize, stride, pads, count_include_pad, divisor_override)).astype(x.dtype)


@np.errstate(over="ignore", invalid="ignore")  # (sums of extreme values overflow to inf, as torch's)
def _avg_pool_backward_kernel(g, x, ksize, stride, pads, ceil_mode, count_include_pad, divisor_override):
    done = _native.avg_pool2d_backward(g, x.shape, ksize, stride, pads, count_include_pad, divisor_override)
    if done is not None:
        return done
    in_sp = x.shape[2:]
    out = g.shape[2:]
    div = _divisor(in_sp, out, ksize, stride, pads, count_include_pad, divisor_override)
    if g.dtype.kind in "iu":  # (torch's int64 kernel divides in integers, truncating)
        gd = (np.sign(g) * (np.abs(g) // np.asarray(div, np.int64))).astype(g.dtype)
    else:
        gd = g / div
    padded = tuple(max(n + 2 * p, (o - 1) * s + k) for n, p, o, s, k in zip(in_sp, pads, out, stride, ksize))
    xp = np.zeros(g.shape[:2] + padded, g.dtype)
    for tap in np.ndindex(*ksize):
        sl = tuple(slice(t, t + s * (o - 1) + 1, s) for t, s, o in zip(tap, stride, out))
        xp[(Ellipsis,) + sl] += gd
    crop = tuple(slice(p, p + n) for p, n in zip(pads, in_sp))
    return np.ascontiguousarray(xp[(Ellipsis,) + crop])


avg_pool = _per_dim("avg_pool%dd", "AvgPool%dDBackward0", _avg_pool_kernel)
avg_pool_backward = {  # (the dtypes torch's two backward kernels take)
    n: defop(f"avg_pool{n}d_backward", f"AvgPool{n}DBackwardBackward0", NN, saves="meta", dtypes=dt, error=err)(
        _unbatched(_avg_pool_backward_kernel, n))
    for n, dt, err in ((2, FLOATING | {"int64"}, "avg_pool2d_backward"),
                       (3, frozenset({"float32", "float64", "int64"}), "avg_pool3d_backward_out_frame"))}


def _avg_derivative(g, x, *params):
    return dispatch(avg_pool_backward[len(params[0])], (g, x), params)


def _avg_backward_derivative(gg, g, x, *params):
    return dispatch(avg_pool[len(params[0])], (gg,), params), gg.new_zeros(tuple(x.shape))


for _n in (2, 3):
    avg_pool[_n].meta_(lambda x, ksize, stride, pads, ceil_mode, *_: meta_array(
        _lead(x, len(ksize)) + _avg_params(tuple(x.shape[-len(ksize):]), ksize, stride, pads, ceil_mode),
        x._data.dtype))
    avg_pool_backward[_n].meta_(lambda g, x, *_: meta_array(tuple(x.shape), g._data.dtype))
    avg_pool[_n].derivative_(_avg_derivative)
    avg_pool_backward[_n].derivative_(_avg_backward_derivative)


# ---- adaptive average pooling ------------------------------------------------------------------------------


@defop("_resample_uint8", None, NN)
def resample_uint8(a, steps):
    """uint8 image resizing in fixed point (NOTE [ uint8 resampling ] in nn/functional/sampling.py): per
    `(dim, weights, p)` of `steps`, in order, out = clamp((2**(p-1) + x @ weights.T) >> p, 0, 255) along dim,
    rounded to uint8 before the next dim. The integer weights come from the shapes alone."""
    for dim, w, p in steps:
        acc = np.moveaxis(a, dim, -1).astype(np.int64) @ w.T + (1 << p >> 1)
        a = np.moveaxis(np.clip(acc >> p, 0, 255).astype(np.uint8), -1, dim)
    return np.ascontiguousarray(a)


@resample_uint8.meta_
def _(a, steps):
    shape = list(a.shape)
    for dim, w, _ in steps:
        shape[dim] = w.shape[0]
    return meta_array(tuple(shape), a._data.dtype)


def adaptive_matrix(size, out, dtype):
    """(out, size) averaging matrix of adaptive average pooling along one dim."""
    start, end = adaptive_windows(size, out)
    pos = np.arange(size)
    m = (pos[None, :] >= start[:, None]) & (pos[None, :] < end[:, None])
    return (m / (end - start)[:, None]).astype(dtype)




def _adaptive_avg(x, sizes, backward):
    """x averaged over adaptive windows along its trailing dims (one small matmul per dim: NOTE [ Adaptive
    average pooling ]); `backward`: the adjoint, spreading each window's value back over it."""
    nd = len(sizes)
    in_sp, out_sp = (tuple(sizes), x.shape[-nd:]) if backward else (x.shape[-nd:], tuple(sizes))
    done = _native.adaptive_avg_pool2d(x, in_sp, out_sp, backward)  # torch's window sums in C
    if done is not None:
        return done
    w, dt = (x.astype(np.float32), x.dtype) if x.dtype.itemsize < 4 else (x, x.dtype)
    try:
        for i, size in enumerate(sizes):
            dim = w.ndim - nd + i
            n, o = (size, w.shape[dim]) if backward else (w.shape[dim], size)
            m = adaptive_matrix(n, o, w.dtype)
            w = np.moveaxis(np.matmul(np.moveaxis(w, dim, -1), m if backward else m.T), -1, dim)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return np.ascontiguousarray(w.astype(dt, copy=False))


# NOTE [ Adaptive average pooling ]
# Adaptive windows along one dim are an (out, in) averaging matrix, so the pooling is one small matmul per
# pooled dim and its backward the transposed matmuls: BLAS speed, no loop over windows. The ops are torch's
# _adaptive_avg_pool2d/3d (nodes AdaptiveAvgPool2DBackward0, ...); an output of size 1 everywhere is a mean,
# as in torch (nn.functional takes that path).


adaptive_avg_pool = _per_dim("_adaptive_avg_pool%dd", "AdaptiveAvgPool%dDBackward0",
                             lambda x, out: _adaptive_avg(x, out, False))
adaptive_avg_pool_backward = _per_dim("_adaptive_avg_pool%dd_backward", "AdaptiveAvgPool%dDBackwardBackward0",
                                      lambda g, x: _adaptive_avg(g, x.shape[-(g.ndim - 2):], True), saves="meta")


def _adaptive_avg_derivative(g, x, out):
    return dispatch(adaptive_avg_pool_backward[len(out)], (g, x))


def _adaptive_avg_backward_derivative(nd):
    def derivative(gg, g, x):
        return dispatch(adaptive_avg_pool[nd], (gg,), (tuple(g.shape[-nd:]),)), gg.new_zeros(tuple(x.shape))
    return derivative


for _n in (2, 3):
    adaptive_avg_pool[_n].meta_(lambda x, out: meta_array(_lead(x, len(out)) + tuple(out), x._data.dtype))
    adaptive_avg_pool_backward[_n].meta_(lambda g, x: meta_array(tuple(x.shape), g._data.dtype))
    adaptive_avg_pool[_n].derivative_(_adaptive_avg_derivative)
    adaptive_avg_pool_backward[_n].derivative_(_adaptive_avg_backward_derivative(_n))

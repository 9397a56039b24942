"""Selecting and scattering: gather, scatter (+ add / reduce), index_add / index_copy / index_fill,
masked_select / masked_scatter, take, take_along_dim, nonzero, argwhere.

NOTE [ Index keys ]
A `dim`-wise index tensor addresses input[i_0, ..., index[i], ..., i_n] for every position i of the
index; `_key` builds that NumPy advanced-indexing key once (open grids over the index's own shape), so
scatters are `out[key] = src` or `np.<ufunc>.at(out, key, src)` with no Python loop over elements.
"""

import numpy as np

from .._dispatch import ALL_DTYPES, BOOL, COMPLEX, INDEXING, defop, dispatch, dispatch_inplace
from .._tensor import Tensor, _wrap
from ._util import finish_out, method, wrap_dim
from .pointwise import where


def _key(idx, dim):
    grids = np.indices(idx.shape, sparse=True)
    return tuple(idx if d == dim else grids[d] for d in range(idx.ndim))


def _src_part(src, idx):
    """The leading block of `src` matching the index's shape (torch lets src be larger)."""
    if np.ndim(src) == 0:
        return src
    return src[tuple(slice(0, s) for s in idx.shape)]


def _check_index(name, input, dim, index, src=None):
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        kinds = "int64" if name == "gather" else "int32/int64"
        raise RuntimeError(f"{'scatter' if name == 'scatter_add' else name}(): Expected dtype {kinds} for index")
    n, k = input._data.ndim, index._data.ndim
    if n and k and n != k:
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           + ("input tensor" if name == "gather" else "self tensor"))
    d = wrap_dim(dim, n)
    idx = index._data
    size = input._data.shape[d] if n else 1
    if idx.size and (idx.min() < -size or idx.max() >= size):
        bad = idx[(idx < -size) | (idx >= size)][0]
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    for i in range(min(n, k)):
        if i != d and idx.shape[i] > input._data.shape[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(idx.shape)} to be "
                               f"smaller than self {list(input._data.shape)} apart from dimension {d}")
    return d, np.where(idx < 0, idx + size, idx)


@method()
def gather(input, dim, index, *, sparse_grad=False, out=None):
    from .indexing import _gather

    d, idx = _check_index("gather", input, dim, index)
    if input._data.ndim == 0:
        return finish_out(input.reshape(1).gather(0, index.reshape(1) if index._data.ndim == 0 else index)
                          .reshape(index.shape), out)
    return finish_out(dispatch(_gather, (input,), (d, idx)), out)


# ---- scatter ----------------------------------------------------------------------------------------------


@defop("scatter", "ScatterBackward0", INDEXING, saves="meta")
def _scatter(a, src, dim, idx, reduce):
    out = a.copy()  # torch's scatters return contiguous results
    if reduce is None:
        out[_key(idx, dim)] = _src_part(src, idx)
    else:
        (np.add if reduce == "add" else np.multiply).at(out, _key(idx, dim), _src_part(src, idx))
    return out


@_scatter.derivative_
def _(g, a, src, dim, idx, reduce):
    i = _wrap(idx)
    return g.scatter(dim, i, 0.0), _embed_block(g.gather(dim, i), src.shape)


@defop("embed_block", "ConstantPadNdBackward0", INDEXING, saves="meta")
def _pad_kernel(g, shape):
    z = np.zeros(shape, g.dtype)
    z[tuple(slice(0, s) for s in g.shape)] = g
    return z


@_pad_kernel.derivative_
def _(gg, g, shape):
    return gg[tuple(slice(0, s) for s in g.shape)]


def _pad(g, shape):
    return dispatch(_pad_kernel, (g,), (shape,))


def _embed_block(g, shape):
    """`g` as the leading block of zeros of `shape` (a src larger than its index gets zero gradient
    outside the block the index addresses)."""
    if tuple(g.shape) == tuple(shape):
        return g
    return _pad(g, tuple(shape))


_scatter_v = defop("scatter", "ScatterBackward1", INDEXING, saves="none")(
    lambda a, v, dim, idx, reduce: _scatter.kernel(a, v, dim, idx, reduce))
_scatter_v.derivative_(lambda g, a, v, dim, idx, reduce: g.scatter(dim, _wrap(idx), 0.0))


def _scatter_args(input, dim, index, src, value, reduce):
    if src is None:
        src = value
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    d, idx = _check_index("scatter", input, dim, index)
    if isinstance(src, Tensor):
        if src._data.dtype != input._data.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        return _scatter, (input, src), (d, idx, reduce)
    return _scatter_v, (input,), (np.asarray(src, input._data.dtype), d, idx, reduce)


@method()
def scatter(input, dim, index, src=None, value=None, *, reduce=None, out=None):
    op, inputs, params = _scatter_args(input, dim, index, src, value, reduce)
    return finish_out(dispatch(op, inputs, params), out)


Tensor.scatter_ = lambda self, dim, index, src=None, value=None, *, reduce=None: dispatch_inplace(
    *_inplace_args(self, _scatter_args(self, dim, index, src, value, reduce)))


def _inplace_args(self, args):
    op, inputs, params = args
    return op, self, inputs, params


@defop("scatter_add", "ScatterAddBackward0", INDEXING, saves="meta")
def _scatter_add(a, src, dim, idx):
    out = a.copy()
    np.add.at(out, _key(idx, dim), _src_part(src, idx))
    return out


@_scatter_add.derivative_
def _(g, a, src, dim, idx):
    return g, _embed_block(g.gather(dim, _wrap(idx)), src.shape)


@method()
def scatter_add(input, dim, index, src, *, out=None):
    d, idx = _check_index("scatter_add", input, dim, index)
    return finish_out(dispatch(_scatter_add, (input, src), (d, idx)), out)


Tensor.scatter_add_ = lambda self, dim, index, src: dispatch_inplace(
    _scatter_add, self, (self, src), _check_index("scatter_add", self, dim, index))

_REDUCE = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum, "mean": np.add}


def _scatter_reduce_kernel(a, src, dim, idx, reduce, include_self):
    key = _key(idx, dim)
    s = _src_part(src, idx)
    out = a.copy()
    if not include_self:
        ident = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
        if a.dtype.kind in "iu" and reduce in ("amax", "amin"):
            ident = np.iinfo(a.dtype).min if reduce == "amax" else np.iinfo(a.dtype).max
        elif a.dtype.kind == "b" and reduce in ("amax", "amin"):
            ident = reduce == "amin"
        out[key] = ident
    _REDUCE[reduce].at(out, key, s)
    if reduce == "mean":
        count = np.zeros(a.shape, np.int64) + (1 if include_self else 0)
        np.add.at(count, key, 1)
        hit = count > 0
        out = np.where(hit, out // np.maximum(count, 1), a) if a.dtype.kind in "iu" else \
            np.where(hit, out / np.maximum(count, 1).astype(out.dtype), a)
    return out.astype(a.dtype, copy=False)


# one op per reduction, as torch's kernels accept different dtypes (mean no bool, amax / amin no complex)
_REFUSED = {"mean": BOOL, "amax": COMPLEX, "amin": COMPLEX}
_SCATTER_REDUCE = {r: defop("scatter_reduce", "ScatterReduceBackward0", INDEXING, save_output=True,
                            dtypes=ALL_DTYPES - _REFUSED.get(r, frozenset()),
                            error=f"scatter_gather_tensor_cpu_reduce_{r}")(_scatter_reduce_kernel)
                   for r in _REDUCE}


def _scatter_reduce_grads(g, a, src, dim, idx, reduce, include_self, *, out):
    i = _wrap(idx)
    if reduce == "sum":
        ga = g if include_self else g.masked_fill(_wrap(_hit(a.shape, idx, dim)), 0.0)
        return ga, _embed_block(g.gather(dim, i), src.shape)
    if reduce == "mean":
        ones = (g * 0 + 1).scatter(dim, i, 0.0) if not include_self else g * 0 + 1
        count = ones.scatter_add(dim, i, (src * 0 + 1)[tuple(slice(0, s) for s in idx.shape)])
        gc = g / count.clamp(min=1)
        return (gc if include_self else gc.masked_fill(_wrap(_hit(a.shape, idx, dim)), 0.0)), gc.gather(dim, i)
    if reduce == "prod":
        return _scatter_prod_grads(g, a, src, dim, i, idx, include_self, out)
    # amax / amin: the gradient is shared evenly by every element that equals the result
    sp = src[tuple(slice(0, s) for s in idx.shape)]
    self_hit = (a == out) if include_self else (a == out) & ~_wrap(_hit(a.shape, idx, dim))
    src_hit = sp == out.gather(dim, i)
    count = self_hit.to(g.dtype).scatter_add(dim, i, src_hit.to(g.dtype))
    share = g / count.clamp(min=1)
    return share * self_hit, share.gather(dim, i) * src_hit


def _scatter_prod_grads(g, a, src, dim, i, idx, include_self, out):
    """Gradients of a scatter product: each element's is the product of the others in its group.

    Dividing the result by the element fails at zeros, so (as torch does) zeros are masked to one when
    recomputing the product, and a group's only zero gets the product of everything else in its group.
    """
    hit = _wrap(_hit(a.shape, idx, dim))
    if include_self:
        masked_self = a.masked_fill(a == 0, 1.0)
        others = masked_self.scatter_reduce(dim, i, src, "prod", include_self=True) / masked_self
        ga = where(hit, g * others, g)
    else:
        ga = g.masked_fill(hit, 0.0)
    sp = src[tuple(slice(0, n) for n in idx.shape)]
    zero = sp == 0
    zeros_in_group = (a * 0).scatter_add(dim, i, zero.to(a.dtype)).gather(dim, i)
    single = zero & (zeros_in_group == 1)
    without_it = a.scatter_reduce(dim, i, sp.masked_fill(single, 1.0), "prod", include_self=include_self)
    gs = where(single, (g * without_it).gather(dim, i), (g * out).gather(dim, i) / sp.masked_fill(zero, 1.0))
    return ga, _embed_block(gs, src.shape)


for _op in _SCATTER_REDUCE.values():
    _op.derivative_(_scatter_reduce_grads)


def _hit(shape, idx, dim):
    m = np.zeros(shape, np.bool_)
    m[_key(idx, dim)] = True
    return m


@method()
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    if reduce not in _REDUCE:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got " + str(reduce))
    d, idx = _check_index("scatter_reduce", input, dim, index)
    return finish_out(dispatch(_SCATTER_REDUCE[reduce], (input, src), (d, idx, reduce, include_self)), out)


Tensor.scatter_reduce_ = lambda self, dim, index, src, reduce, *, include_self=True: dispatch_inplace(
    _SCATTER_REDUCE[reduce], self, (self, src),
    _check_index("scatter_reduce", self, dim, index) + (reduce, include_self))

# ---- index_add / index_copy / index_fill --------------------------------------------------------------


def _check_index_vector(name, input, dim, index, source=None):
    if not isinstance(index, Tensor) or index._data.dtype.kind not in "iu":
        raise IndexError(f"{name}_(): Expected dtype int32/int64 for index")
    if index._data.ndim > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector" if name == "index_add" else
                         f"{name}_(): Index is supposed to be a vector")
    n = input._data.ndim
    d = wrap_dim(dim, n)
    idx = index._data.reshape(-1).astype(np.int64)
    size = input._data.shape[d] if n else 1
    if idx.size and (idx.min() < -size or idx.max() >= size):
        bad = idx[(idx < -size) | (idx >= size)][0]
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    return d, np.where(idx < 0, idx + size, idx)


def _along(dim, idx):
    return (slice(None),) * dim + (idx,)


@defop("index_add", "IndexAddBackward0", INDEXING, saves="none")
def _index_add(a, src, dim, idx, alpha):
    out = a.copy()
    np.add.at(out, _along(dim, idx), src if alpha == 1 else src * alpha)
    return out


@_index_add.derivative_
def _(g, a, src, dim, idx, alpha):
    gs = g.index_select(dim, _wrap(idx)) if g.dim() else g
    return g, (gs if alpha == 1 else gs * alpha)


@method()
def index_add(input, dim, index, source, *, alpha=1, out=None):
    d, idx = _check_index_vector("index_add", input, dim, index)
    return finish_out(dispatch(_index_add, (input, source), (d, idx, alpha)), out)


Tensor.index_add_ = lambda self, dim, index, source, *, alpha=1: dispatch_inplace(
    _index_add, self, (self, source), _check_index_vector("index_add", self, dim, index) + (alpha,))


@defop("index_copy", "IndexCopyBackward0", INDEXING, saves="none")
def _index_copy(a, src, dim, idx):
    out = a.copy()
    out[_along(dim, idx)] = src
    return out


@_index_copy.derivative_
def _(g, a, src, dim, idx):
    i = _wrap(idx)
    return g.index_fill(dim, i, 0.0), g.index_select(dim, i)


@method()
def index_copy(input, dim, index, source, *, out=None):
    d, idx = _check_index_vector("index_copy", input, dim, index)
    return finish_out(dispatch(_index_copy, (input, source), (d, idx)), out)


Tensor.index_copy_ = lambda self, dim, index, source: dispatch_inplace(
    _index_copy, self, (self, source), _check_index_vector("index_copy", self, dim, index))


def _index_fill_kernel(a, value, dim, idx):
    out = a.copy(order="K")  # (unlike the other index ops, torch's index_fill keeps the input's layout)
    out[_along(dim, idx)] = value
    return out


_index_fill = defop("index_fill", "IndexFillBackward0", INDEXING, saves="none")(_index_fill_kernel)
_index_fill.derivative_(lambda g, a, value, dim, idx: (g.index_fill(dim, _wrap(idx), 0.0), None))
_index_fill_t = defop("index_fill", "IndexFillBackward1", INDEXING, saves="none")(_index_fill_kernel)
_index_fill_t.derivative_(lambda g, a, value, dim, idx: (g.index_fill(dim, _wrap(idx), 0.0),
                                                          g.index_select(dim, _wrap(idx)).sum()))


def _index_fill_args(input, dim, index, value):
    d, idx = _check_index_vector("index_fill", input, dim, index)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return _index_fill_t, (input, value.to(input.dtype)), (d, idx)
    kind = input._data.dtype.kind
    if kind in "iu" and not isinstance(value, bool):
        info = np.iinfo(input._data.dtype)
        if not info.min <= value <= info.max:
            raise RuntimeError(f"value cannot be converted to type {input._data.dtype.name}_t without "
                               "overflow")
    return _index_fill, (input, value), (d, idx)


@method()
def index_fill(input, dim, index, value):
    op, inputs, params = _index_fill_args(input, dim, index, value)
    if input._data.ndim == 0:
        return input.reshape(1).index_fill(0, index, value).reshape(())
    return dispatch(op, inputs, params)


def _index_fill_(self, dim, index, value):
    op, inputs, params = _index_fill_args(self, dim, index, value)
    return dispatch_inplace(op, self, inputs, params)


Tensor.index_fill_ = _index_fill_

# ---- masks ----------------------------------------------------------------------------------------------


def _check_mask(name, mask):
    if not isinstance(mask, Tensor) or mask._data.dtype != np.bool_:
        if name.startswith("masked_scatter"):
            raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                               f"{getattr(mask, 'dtype', type(mask).__name__)}".replace("ember.", ""))
        raise RuntimeError(f"{name}: expected BoolTensor for mask")


@defop("masked_select", "MaskedSelectBackward0", INDEXING, saves="meta")
def _masked_select(a, mask):
    shape = np.broadcast_shapes(a.shape, mask.shape)
    return np.broadcast_to(a, shape)[np.broadcast_to(mask, shape)]


@_masked_select.derivative_
def _(g, a, mask):
    shape = np.broadcast_shapes(tuple(a.shape), mask.shape)
    from .creation import zeros

    return zeros(shape, dtype=g.dtype).masked_scatter(_wrap(np.broadcast_to(mask, shape)), g)


@method()
def masked_select(input, mask, *, out=None):
    _check_mask("masked_select", mask)
    return finish_out(dispatch(_masked_select, (input,), (mask._data,)), out)


@defop("masked_scatter", "MaskedScatterBackward0", INDEXING, saves="meta")
def _masked_scatter(a, src, mask):
    m = np.broadcast_to(mask, a.shape)
    out = a.copy(order="K")
    n = int(m.sum())
    out[m] = src.reshape(-1)[:n]
    return out


@_masked_scatter.derivative_
def _(g, a, src, mask):
    m = _wrap(np.broadcast_to(mask, tuple(g.shape)))
    picked = g.masked_select(m)
    n = src.numel()
    from .creation import zeros

    pad = zeros(n - picked.numel(), dtype=g.dtype)
    from .shape import cat

    return g.masked_fill(m, 0.0), cat([picked, pad]).reshape(src.shape)


def _masked_scatter_args(name, input, mask, source):
    _check_mask(name, mask)
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"{name}: expected self and source to have same dtypes but got "
                           f"{input.dtype} and {source.dtype}")
    n = int(np.broadcast_to(mask._data, input._data.shape).sum())
    if n > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return (input, source), (mask._data,)


@method()
def masked_scatter(input, mask, source):
    inputs, params = _masked_scatter_args("masked_scatter", input, mask, source)
    return dispatch(_masked_scatter, inputs, params)


Tensor.masked_scatter_ = lambda self, mask, source: dispatch_inplace(
    _masked_scatter, self, *_masked_scatter_args("masked_scatter_", self, mask, source))

# ---- take / nonzero ------------------------------------------------------------------------------------


@defop("take", "TakeBackward0", INDEXING, saves="meta")
def _take(a, idx):
    return a.reshape(-1)[idx]


@_take.derivative_
def _(g, a, idx):
    return dispatch(_put_zeros, (g,), (tuple(a.shape), idx))


@defop("put_zeros", "PutBackward0", INDEXING, saves="none")
def _put_zeros(g, shape, idx):
    z = np.zeros(int(np.prod(shape)), g.dtype)
    np.add.at(z, idx.reshape(-1), g.reshape(-1))
    return z.reshape(shape)


@_put_zeros.derivative_
def _(gg, g, shape, idx):
    return dispatch(_take, (gg,), (idx,))


@method()
def take(input, index, *, out=None):
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        raise RuntimeError("take(): Expected a long tensor for index, but got " +
                           (str(index.dtype).replace("ember.", "").capitalize() if isinstance(index, Tensor)
                            else type(index).__name__))
    n = input._data.size
    idx = index._data
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)][0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    return finish_out(dispatch(_take, (input,), (np.where(idx < 0, idx + n, idx),)), out)


@method()
def take_along_dim(input, indices, dim=None, *, out=None):
    if dim is None:
        return finish_out(input.reshape(-1).gather(0, indices.reshape(-1)), out)
    n = input._data.ndim
    if indices._data.ndim != n:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {n} dimensions for input, and {indices._data.ndim} "
                           "dimensions for indices")
    d = wrap_dim(dim, n)
    a_shape, i_shape = list(input._data.shape), list(indices._data.shape)
    a_shape[d] = i_shape[d] = 1
    b = list(np.broadcast_shapes(tuple(a_shape), tuple(i_shape)))
    x_shape, i_full = list(b), list(b)
    x_shape[d], i_full[d] = input._data.shape[d], indices._data.shape[d]
    return finish_out(input.expand(*x_shape).gather(d, indices.expand(*i_full)), out)


@method()
def nonzero(input, *, out=None, as_tuple=False):
    a = input._data
    if as_tuple:
        if a.ndim == 0:
            return (_wrap(np.flatnonzero(a.reshape(1)).astype(np.int64)),)
        return tuple(_wrap(i.astype(np.int64)) for i in np.nonzero(a))
    if a.ndim == 0:
        return finish_out(_wrap(np.zeros((int(bool(a)), 0), np.int64)), out)
    # torch's result is column-major: (n, ndim) with strides (1, n)
    return finish_out(_wrap(np.asfortranarray(np.argwhere(a).astype(np.int64))), out)


@method()
def argwhere(input):
    return nonzero(input)

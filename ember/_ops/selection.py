"""Selecting and scattering: gather, scatter (+ add / reduce), index_add / index_copy / index_fill,
masked_select / masked_scatter, take, take_along_dim, nonzero, argwhere.

NOTE [ Index keys ]
A `dim`-wise index tensor addresses input[i_0, ..., index[i], ..., i_n] for every position i of the
index; `_key` builds that NumPy advanced-indexing key once (open grids over the index's own shape), so
scatters are `out[key] = src` or `np.<ufunc>.at(out, key, src)` with no Python loop over elements.
Index and mask tensors are inputs of the ops (NOTE [ Index tensors are op inputs ] in indexing.py), and
kernels take negative indices as they are (NumPy's indexing wraps them as torch does).
"""

import numpy as np

from .._argparse import call_error
from .._dispatch import (
    ALL_DTYPES,
    BOOL,
    COMPLEX,
    INDEXING,
    _modes,
    defop,
    dispatch,
    dispatch_inplace,
    dtype_word,
    require_dtype,
)
from .._meta import MetaArray, broadcast_shapes, like_array, like_strides, meta_array, no_meta_kernel
from .._native import ops as _native
from .._tensor import Tensor
from ..autograd.grad_mode import state as _grad_state
from ._util import checked_scalar, finish_out, method, per_sample, refuse_under_vmap, wrap_dim
from .indexing import NONZERO_ON_META, index_values_error
from .pointwise import where


def _key(idx, dim):
    grids = np.indices(idx.shape, sparse=True)
    return tuple(idx if d == dim else grids[d] for d in range(idx.ndim))


def _src_part(src, idx):
    """The leading block of `src` matching the index's shape (torch lets src be larger)."""
    if np.ndim(src) == 0:
        return src
    return src[tuple(slice(0, s) for s in idx.shape)]


def _check_index(name, input, dim, index, src=None, values=True):
    """torch's checks of gather / scatter arguments, in torch's order: the dim, the index's dtype, src's dtype,
    the shapes (skipped for an empty index), then the index values (which torch's kernel checks; gather's own
    kernel checks them, `values=False`)."""
    n = input._data.ndim
    d = wrap_dim(dim, n)
    if not isinstance(index, Tensor) or index._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{'scatter' if name == 'scatter_add' else name}(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src._data.dtype != input._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    idx = index._data
    if idx.size:
        _check_index_shape(name, input._data.shape, d, idx.shape, src._data.shape if isinstance(src, Tensor) else None)
    try:
        size = input._data.shape[d] if n else 1
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    err = index_values_error(idx, d, size) if values else None
    if err is not None:
        raise err
    return d


def _check_index_shape(name, shape, d, ishape, sshape):
    """torch's gather_shape_check / scatter_shape_check (a 0-d tensor counts as one dim of size 1)."""
    dims = max(len(shape), 1)

    def size(s, i):
        if not s:
            return 1
        if i >= len(s):  # (torch's src.size(i) of a src with fewer dims)
            raise IndexError(f"Dimension out of range (expected to be in range of [{-len(s)}, {len(s) - 1}], "
                             f"but got {i})")
        return s[i]
    if dims != max(len(ishape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           + ("input tensor" if name == "gather" else "self tensor"))
    if name == "gather":
        for i in range(dims):
            if i != d and size(ishape, i) > size(shape, i):
                raise RuntimeError(f"Size does not match at dimension {i} expected index {list(ishape)} to be no "
                                   f"larger than self {list(shape)} apart from dimension {d}")
        return
    wrong = any(i != d and size(ishape, i) > size(shape, i) for i in range(dims))
    if not wrong and sshape is not None:
        wrong = any(size(ishape, i) > size(sshape, i) for i in range(dims))
    if sshape is not None and max(len(sshape), 1) != max(len(ishape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if wrong:
        raise RuntimeError(f"Expected index {list(ishape)} to be no larger than self {list(shape)} apart from "
                           f"dimension {d}" + (f" and to be no larger size than src {list(sshape)}"
                                               if sshape is not None else ""))


@method()
def gather(input, dim, index, *, sparse_grad=False, out=None):
    from .indexing import _gather

    d = _check_index("gather", input, dim, index, values=False)
    if input._data.ndim == 0:
        return finish_out(input.reshape(1).gather(0, index.reshape(1) if index._data.ndim == 0 else index)
                          .reshape(index.shape), out)
    return finish_out(dispatch(_gather, (input, index), (d,)), out)


# ---- scatter ----------------------------------------------------------------------------------------------


# inputs: (a, src, index); params: (dim, reduce)
@defop("scatter", "ScatterBackward0", INDEXING, saves="meta", tags=("index",))
def _scatter(a, src, idx, dim, reduce):
    out = a.copy()  # torch's scatters return contiguous results
    if reduce is None:
        out[_key(idx, dim)] = _src_part(src, idx)
    else:
        (np.add if reduce == "add" else np.multiply).at(out, _key(idx, dim), _src_part(src, idx))
    return out


@_scatter.derivative_
def _(g, a, src, idx, dim, reduce):
    return g.scatter(dim, idx, 0.0), _src_grad(g.gather(dim, idx), src.shape, "ScatterBackward0"), None


def _same_as_input(a, *rest):
    """The scatters and index writes: a fresh contiguous tensor like their input (torch's meta)."""
    return meta_array(a.shape, a._data.dtype)


_scatter.meta_(_same_as_input)


def _src_grad(g, shape, node):
    """The gradient of a scatter's `src`, which has the index's shape: torch's engine refuses it when `src` is
    larger than the index (its validate_outputs), and so does ember, with torch's words."""
    if tuple(g.shape) != tuple(shape):
        raise RuntimeError(f"Function {node} returned an invalid gradient at index 1 - got {list(g.shape)} but "
                           f"expected shape compatible with {list(shape)}")
    return g


# inputs: (a, index); params: (value, dim, reduce)
_scatter_v = defop("scatter", "ScatterBackward1", INDEXING, saves="none", overload="value", tags=("index",))(
    lambda a, idx, v, dim, reduce: _scatter.kernel(a, np.asarray(v, a.dtype), idx, dim, reduce))
_scatter_v.derivative_(lambda g, a, idx, v, dim, reduce: (g.scatter(dim, idx, 0.0), None))
_scatter_v.meta_(_same_as_input)


def _scatter_args(input, dim, index, src, value, reduce):
    if src is None:
        src = value
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    d = _check_index("scatter", input, dim, index, src)
    if isinstance(src, Tensor):
        return _scatter, (input, src, index), (d, reduce)
    value = src.item() if isinstance(src, (np.ndarray, np.generic)) else src  # a static param: a Python number
    return _scatter_v, (input, index), (checked_scalar(value, input._data.dtype), d, reduce)


@method()
def scatter(input, dim, index, src=None, value=None, *, reduce=None, out=None):
    op, inputs, params = _scatter_args(input, dim, index, src, value, reduce)
    return finish_out(dispatch(op, inputs, params), out)


Tensor.scatter_ = lambda self, dim, index, src=None, value=None, *, reduce=None: dispatch_inplace(
    *_inplace_args(self, _scatter_args(self, dim, index, src, value, reduce)))


def _inplace_args(self, args):
    op, inputs, params = args
    return op, self, inputs, params


@defop("scatter_add", "ScatterAddBackward0", INDEXING, saves="meta", tags=("index",))
def _scatter_add(a, src, idx, dim):
    out = a.copy()
    if not (src.size >= _native.MIN_SIZE and np.ndim(src) and _native.scatter_add(out, dim, idx, src)):
        np.add.at(out, _key(idx, dim), _src_part(src, idx))  # (the native kernel adds in this order too)
    return out


@_scatter_add.derivative_
def _(g, a, src, idx, dim):
    return g, _src_grad(g.gather(dim, idx), src.shape, "ScatterAddBackward0"), None


_scatter_add.meta_(_same_as_input)


@method()
def scatter_add(input, dim, index, src, *, out=None):
    d = _check_index("scatter_add", input, dim, index, src)
    return finish_out(dispatch(_scatter_add, (input, src, index), (d,)), out)


Tensor.scatter_add_ = lambda self, dim, index, src: dispatch_inplace(
    _scatter_add, self, (self, src, index), (_check_index("scatter_add", self, dim, index, src),))

_REDUCE = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum, "mean": np.add}


@defop("scatter_reduce", "ScatterReduceBackward0", INDEXING, save_output=True, tags=("index",))
def _scatter_reduce(a, src, idx, dim, reduce, include_self):
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


@_scatter_reduce.derivative_
def _(g, a, src, i, dim, reduce, include_self, *, out):
    if reduce == "sum":
        ga = g if include_self else g.masked_fill(_hit(a.shape, i, dim), 0.0)
        return ga, _src_grad(g.gather(dim, i), src.shape, "ScatterReduceBackward0"), None
    if reduce == "mean":
        ones = (g * 0 + 1).scatter(dim, i, 0.0) if not include_self else g * 0 + 1
        count = ones.scatter_add(dim, i, (src * 0 + 1)[tuple(slice(0, s) for s in i.shape)])
        gc = g / count.clamp(min=1)
        return (gc if include_self else gc.masked_fill(_hit(a.shape, i, dim), 0.0)), gc.gather(dim, i), None
    if reduce == "prod":
        return _scatter_prod_grads(g, a, src, dim, i, include_self, out) + (None,)
    # amax / amin: the gradient is shared evenly by every element that equals the result
    sp = src[tuple(slice(0, s) for s in i.shape)]
    self_hit = (a == out) if include_self else (a == out) & ~_hit(a.shape, i, dim)
    src_hit = sp == out.gather(dim, i)
    count = self_hit.to(g.dtype).scatter_add(dim, i, src_hit.to(g.dtype))
    share = g / count.clamp(min=1)
    return share * self_hit, share.gather(dim, i) * src_hit, None


_scatter_reduce.meta_(_same_as_input)


def _scatter_prod_grads(g, a, src, dim, i, include_self, out):
    """Gradients of a scatter product: each element's is the product of the others in its group.

    Dividing the result by the element fails at zeros, so (as torch does) zeros are masked to one when
    recomputing the product, and a group's only zero gets the product of everything else in its group.
    """
    hit = _hit(a.shape, i, dim)
    if include_self:
        masked_self = a.masked_fill(a == 0, 1.0)
        others = masked_self.scatter_reduce(dim, i, src, "prod", include_self=True) / masked_self
        ga = where(hit, g * others, g)
    else:
        ga = g.masked_fill(hit, 0.0)
    sp = src[tuple(slice(0, n) for n in i.shape)]
    zero = sp == 0
    zeros_in_group = (a * 0).scatter_add(dim, i, zero.to(a.dtype)).gather(dim, i)
    single = zero & (zeros_in_group == 1)
    without_it = a.scatter_reduce(dim, i, sp.masked_fill(single, 1.0), "prod", include_self=include_self)
    gs = where(single, (g * without_it).gather(dim, i), (g * out).gather(dim, i) / sp.masked_fill(zero, 1.0))
    return ga, _src_grad(gs, src.shape, "ScatterReduceBackward0")


def _hit(shape, i, dim):
    """The bool mask of the positions of a tensor of `shape` that index `i` addresses along `dim`."""
    from .._dtypes import bool as bool_
    from .creation import zeros

    return zeros(tuple(shape), dtype=bool_).scatter(dim, i, True)


@method()
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    if reduce not in _REDUCE:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got " + str(reduce))
    _check_reduce_dtype(input, reduce, src)
    d = _check_index("scatter_reduce", input, dim, index, src)
    return finish_out(dispatch(_scatter_reduce, (input, src, index), (d, reduce, include_self)), out)


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    _check_reduce_dtype(self, reduce, src)
    return dispatch_inplace(_scatter_reduce, self, (self, src, index),
                            (_check_index("scatter_reduce", self, dim, index, src), reduce, include_self))


# torch's kernels per reduction accept different dtypes (mean no bool, amax / amin no complex)
_REFUSED = {"mean": BOOL, "amax": COMPLEX, "amin": COMPLEX}


def _check_reduce_dtype(input, reduce, src=None):
    require_dtype(input, ALL_DTYPES - _REFUSED.get(reduce, frozenset()),
                  f"scatter_gather_tensor_cpu_reduce_{reduce}")
    # torch's derivative of scatter_reduce is for real dtypes only: a complex one refuses to record
    if input.is_complex() and _grad_state.enabled and (input.requires_grad or
                                                       isinstance(src, Tensor) and src.requires_grad):
        raise RuntimeError("scatter_reduce does not support automatic differentiation for outputs with complex "
                           "dtype.")


Tensor.scatter_reduce_ = _scatter_reduce_

# ---- index_add / index_copy / index_fill --------------------------------------------------------------


def check_index_source(func, input, d, index, source):
    """torch's index_func_meta_impl (index_add, index_reduce; `d` already wrapped), in its order."""
    idx = index._data
    if idx.ndim > 1:
        raise IndexError(f"{func}_(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"{dtype_word(index.dtype)} and size: {list(idx.shape)}")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{func}_(): Expected dtype int32/int64 for index but got: {dtype_word(index.dtype)}")
    if not isinstance(source, Tensor):
        return
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{func}_(): self ({dtype_word(input.dtype)}) and source ({dtype_word(source.dtype)}) "
                           "must have the same scalar type")
    s, n = source._data.shape, input._data.ndim
    if not (d == 0 or d < len(s)):
        raise RuntimeError(f"{func}_(): Indexing dim {d} is out of bounds of the source tensor with dim {len(s)}")
    if idx.size != (s[d] if s else 1):
        if not s:  # (torch's message reads source.size(dim) of a 0-d source)
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        raise RuntimeError(f"{func}_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                           f"({s[d]}), for dim: {d}")
    shape = list(input._data.shape)
    ss = list(s)
    if s and n:
        del shape[d], ss[d]
    if shape != ss:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input._data.shape)} source.shape = {list(s)}")


def check_index_copy(input, d, index, source):
    """torch's index_copy meta checks (`d` already wrapped), in its order."""
    idx, s, shape = index._data, source._data.shape, input._data.shape
    if idx.ndim >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    if not s and idx.size != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {idx.size})")
    if s and shape and len(s) != len(shape):
        raise IndexError("index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({len(s)}), destination dimensionality ({len(shape)})")
    if idx.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {dtype_word(index.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{dtype_word(input.dtype)} and (source) {dtype_word(source.dtype)}")
    dst_slice = [v for i, v in enumerate(shape) if i != d]
    src_slice = [v for i, v in enumerate(s) if i != d]
    if dst_slice != src_slice:
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {' '.join(map(str, dst_slice))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, src_slice))} at dimension 0.")
    if s and idx.size != s[d]:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to source.size(dim) "
                         f"({s[d]})")


def _check_index_vector(name, input, dim, index, source=None):
    n = input._data.ndim
    if name == "index_copy" and isinstance(index, Tensor) and isinstance(source, Tensor):
        check_index_copy(input, wrap_dim(dim, n), index, source)
    if name in ("index_add", "index_reduce") and isinstance(index, Tensor):
        d = wrap_dim(dim, n)
        check_index_source(name, input, d, index, source)
    if not isinstance(index, Tensor) or index._data.dtype.kind not in "iu":
        raise IndexError(f"{name}_(): Expected dtype int32/int64 for index")
    if index._data.ndim > 1:
        raise IndexError(f"{name}_(): Index is supposed to be a vector")
    d = wrap_dim(dim, n)
    idx = index._data
    if type(idx) is MetaArray:
        return d
    idx = idx.reshape(-1)
    size = input._data.shape[d] if n else 1
    low = 0 if name == "index_copy" else -size  # (index_copy takes no negative index)
    if idx.size and (idx.min() < low or idx.max() >= size):
        bad = idx[(idx < low) | (idx >= size)][0]
        msg = f"index {bad} is out of bounds for dimension {d} with size {size}"
        if name == "index_copy":
            raise IndexError("index_copy_(): " + msg)
        raise (IndexError if name == "index_fill" else RuntimeError)(msg)
    return d  # (the kernels take negative indices as they are: NumPy wraps them)


def _along(dim, idx):
    return (slice(None),) * dim + (idx.reshape(-1),)


def _vector(i):
    """An index tensor as the vector the index_* ops read (a 0-d index is one index)."""
    return i if i.dim() == 1 else i.reshape(-1)


# inputs: (a, src, index); params: (dim, alpha)
@defop("index_add", "IndexAddBackward0", INDEXING, saves="none", tags=("index",))
def _index_add(a, src, idx, dim, alpha):
    out = a.copy()
    src = src if alpha == 1 else src * alpha
    if not (np.size(src) >= _native.MIN_SIZE and _native.index_add(out, dim, idx, src)):
        np.add.at(out, _along(dim, idx), src)  # (the native kernel adds in this order too)
    return out


@_index_add.derivative_
def _(g, a, src, idx, dim, alpha):
    gs = g.index_select(dim, _vector(idx)) if g.dim() else g
    return g, (gs if alpha == 1 else gs * alpha), None


_index_add.meta_(_same_as_input)


@method()
def index_add(input, dim, index, source, *, alpha=1, out=None):
    d = _check_index_vector("index_add", input, dim, index, source)
    return finish_out(dispatch(_index_add, (input, source, index), (d, alpha)), out)


Tensor.index_add_ = lambda self, dim, index, source, *, alpha=1: dispatch_inplace(
    _index_add, self, (self, source, index), (_check_index_vector("index_add", self, dim, index, source), alpha))


@defop("index_copy", "IndexCopyBackward0", INDEXING, saves="none", tags=("index",))
def _index_copy(a, src, idx, dim):
    out = a.copy()
    out[_along(dim, idx)] = src
    return out


@_index_copy.derivative_
def _(g, a, src, idx, dim):
    i = _vector(idx)
    return g.index_fill(dim, i, 0.0), g.index_select(dim, i), None


_index_copy.meta_(_same_as_input)


@method()
def index_copy(input, dim, index, source, *, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py): the dtypes are checked after
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("index_copy", index_copy, input, dim, index, source, out=out)
    d = _check_index_vector("index_copy", input, dim, index, source)
    return finish_out(dispatch(_index_copy, (input, source, index), (d,)), out)


Tensor.index_copy_ = lambda self, dim, index, source: dispatch_inplace(
    _index_copy, self, (self, source, index), (_check_index_vector("index_copy", self, dim, index, source),))


def _index_fill_kernel(a, value, idx, dim):
    out = like_array(a)  # (unlike the other index ops, torch's index_fill keeps the input's layout)
    out[_along(dim, idx)] = value
    return out


# inputs: (a, value, index); params: (dim,)
_index_fill = defop("index_fill", "IndexFillBackward0", INDEXING, saves="none", tags=("index",))(_index_fill_kernel)
_index_fill.derivative_(lambda g, a, value, idx, dim: (g.index_fill(dim, _vector(idx), 0.0), None, None))
_index_fill_t = defop("index_fill", "IndexFillBackward1", INDEXING, saves="none", overload="int_Tensor",
                      tags=("index",))(_index_fill_kernel)
_index_fill_t.derivative_(lambda g, a, value, idx, dim: (g.index_fill(dim, _vector(idx), 0.0),
                                                          g.index_select(dim, _vector(idx)).sum(), None))
_index_fill.meta_(lambda a, value, idx, dim: meta_array(a.shape, a._data.dtype, like_strides(a)))
_index_fill_t.meta_(lambda a, value, idx, dim: meta_array(a.shape, a._data.dtype, like_strides(a)))


def _index_fill_args(input, dim, index, value):
    d = _check_index_vector("index_fill", input, dim, index)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return _index_fill_t, (input, value.to(input.dtype), index), (d,)
    if isinstance(value, complex) and input._data.dtype.kind != "c":
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    return _index_fill, (input, checked_scalar(value, input._data.dtype), index), (d,)


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
                               f"{mask.dtype.name if isinstance(mask, Tensor) else type(mask).__name__}")
        raise RuntimeError(f"{name}: expected BoolTensor for mask")


@defop("masked_select", "MaskedSelectBackward0", INDEXING, saves="meta", tags=("dynamic_output_shape", "index",))
def _masked_select(a, mask):
    shape = np.broadcast_shapes(a.shape, mask.shape)
    return np.broadcast_to(a, shape)[np.broadcast_to(mask, shape)]


@_masked_select.derivative_
def _(g, a, mask):
    shape = np.broadcast_shapes(tuple(a.shape), tuple(mask.shape))
    from .creation import zeros

    return zeros(shape, dtype=g.dtype).masked_scatter(mask.expand(shape), g), None


@_masked_select.meta_
def _(a, mask):
    raise no_meta_kernel("masked_select")


_masked_select.tags = _masked_select.tags | {"dynamic_output_shape"}


@method()
def masked_select(input, mask, *, out=None):
    if _modes:  # (V) a batched mask selects a different number per sample
        refuse_under_vmap("masked_select", (mask,), "mask")
    _check_mask("masked_select", mask)
    from .indexing import _check_mask_broadcast

    _check_mask_broadcast(mask, input)
    return finish_out(dispatch(_masked_select, (input, mask)), out)


@defop("masked_scatter", "MaskedScatterBackward0", INDEXING, saves="meta", tags=("index",))
def _masked_scatter(a, src, mask, fresh):
    m = np.broadcast_to(mask, a.shape)
    out = np.array(a, order="C") if fresh else like_array(a)  # (torch's masked_scatter: a contiguous clone)
    n = int(m.sum())
    out[m] = src.reshape(-1)[:n]
    return out


@_masked_scatter.derivative_
def _(g, a, src, mask, fresh):
    m = mask.expand(tuple(g.shape))
    return g.masked_fill(m, 0.0), dispatch(_masked_scatter_backward, (g, m), (tuple(src.shape),)), None


_masked_scatter.meta_(lambda a, src, mask, fresh: meta_array(a.shape, a._data.dtype,
                                                              None if fresh else like_strides(a)))


# torch's masked_scatter_backward: the gradient of the source is the output gradient's masked elements, in
# order, then zeros, shaped as the source. One op (not masked_select and a pad) because its shape is the
# source's, known without the data, while masked_select's depends on the mask's values.
@defop("masked_scatter_backward", "MaskedScatterBackwardBackward0", INDEXING, saves="meta", tags=("index",))
def _masked_scatter_backward(g, mask, sizes):
    picked = g[np.broadcast_to(mask, g.shape)]
    out = np.zeros(int(np.prod(sizes)), g.dtype)
    k = min(picked.size, out.size)
    out[:k] = picked[:k]
    return out.reshape(sizes)


@_masked_scatter_backward.derivative_
def _(gg, g, mask, sizes):  # the first elements of gg go back to the masked places of g
    return dispatch(_masked_scatter, (gg.new_zeros(tuple(g.shape)), gg, mask), (True,)), None


_masked_scatter_backward.meta_(lambda g, mask, sizes: meta_array(sizes, g._data.dtype))


def _masked_scatter_args(name, input, mask, source, inplace=True):
    _check_mask(name, mask)
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"{name}: expected self and source to have same dtypes but got"  # (no space: torch's)
                           f"{dtype_word(input.dtype)} and {dtype_word(source.dtype)}")
    if inplace:  # (torch's expand_inplace: the mask expands to self)
        from .shape import _expand_shape
        _expand_shape(mask, tuple(input._data.shape), internal=True)
    meta = type(mask._data) is MetaArray  # (torch's meta cannot count the mask's ones)
    n = 0 if meta else int(np.broadcast_to(mask._data, input._data.shape).sum())
    if n > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return (input, source, mask), (not inplace,)


@method()
def masked_scatter(input, mask, source):
    # torch's expand_outplace(mask, self): both expand to their broadcast shape, then a contiguous clone of self
    try:
        shape = broadcast_shapes(tuple(mask._data.shape), tuple(input._data.shape))
    except AttributeError as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if shape != tuple(input._data.shape):
        input = input.expand(shape)
    inputs, params = _masked_scatter_args("masked_scatter", input, mask, source, inplace=False)
    return dispatch(_masked_scatter, inputs, params)


Tensor.masked_scatter_ = lambda self, mask, source: dispatch_inplace(
    _masked_scatter, self, *_masked_scatter_args("masked_scatter_", self, mask, source))

# ---- take / nonzero ------------------------------------------------------------------------------------


@defop("take", "TakeBackward0", INDEXING, saves="meta", tags=("index",))
def _take(a, idx):
    return a.reshape(-1)[idx]


@_take.derivative_
def _(g, a, idx):
    return dispatch(_put_zeros, (g, idx), (tuple(a.shape),)), None


_take.meta_(lambda a, idx: meta_array(idx.shape, a._data.dtype))


@defop("put_zeros", "PutBackward0", INDEXING, saves="none", tags=("index",))
def _put_zeros(g, idx, shape):
    z = np.zeros(int(np.prod(shape)), g.dtype)
    np.add.at(z, idx.reshape(-1), g.reshape(-1))
    return z.reshape(shape)


@_put_zeros.derivative_
def _(gg, g, idx, shape):
    return dispatch(_take, (gg, idx)), None


_put_zeros.meta_(lambda g, idx, shape: meta_array(shape, g._data.dtype))


@method()
def take(input, index, *, out=None):
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        raise RuntimeError("take(): Expected a long tensor for index, but got " +
                           (index.dtype.name.capitalize() if isinstance(index, Tensor)
                            else type(index).__name__))
    if _modes and (r := per_sample(take, (input, index))) is not NotImplemented:  # (NOTE [ Composites
        return finish_out(r, out)  # that read data under vmap ] in _util.py: the range check per sample)
    n = input._data.size
    idx = index._data
    if type(idx) is not MetaArray and idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)][0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    return finish_out(dispatch(_take, (input, index)), out)


@method()
def take_along_dim(input, indices, dim=None, *, out=None):
    try:
        if dim is None:
            return finish_out(input.reshape(-1).gather(0, indices.reshape(-1)), out)
        n, ni = input._data.ndim, indices._data.ndim
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if ni != n:
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


# nonzero's output shape depends on the data
@defop("nonzero", None, INDEXING, tags=("dynamic_output_shape",))
def _nonzero(a):
    if a.ndim == 0:
        return np.zeros((int(bool(a)), 0), np.int64)
    # torch's result is column-major: (n, ndim) with strides (1, n)
    return np.asfortranarray(np.argwhere(a).astype(np.int64))


@defop("nonzero_numpy", None, INDEXING, tags=("dynamic_output_shape",))  # as_tuple=True
def _nonzero_tuple(a):
    if a.ndim == 0:
        return (np.flatnonzero(a.reshape(1)).astype(np.int64),)
    return tuple(i.astype(np.int64) for i in np.nonzero(a))


def _nonzero_meta(a):
    raise NotImplementedError(NONZERO_ON_META)  # (how many is data)


_nonzero.meta_(_nonzero_meta)
_nonzero_tuple.meta_(_nonzero_meta)


@method()
def nonzero(input, *, out=None, as_tuple=False):
    if as_tuple:
        if _modes:  # (V) a tuple of tensors: torch's vmap has no fallback
            refuse_under_vmap("nonzero_numpy", (input,), "no_fallback")
        return dispatch(_nonzero_tuple, (input,))
    return finish_out(dispatch(_nonzero, (input,)), out)


@method()
def argwhere(input):
    if _modes:  # (V) torch's vmap runs argwhere per sample (its nonzero refuses): results stack when they agree
        res = per_sample(argwhere, (input,))
        if res is not NotImplemented:
            return res
    return nonzero(input)

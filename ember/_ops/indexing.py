"""Indexing: `t[key]`, `t[key] = v`, index_select, masked_fill, copy_, and the gather/scatter pair that
value-selecting reductions (max along a dim) use for their gradients.

NOTE [ Basic and advanced indexing ]
As in torch, ints, slices (positive step), None and Ellipsis give a view and are applied one at a time as
select / slice / unsqueeze (so `x[:, 0].grad_fn` is SelectBackward0, and full slices are free).
Integer or boolean tensors and lists make the index "advanced": one `IndexBackward0` op that copies,
with NumPy's (= torch's) rules for where the indexed dims go.

NOTE [ Index tensors are op inputs ]
The index, mask and target tensors of every op here and in selection.py are inputs of the dispatched op,
never arrays in its parameters, so a mode (a tracer) sees them as tensors and records them as graph
inputs (see NOTE [ Index inputs ] in autograd/graph.py for how autograd treats them). An advanced-indexing
key mixes tensors with ints, slices and None: the op gets the key's tensors as inputs and a template of
the key as a parameter, with `TENSOR` where each tensor goes (`_fill` puts the arrays back).
"""

import warnings

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import INDEXING, defop, dispatch, dispatch_inplace
from .._meta import MetaArray, NoData, broadcast_shapes, like_strides, meta_array, no_data
from .._native import ops as _native
from .._tensor import Tensor
from ._util import c_contiguous, checked_scalar, finish_out, method, public, wrap_dim
from .shape import _select, _slice, _unsqueeze

_int_types = (int, np.integer)


class _TensorSlot:
    """The place of a tensor in a key template (NOTE [ Index tensors are op inputs ])."""

    __slots__ = ()

    def __repr__(self):
        return "TENSOR"


TENSOR = _TensorSlot()


def _fill(template, arrays):
    """The NumPy key of `template` with `arrays` in its TENSOR places, in order."""
    if len(arrays) == len(template):  # every entry is a tensor (`x[i]`, `x[i, j]`)
        return arrays if type(arrays) is tuple else tuple(arrays)
    it = iter(arrays)
    return tuple([next(it) if k is TENSOR else k for k in template])


def _template(key):
    """(template, index tensors) of a key whose entries may be tensors."""
    return tuple(TENSOR if isinstance(k, Tensor) else k for k in key), tuple(k for k in key if isinstance(k, Tensor))


def _prep_key(t, key):
    """Normalise a key to a tuple; report whether it holds advanced (tensor/list) indices."""
    if not isinstance(key, tuple):
        key = (key,)
    out, advanced, tensors = [], False, []
    for k in key:
        if isinstance(k, Tensor):
            a = k._data
            if a.ndim == 0 and a.dtype.kind in "iu" and a.dtype != np.uint8:
                # NOTE [ A 0-d integer tensor index is an int ]: torch reads it as its value (applySelect), so
                # x[t] with a 0-d t is a view, as x[1] is; a 0-d bool or uint8 tensor stays a mask
                out.append(int(a))
                continue
            if a.dtype.kind not in "biu" or a.dtype.kind == "i" and a.dtype.itemsize < 4:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(a)  # (a uint8 tensor is a mask: _check_advanced warns, _masks_as_bool converts)
            tensors.append(k)
            advanced = True
        elif isinstance(k, (list, np.ndarray)) or (isinstance(k, tuple) and False):
            arr = np.asarray([int(v) if isinstance(v, Tensor) else v for v in k] if isinstance(k, list) else k)
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(arr if arr.size else arr.astype(np.int64))
            advanced = True
        elif isinstance(k, bool) or k is None or k is Ellipsis or isinstance(k, (slice, *_int_types)):
            if isinstance(k, bool):
                out.append(np.asarray(k))
                advanced = True
            else:
                out.append(k)
        elif isinstance(k, str):
            raise TypeError("new(): invalid data type 'str'")
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             "valid indices (got " + type(k).__name__ + ")")
    return tuple(out), advanced, tensors


def _as_template(key, tensors):
    """The template of a prepared key (its tensors' arrays become TENSOR; NOTE [ Index tensors are op
    inputs ])."""
    if len(tensors) == len(key):
        return (TENSOR,) * len(key)
    arrays = [t._data for t in tensors]
    return tuple([TENSOR if any(k is a for a in arrays) else k for k in key])


def _masks_as_bool(tensors):
    """Index tensors as the kernel takes them: a uint8 tensor is a (deprecated) mask, read as bool."""
    if any(t._data.dtype == np.uint8 for t in tensors):
        return tuple(t.to(_dtypes.bool) if t._data.dtype == np.uint8 else t for t in tensors)
    return tuple(tensors)


def _consumed(key):
    n = 0
    for k in key:
        if k is None or k is Ellipsis:
            continue
        n += k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1
    return n


def _getitem(self, key):
    tk = type(key)
    if tk is int and self._data.ndim:  # x[i]: the commonest index, no parsing needed
        size = self._data.shape[0]
        if -size <= key < size:
            return dispatch(_select, (self,), (0, key + size if key < 0 else key))
    elif tk is slice and self._data.ndim and (key.step is None or key.step > 0):
        size = self._data.shape[0]
        start, stop, step = key.indices(size)
        if start == 0 and stop >= size and step == 1:
            return self.view(self._data.shape)
        return dispatch(_slice, (self,), (0, start, max(start, stop), step))
    if self._data.ndim == 0 and isinstance(key, _int_types) and not isinstance(key, bool):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                         "C++ to convert a 0-dim tensor to a number")
    key, advanced, tensors = _prep_key(self, key)
    ndim = self._data.ndim
    used = _consumed(key)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if advanced:
        template = _as_template(key, tensors)
        _check_advanced(self, key)
        return dispatch(_index, (self, *_masks_as_bool(tensors)), (template,))
    t, dim = self, 0
    for position, k in enumerate(key):  # torch names the dim of an int index by its position in the key
        if k is None:
            t = dispatch(_unsqueeze, (t,), (dim,))
            dim += 1
        elif k is Ellipsis:
            dim += ndim - used
        elif isinstance(k, slice):
            size = t._data.shape[dim]
            start, stop, step = k.indices(size)
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            if not (start == 0 and stop >= size and step == 1):
                t = dispatch(_slice, (t,), (dim, start, max(start, stop), step))
            dim += 1
        else:
            size = t._data.shape[dim]
            i = int(k)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {position} with size {size}")
            t = dispatch(_select, (t,), (dim, i + size if i < 0 else i))
    if t is self:  # x[...] and x[:] are still new views, as in torch
        t = self.view(self._data.shape)
    return t


def _check_advanced(self, key):
    """torch's errors for an advanced key: mask shapes, index bounds, index shapes that do not broadcast.

    An int beside tensor indices is applied first as a select, as torch does; the bound error of an index
    tensor then names its position among the index tensors (a mask counting as one per dim), not a dim.
    """
    shape = self._data.shape
    dim = 0
    shapes = []  # each index's shape as torch broadcasts them (a mask by its count of True)
    for k in key:
        if k is None:
            continue
        if k is Ellipsis:
            dim += len(shape) - _consumed(key)
            continue
        if isinstance(k, np.ndarray) and k.dtype.kind == "b" or isinstance(k, np.ndarray) and k.dtype == np.uint8:
            for j, s in enumerate(k.shape):
                if dim + j < len(shape) and shape[dim + j] != s:
                    raise IndexError(f"The shape of the mask {list(k.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {list(shape)} at index {dim + j}")
            shapes.append([int(np.count_nonzero(k))])
            dim += k.ndim
            continue
        if isinstance(k, np.ndarray):
            shapes.append(list(k.shape))
        dim += 1
    if any(isinstance(k, np.ndarray) and k.dtype == np.uint8 for k in key):  # torch still reads it as a mask
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                      UserWarning, stacklevel=3)
        key = tuple(k.astype(np.bool_) if isinstance(k, np.ndarray) and k.dtype == np.uint8 else k for k in key)
        # (this key only drives the checks below; the op gets uint8 masks as bool through `_masks_as_bool`)
    if len(shapes) > 1:
        try:
            np.broadcast_shapes(*(tuple(s) for s in shapes))
        except ValueError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                             + ", ".join(str(s) for s in shapes)) from None
    dim = nth = 0
    for k in key:
        if k is None:
            continue
        if k is Ellipsis:
            dim += len(shape) - _consumed(key)
            continue
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            dim += k.ndim
            nth += max(k.ndim, 1)
            continue
        if isinstance(k, np.ndarray):
            size = shape[dim] if dim < len(shape) else 0
            if k.size and size == 0:
                raise IndexError("index is out of bounds for dimension with size 0")
            if k.size and type(k) is not MetaArray:  # (a meta index has no values to check)
                bad = k[(k >= size) | (k < -size)]
                if bad.size:
                    raise IndexError(f"index {int(bad.flat[0])} is out of bounds for dimension {nth} with size "
                                     f"{size}")
            nth += 1
        dim += 1
    return key


# inputs: (a, *index tensors); params: (key template,)
@defop("index", "IndexBackward0", INDEXING, saves="meta", tags=("index",))
def _index(a, *rest):
    return c_contiguous(a[_fill(rest[-1], rest[:-1])])


@_index.derivative_
def _(g, a, *rest):
    idx = rest[:-1]
    return (dispatch(_index_put_zeros, (g, *idx), (tuple(a.shape), rest[-1])),) + (None,) * len(idx)


NONZERO_ON_META = (
    "The register_meta function for torch.nonzero() raises unimplemented by default, as a correct "
    "data-independent implementation does not exist. This implementation returns a fake value, assuming all "
    "elements of the tensor are non-zero. To enable this registration, please set "
    "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")


def index_shape(shape, key):
    """The shape `a[key]` has for an advanced-indexing key (NumPy's rules, which are torch's): the index
    arrays broadcast together; their result dims stand where they are when they are adjacent in the key,
    else they go first."""
    used = sum(k.ndim if isinstance(k, (np.ndarray, MetaArray)) and k.dtype == np.bool_ else 1
               for k in key if k is not None and k is not Ellipsis)
    parts, adv, where, dim = [], [], [], 0
    for i, k in enumerate(key):
        if k is Ellipsis:
            n = len(shape) - used
            parts.extend(shape[dim:dim + n])
            dim += n
        elif k is None:
            parts.append(1)
        elif isinstance(k, slice):
            parts.append(len(range(*k.indices(shape[dim]))))
            dim += 1
        else:
            ks = tuple(np.shape(k)) if not isinstance(k, MetaArray) else k.shape
            if isinstance(k, (np.ndarray, MetaArray)) and k.dtype == np.bool_:
                if type(k) is MetaArray:
                    raise NotImplementedError(NONZERO_ON_META)
                dim, ks = dim + k.ndim, (int(np.count_nonzero(k)),)
            else:
                dim += 1
            adv.append(ks)
            where.append(i)
            if not parts or parts[-1] is not _ADV:
                parts.append(_ADV)
    parts.extend(shape[dim:])
    bshape = list(broadcast_shapes(*adv))
    if where != list(range(where[0], where[0] + len(where))):
        return tuple(bshape + [p for p in parts if p is not _ADV])
    k = parts.index(_ADV)
    return tuple(parts[:k] + bshape + parts[k + 1:])


_ADV = object()  # where the index arrays' dims go


@_index.meta_
def _(a, *rest):
    key = _fill(rest[-1], [t._data for t in rest[:-1]])
    return meta_array(index_shape(tuple(a.shape), key), a._data.dtype)


# inputs: (g, *index tensors); params: (shape, key template)
@defop("index_put_zeros", "IndexPutBackward0", INDEXING, saves="none", tags=("index",))
def _index_put_zeros(g, *rest):
    shape, template = rest[-2:]
    z = np.zeros(shape, g.dtype)
    np.add.at(z, _fill(template, rest[:-2]), g)
    return z


@_index_put_zeros.derivative_
def _(gg, g, *rest):
    idx = rest[:-2]
    return (dispatch(_index, (gg, *idx), (rest[-1],)),) + (None,) * len(idx)


_index_put_zeros.meta_(lambda g, *rest: meta_array(rest[-2], g._data.dtype))  # (rest: indices, shape, key)


Tensor.__getitem__ = _getitem


# ---- writing: setitem, index_put_, copy_ ----------------------------------------------------------------


@defop("copy_", "CopyBackwards", INDEXING, saves="meta", tags=("scalar_edge",))
def _copy(a, src):  # (laid out as `a`, as the write into a is: the same value out of place, functionalized)
    src = np.asarray(src)
    try:
        src = np.broadcast_to(src, a.shape)
    except ValueError:
        raise _copy_error(a.shape, src.shape) from None
    if a.flags.c_contiguous:
        return src.astype(a.dtype, order="C")
    out = np.empty_like(a)
    np.copyto(out, src, casting="unsafe")
    return out


def _copy_error(shape, src_shape):
    return RuntimeError(f"The size of tensor a ({shape[-1] if shape else 1}) must match the size of tensor b "
                        f"({src_shape[-1] if src_shape else 1}) at non-singleton dimension "
                        f"{max(len(shape) - 1, 0)}")


@_copy.derivative_
def _(g, a, src):
    return g * 0, g


@_copy.meta_(mixed_devices=True)  # a CPU source copies into a meta tensor (NOTE [ Meta and CPU inputs together ])
def _(a, src):
    if not no_data(a):
        raise NotImplementedError(NoData().args[0])  # torch's "Cannot copy out of meta tensor; no data!"
    shape, src_shape = tuple(a.shape), tuple(getattr(src, "shape", ()))
    try:
        np.broadcast_shapes(src_shape, shape)
    except ValueError:
        raise _copy_error(shape, src_shape) from None
    return meta_array(shape, a._data.dtype, like_strides(a))


@method(top=False)
def copy_(self, other, non_blocking=False):  # (torch names the source `other`)
    return dispatch_inplace(_copy, self, (self, other))


# inputs: (a, values, *index tensors); params: (key template, accumulate)
@defop("index_put", "IndexPutBackward0", INDEXING, saves="meta", tags=("index",))
def _index_put(a, v, *rest):
    key = _fill(rest[-2], rest[:-2])
    out = a.copy()
    try:
        if rest[-1]:  # accumulate
            np.add.at(out, key, v)
        else:
            out[key] = v
    except ValueError:  # NumPy's words for a value that does not fit the indexed result
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(v))} cannot be broadcast to "
                           f"indexing result of shape {list(a[key].shape)}") from None
    return out


@_index_put.derivative_
def _(g, a, v, *rest):
    idx, template = rest[:-2], rest[-2]
    ga = g if rest[-1] else dispatch(_index_put, (g, 0.0, *idx), (template, False))
    return (ga, dispatch(_index, (g, *idx), (template,))) + (None,) * len(idx)


# (torch's meta index_put checks no value shape: the result is a clone of `a` written into)
_index_put.meta_(lambda a, v, *rest: meta_array(a.shape, a._data.dtype, like_strides(a)))


def _setitem(self, key, value):
    scalar = isinstance(value, (int, float, complex))
    if isinstance(value, int) and not isinstance(value, bool) and not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")  # torch reads a Python int as int64 here
    k, advanced, tensors = _prep_key(self, key)
    if advanced:
        if (scalar or isinstance(value, Tensor) and value.dim() == 0) and len(tensors) == 1 \
                and tensors[0]._data.dtype == np.uint8 and all(x is Ellipsis for x in k if type(x) is not np.ndarray):
            # torch fills through masked_fill_ for one mask and a scalar, which takes no uint8 mask
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
        if isinstance(value, Tensor) and value._data.dtype != self._data.dtype:
            value = value.to(self.dtype)
        elif scalar:
            value = checked_scalar(value, self._data.dtype)
        template = _as_template(k, tensors)
        _check_advanced(self, k)
        dispatch_inplace(_index_put, self, (self, value, *_masks_as_bool(tensors)), (template, False))
        return
    view = _getitem(self, key)
    if scalar:  # torch fills the view: the value is checked as fill_ checks it
        value = checked_scalar(value, self._data.dtype, view._data.size)
    elif isinstance(value, Tensor) and value._data.shape != view._data.shape:
        _check_expand(value._data.shape, view._data.shape)  # torch expands the value to the view, then copies
    view.copy_(value)


def _check_expand(shape, target):
    """torch's error for expanding a tensor of `shape` to `target` where it cannot."""
    n = len(target)
    if len(shape) > n:
        return  # (leading size-1 dims are dropped first; copy_ reports the rest)
    for i in range(1, len(shape) + 1):
        if shape[-i] != 1 and shape[-i] != target[-i]:
            bad = n - i
            break
    else:
        return
    raise RuntimeError(f"The expanded size of the tensor ({target[bad]}) must match the existing size "
                       f"({shape[bad - n + len(shape)]}) at non-singleton dimension {bad}.  Target sizes: "
                       f"{list(target)}.  Tensor sizes: {list(shape)}")


Tensor.__setitem__ = _setitem


@method()
def index_put_(self, indices, values, accumulate=False):
    try:
        template, idx = _template(indices)
        _check_advanced(self, _fill(template, [i._data for i in idx]))
        return dispatch_inplace(_index_put, self, (self, values, *_masks_as_bool(idx)), (template, accumulate))
    except (AttributeError, TypeError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


Tensor.index_put_ = index_put_
public.pop("index_put_", None)


@method()
def index_put(input, indices, values, accumulate: bool = False):
    try:
        template, idx = _template(indices)
        _check_advanced(input, _fill(template, [i._data for i in idx]))
        return dispatch(_index_put, (input, values, *_masks_as_bool(idx)), (template, accumulate))
    except (AttributeError, TypeError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


# ---- index_select, masked_fill ------------------------------------------------------------------------


@defop("index_select", "IndexSelectBackward0", INDEXING, saves="meta", tags=("index",))
def _index_select(a, idx, dim):
    return np.take(a, idx.reshape(-1), axis=dim)


@_index_select.derivative_
def _(g, a, idx, dim):
    key = (slice(None),) * dim + (TENSOR,)
    return dispatch(_index_put_zeros, (g, idx.reshape(-1)), (tuple(a.shape), key)), None


@_index_select.meta_
def _(a, idx, dim):
    shape = list(a.shape)
    shape[dim] = idx.numel()
    return meta_array(shape, a._data.dtype)


@method()
def index_select(input, dim, index, *, out=None):
    if not isinstance(index, Tensor) or index._data.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32/int64 for index")
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    n = input._data.ndim
    d = wrap_dim(dim, n) if n else 0
    idx = index._data.reshape(-1) if type(index._data) is not MetaArray else index._data
    size = input._data.shape[d] if n else 1
    if idx.size and type(idx) is not MetaArray and (idx.max() >= size or idx.min() < 0):
        bad = idx[(idx >= size) | (idx < 0)][0]
        if n and d == 1:  # (torch's kernel for dim 1 checks the bounds itself, with other words)
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
        raise IndexError("index out of range in self") if n else IndexError(f"index {bad} out of range")
    if n == 0:
        return finish_out(input.reshape(1)[index].reshape(index.shape), out)
    return finish_out(dispatch(_index_select, (input, index), (d,)), out)


@defop("masked_fill", "MaskedFillBackward0", INDEXING, saves="none", tags=("mask", "index"))
def _masked_fill(a, mask, value):
    return np.where(mask, np.asarray(value, dtype=a.dtype), np.asarray(a, order="C"))  # torch: contiguous


@_masked_fill.derivative_
def _(g, a, mask, value):
    return g.masked_fill(mask, 0), None


_masked_fill.meta_(lambda a, mask, value: meta_array(  # broadcast with the mask, contiguous (as torch's)
    broadcast_shapes(tuple(a.shape), mask.shape), a._data.dtype))


@method()
def masked_fill(input, mask, value):
    if not isinstance(mask, Tensor) or mask._data.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{getattr(mask, 'dtype', type(mask).__name__)}")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        value = value.item()
    _check_mask_broadcast(mask, input)
    return dispatch(_masked_fill, (input, mask), (checked_scalar(value, input._data.dtype),))


def _check_mask_broadcast(mask, input, inplace=False):
    """torch's error when a mask and its input do not broadcast (the mask is tensor a, unless in place)."""
    from .._dispatch import _broadcast_error

    if mask._data.shape != input._data.shape:
        e = _broadcast_error((input, mask) if inplace else (mask, input))
        if e is not None:
            raise e


def _masked_fill_(self, mask, value):
    try:
        if isinstance(value, Tensor):
            value = value.item()
        _check_mask_broadcast(mask, self, inplace=True)
        value = checked_scalar(value, self._data.dtype)
    except (AttributeError, TypeError, ValueError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return dispatch_inplace(_masked_fill, self, (self, mask), (value,))


Tensor.masked_fill_ = _masked_fill_


# ---- gather / scatter into zeros (the pair behind max(dim) and friends) ---------------------------------


def index_values_error(idx, d, size):
    """torch's error for the first index outside [0, size) of dimension `d` (gather and the scatters take no
    negative index), or None; a meta index has no values to check, and a large one is checked in one native
    pass (NOTE [ One pass over the index ] in ember/_native/index.c)."""
    if idx.size and type(idx) is not MetaArray and not _native.index_in_range(idx, size) and \
            (idx.min() < 0 or idx.max() >= size):
        bad = idx[(idx < 0) | (idx >= size)][0]
        return RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    return None


# gather's index values are checked here, where torch's kernel checks them: the native kernel checks each as it
# reads it (NOTE [ One pass over the index ]), and declines on a bad one, which the check below then names
@defop("gather", "GatherBackward0", INDEXING, saves="meta", tags=("index",))
def _gather(a, idx, dim):
    if idx.size >= _native.MIN_SIZE:
        done = _native.gather(a, dim, idx)
        if done is not None:
            return done
    err = index_values_error(idx, dim, a.shape[dim] if a.ndim else 1)
    if err is not None:
        raise err
    # torch lets the index be smaller than the input in the other dims: gather from that leading block
    a = a[tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(idx.shape))]
    return np.take_along_axis(a, idx, axis=dim)


@_gather.derivative_
def _(g, a, idx, dim):
    return dispatch(_scatter_zeros, (g, idx), (dim, tuple(a.shape))), None


_gather.meta_(lambda a, idx, dim: meta_array(idx.shape, a._data.dtype))


@defop("scatter_zeros", "ScatterAddBackward0", INDEXING, saves="none", tags=("index",))
def _scatter_zeros(g, idx, dim, shape):
    z = np.zeros(shape, g.dtype)
    if g.size >= _native.MIN_SIZE and _native.scatter_add(z, dim, idx, g):
        return z
    # indices can repeat (gather of the same element twice): accumulate, never overwrite
    full = np.indices(idx.shape, sparse=True)
    key = tuple(idx if d == dim else full[d] for d in range(len(shape)))
    np.add.at(z, key, g)
    return z


@_scatter_zeros.derivative_
def _(gg, g, idx, dim, shape):
    return dispatch(_gather, (gg, idx), (dim,)), None


_scatter_zeros.meta_(lambda g, idx, dim, shape: meta_array(shape, g._data.dtype))


def scatter_into_zeros(g, index, dim, shape):
    """zeros(shape) with `g` added at `index` along `dim` (a Tensor of indices)."""
    return dispatch(_scatter_zeros, (g, index), (dim, tuple(shape)))


def _from_array(arr):
    from .._tensor import _wrap

    return _wrap(arr)


Tensor._from_array = staticmethod(_from_array)

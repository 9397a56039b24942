"""Rebuild helpers: the functions a pickle calls to turn saved pieces back into tensors.

A checkpoint written by `torch.save` names `torch._utils._rebuild_tensor_v2`, `torch._utils._rebuild_parameter`
and friends; `ember.load` maps each of those names to the function of the same name here (see NOTE [ Global
names in checkpoints ] in serialization.py). They take the same arguments as torch's, with ember storages in
place of torch's. `_rebuild_tensor_from_buffer` is ember's own, used by plain `pickle` (see `_reduce_tensor`).
"""

import operator

import numpy as np

from . import _dtypes
from ._storage import TypedStorage, UntypedStorage, _root
from ._tensor import Tensor, _wrap

__all__ = []


def _element_size(dtype):
    return dtype.itemsize


# ---- tensors over storages ----------------------------------------------------------------------------------

def _view_of_bytes(flat, dtype, storage_offset, size, stride):
    """An array of `dtype` over the 1-D uint8 array `flat` (a storage's bytes), checked to stay inside it, as
    torch's `set_` checks a storage it cannot grow."""
    np_dtype = _dtypes.to_numpy(dtype)
    item = np_dtype.itemsize
    storage_offset = operator.index(storage_offset)
    size = tuple(operator.index(s) for s in size)
    stride = tuple(operator.index(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} vs {len(size)}")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    if 0 in size:
        needed = 0
    else:
        needed = (storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * item
    if needed > flat.size:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {storage_offset}, and itemsize "
            f"{item} requiring a storage size of {needed} are out of bounds for storage of size {flat.size}"
        )
    byte_offset = storage_offset * item
    if needed == 0 and byte_offset > flat.size:  # an empty view may name any offset; NumPy wants it in range
        byte_offset = 0
    return np.ndarray(size, np_dtype, buffer=flat, offset=byte_offset, strides=tuple(s * item for s in stride))


def _storage_bytes(storage):
    if isinstance(storage, TypedStorage):
        return storage._untyped_storage._bytes, storage.dtype
    if isinstance(storage, UntypedStorage):
        return storage._bytes, _dtypes.uint8
    raise TypeError(f"expected a storage, got {type(storage).__name__}")


def _apply_metadata(tensor, metadata):
    """torch records lazily conjugated / negated views in `metadata`; ember materializes them (a new tensor)."""
    if metadata.get("conj"):
        tensor = tensor.conj_physical()
    if metadata.get("neg"):
        tensor = tensor.neg()
    return tensor


def _rebuild_tensor(storage, storage_offset, size, stride):
    flat, dtype = _storage_bytes(storage)
    return _wrap(_view_of_bytes(flat, dtype, storage_offset, size, stride))


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    tensor = _rebuild_tensor(storage, storage_offset, size, stride)
    if metadata:
        tensor = _apply_metadata(tensor, metadata)
    tensor.requires_grad = requires_grad
    return tensor


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    flat, _ = _storage_bytes(storage)
    tensor = _wrap(_view_of_bytes(flat, dtype, storage_offset, size, stride))
    if metadata:
        tensor = _apply_metadata(tensor, metadata)
    tensor.requires_grad = requires_grad
    return tensor


def _set_storage(tensor, storage, storage_offset, size, stride):
    """`tensor.set_(storage, offset, size, stride)`: what a legacy pickle's BUILD of a Tensor does."""
    flat, dtype = _storage_bytes(storage)
    tensor._data = _view_of_bytes(flat, dtype, storage_offset, size, stride)
    return tensor


# ---- parameters and Python state -----------------------------------------------------------------------------

def _parameter_class():
    from .nn.parameter import Parameter

    return Parameter


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return _parameter_class()(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_parameter_class()(data, requires_grad), state)


def _get_obj_state(obj):
    """The Python attributes a user put on a tensor, without ember's own fields (NOTE [ Tensor layout ] keeps
    those in the instance `__dict__` too, under names the Tensor class defines)."""
    d = getattr(obj, "__dict__", None)
    if not d:
        return None
    state = {k: v for k, v in d.items() if not hasattr(Tensor, k)}
    return state or None


def _set_obj_state(obj, state):
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for part in (dict_state, slots_state):
        if part:
            for k, v in part.items():
                setattr(obj, k, v)
    return obj


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    setstate = getattr(type(ret), "__setstate__", None)
    if setstate is not None and setstate is not getattr(Tensor, "__setstate__", None) and state is not None:
        ret.__setstate__(state)
    else:
        ret = _set_obj_state(ret, state)
    return ret


# ---- plain pickle (multiprocessing, copy) --------------------------------------------------------------------

def _flat_of_root(root):
    """The bytes of a storage owner unpickled by `_rebuild_tensor_from_buffer`, as a 1-D uint8 view."""
    if root.flags.c_contiguous:
        flat = root.reshape(-1)
    elif root.flags.f_contiguous:
        flat = root.T.reshape(-1)
    else:
        raise RuntimeError("a pickled tensor storage must be a contiguous array")
    return flat.view(np.uint8) if flat.dtype != np.uint8 else flat


def _deepcopy_array(arr, memo):
    """`copy.deepcopy` of a tensor's array: its storage owner is copied once per deepcopy (as torch copies a
    storage once), so views copied together still share memory, with their offsets and strides."""
    root = _root(arr)
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        return arr.copy()
    key = ("ember.storage", id(root))
    flat = memo.get(key)
    if flat is None:
        flat = memo[key] = _flat_of_root(root).copy()
        memo.setdefault(id(memo), []).append(root)  # keeps id(root) unique for the whole deepcopy
    offset = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(arr.shape, arr.dtype, buffer=flat, offset=offset, strides=arr.strides)


def _rebuild_tensor_from_buffer(root, dtype, byte_offset, size, byte_strides, requires_grad):
    """A tensor viewing the storage owner `root`; views pickled together share the one unpickled `root`."""
    flat = _flat_of_root(root)
    np_dtype = _dtypes.to_numpy(dtype)
    arr = np.ndarray(tuple(size), np_dtype, buffer=flat, offset=byte_offset, strides=tuple(byte_strides))
    tensor = _wrap(arr)
    if requires_grad:
        tensor.requires_grad = True
    return tensor


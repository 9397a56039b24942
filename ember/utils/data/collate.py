"""default_collate and default_convert: turning fetched samples into batches of tensors, as in
``torch.utils.data._utils.collate``.

`collate` walks the structure of the first sample (mappings, named tuples, sequences) and stacks the
leaves with the function registered for their type in `default_collate_fn_map`; extend that dict (or pass
your own map to `collate`) to batch custom types.

Inside a DataLoader worker, tensors are stacked straight into a shared-memory segment, so sending the
batch to the main process copies nothing (NOTE [ Batches travel through shared memory ] in _shared.py).
"""

import collections
import copy
import re

import numpy as np

from . import _shared

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map", "collate_tensor_fn"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def _ember():
    import ember

    return ember


def _rebuild_like(data, items, elem_type):
    """A container like `data` (a Mapping or Sequence) holding `items`: a shallow copy updated in place
    when mutable, else `elem_type(items)`, else a plain dict / list (torch's rule)."""
    is_map = isinstance(data, collections.abc.Mapping)
    try:
        if isinstance(data, (collections.abc.MutableMapping, collections.abc.MutableSequence)):
            clone = copy.copy(data)
            if is_map:
                clone.update(items)
            else:
                for i, v in enumerate(items):
                    clone[i] = v
            return clone
        return elem_type(items)
    except TypeError:
        return dict(items) if is_map else list(items)


def default_convert(data):
    """Convert every NumPy array (and NumPy scalar) inside `data` to a tensor, keeping the structure.

    The collate function of a DataLoader with automatic batching off (``batch_size=None``).

    Example::

        >>> default_convert([np.array([0, 1]), 2])
        [tensor([0, 1]), 2]
    """
    ember = _ember()
    elem_type = type(data)
    if isinstance(data, ember.Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return ember.as_tensor(np.asarray(data))  # a NumPy scalar keeps its dtype (np.float64 is a float)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_like(data, {key: default_convert(data[key]) for key in data}, elem_type)
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # a list, as torch (backwards compatibility)
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_like(data, [default_convert(d) for d in data], elem_type)
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate a list of samples: containers are collated field by field, leaves by the function that
    `collate_fn_map` registers for their type (exact type first, then the first `isinstance` match).

    Args:
        batch (list): the samples.
        collate_fn_map (dict): type (or tuple of types) -> ``fn(batch, *, collate_fn_map)``.
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_like(elem, {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                                    for key in elem}, elem_type)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch, strict=False)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(e) == elem_size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch, strict=False)]
        if isinstance(elem, tuple):
            return columns  # a list, as torch (backwards compatibility)
        return _rebuild_like(elem, columns, elem_type)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Stack tensors along a new first dimension into a fresh contiguous tensor (in shared memory inside a
    worker). Tensors that differ in shape or dtype, or require grad, go through `ember.stack`."""
    if not any(t.requires_grad for t in batch):
        arrays = [t.numpy() for t in batch]
        shape, dtype = arrays[0].shape, arrays[0].dtype
        if all(a.shape == shape and a.dtype == dtype for a in arrays):
            out = _shared.empty((len(arrays),) + shape, dtype)
            np.stack(arrays, out=out)
            return _ember().from_numpy(out)
    return _ember().stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    ember = _ember()
    return collate([ember.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _ember().as_tensor(np.asarray(batch))  # NumPy's dtype, also for np.float64 (a float subclass)


def collate_float_fn(batch, *, collate_fn_map=None):
    ember = _ember()
    return ember.tensor(batch, dtype=ember.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return _ember().tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


def _default_map():
    from ..._tensor import Tensor

    return {
        Tensor: collate_tensor_fn,
        np.ndarray: collate_numpy_array_fn,
        (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
        float: collate_float_fn,
        int: collate_int_fn,
        str: collate_str_fn,
        bytes: collate_str_fn,
    }


default_collate_fn_map = _default_map()


def default_collate(batch):
    """Put each data field into a tensor with an outer batch dimension.

    Type mapping (element type within the batch -> output): Tensor -> Tensor (stacked); NumPy array ->
    Tensor; float -> float64 Tensor; int -> int64 Tensor; str / bytes -> unchanged list;
    ``Mapping[K, V_i]`` -> ``Mapping[K, default_collate([V_1, V_2, ...])]``; named tuple -> the named
    tuple of collated fields; ``Sequence`` -> list of collated columns (a tuple gives a list, as torch).

    Raises RuntimeError "each element in list of batch should be of equal size" for ragged sequences
    and ember.stack's error for tensors of different shapes.

    Example::

        >>> default_collate([(0, 1.0), (2, 3.0)])
        [tensor([0, 2]), tensor([1., 3.], dtype=ember.float64)]
        >>> default_collate([{"A": 0, "B": 1}, {"A": 100, "B": 100}])
        {'A': tensor([  0, 100]), 'B': tensor([  1, 100])}
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)

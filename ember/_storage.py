"""Storages: the flat byte buffer under every tensor.

NOTE [ Storage is derived, not stored ]
A Tensor keeps only its NumPy array. The array is a view whose `.base` chain ends at the array that owns
the memory; that owner's bytes are the storage. So `untyped_storage()`, `storage_offset()` and `data_ptr()`
are computed on demand, and creating a tensor costs no storage object at all. Two tensors share storage
exactly when their arrays share an owner, which is what NumPy views and torch views both mean.
"""

import warnings

import numpy as np

from . import _dtypes, _naming

__all__ = ["UntypedStorage", "TypedStorage"]


def _root(arr):
    """The array that owns `arr`'s memory (the last ndarray on its `.base` chain, looking through the
    DummyArray that np.lib.stride_tricks.as_strided puts in the chain)."""
    while True:
        b = arr.base
        if isinstance(b, np.ndarray):
            arr = b
        elif b is not None and isinstance(getattr(b, "base", None), np.ndarray):
            arr = b.base
        else:
            return arr


def _address(arr):
    return arr.__array_interface__["data"][0]


def _flat_bytes(arr):
    """The whole buffer under `arr` as a 1-D uint8 array sharing its memory."""
    root = _root(arr)
    if root.flags.c_contiguous:
        flat = root.reshape(-1)
    elif root.flags.f_contiguous:
        flat = root.T.reshape(-1)
    elif root.base is None:  # a ufunc's output in a permuted order (3-d and up): neither C nor F contiguous
        extent = 0 if root.size == 0 else \
            (sum((s - 1) * st for s, st in zip(root.shape, root.strides)) + root.itemsize) // root.itemsize
        flat = np.lib.stride_tricks.as_strided(root, shape=(extent,), strides=(root.itemsize,))
    else:  # an owner made with odd strides (np.lib.stride_tricks): its extent starts at its first byte
        lo = _address(root)
        hi = lo + sum((s - 1) * st for s, st in zip(root.shape, root.strides)) + root.itemsize
        return np.ndarray((hi - lo,), np.uint8, buffer=root.base)
    return flat.view(np.uint8) if flat.dtype != np.uint8 else flat


class UntypedStorage:
    """A flat, untyped byte buffer (``tensor.untyped_storage()``)."""

    __module__ = "ember"

    def __init__(self, size_or_buffer=0, *, device=None):
        if isinstance(size_or_buffer, np.ndarray):
            self._bytes = size_or_buffer  # a 1-D uint8 array
        else:
            self._bytes = np.zeros(int(size_or_buffer), np.uint8)
        self.device = _cpu()

    def data_ptr(self):
        return _address(self._bytes)

    def nbytes(self):
        return self._bytes.size

    def size(self):
        return self._bytes.size

    def __len__(self):
        return self._bytes.size

    def element_size(self):
        return 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return UntypedStorage(self._bytes[i])
        return int(self._bytes[i])

    def __setitem__(self, i, v):
        self._bytes[i] = v

    def tolist(self):
        return self._bytes.tolist()

    def fill_(self, value):
        self._bytes.fill(value)
        return self

    def is_shared(self):
        from ._shared_memory import is_shared_array

        return is_shared_array(self._bytes)

    @property
    def is_cuda(self):
        return False

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and other.data_ptr() == self.data_ptr()

    def __hash__(self):
        return self.data_ptr()

    def __repr__(self):
        body = "\n".join(f" {b}" for b in self._bytes.tolist())
        head = f"[{_naming.prefix}.storage.UntypedStorage(device=cpu) of size {self._bytes.size}]"
        return f"{body}\n{head}" if body else head

    __str__ = __repr__


UntypedStorage.__module__ = "ember.storage"


class TypedStorage:
    """The deprecated typed view of a storage (``tensor.storage()``), kept because the seeds print it."""

    __module__ = "ember.storage"

    def __init__(self, untyped, dtype):
        self._untyped_storage = untyped
        self.dtype = dtype
        self.device = untyped.device

    def _array(self):
        return self._untyped_storage._bytes.view(_dtypes.to_numpy(self.dtype))

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def untyped(self):
        return self._untyped_storage

    def size(self):
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    __len__ = size

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def element_size(self):
        return self.dtype.itemsize

    def __getitem__(self, i):
        return self._array()[i].item()

    def __setitem__(self, i, v):
        self._array()[i] = v

    def tolist(self):
        return self._array().tolist()

    def __repr__(self):
        from ._tensor_str import format_storage_items

        body = format_storage_items(self._array(), self.dtype)
        head = (f"[{_naming.prefix}.storage.TypedStorage(dtype={self.dtype}, device=cpu) "
                f"of size {self.size()}]")
        return f"{body}\n{head}" if body else head

    __str__ = __repr__


# ---- the legacy storage classes (torch.FloatStorage, ...: TypedStorage subclasses with a fixed dtype) ----------


class _LegacyStorage(TypedStorage):
    """`ember.FloatStorage(3)` (uninitialised), `ember.FloatStorage([1, 2])` (values): a TypedStorage of the
    class's dtype, as torch's legacy storage classes are."""

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None):
        import numpy as np

        d = type(self).dtype
        if wrap_storage is not None:
            super().__init__(wrap_storage, d)
            return
        data = args[0] if args else 0
        if isinstance(data, int):
            super().__init__(UntypedStorage(data * d.itemsize), d)
            return
        values = np.asarray(list(data), dtype=_dtypes.to_numpy(d))
        super().__init__(UntypedStorage(values.size * d.itemsize), d)
        self._array()[:] = values


_LEGACY_STORAGES = {"Storage": "float32", "FloatStorage": "float32", "DoubleStorage": "float64",
                    "HalfStorage": "float16", "BFloat16Storage": "bfloat16", "LongStorage": "int64",
                    "IntStorage": "int32", "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
                    "BoolStorage": "bool", "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128"}
legacy_storages = {}
for _name, _dt in _LEGACY_STORAGES.items():
    if _name != "Storage":
        legacy_storages[_name] = type(_name, (_LegacyStorage,), {"dtype": getattr(_dtypes, _dt), "__module__": "ember"})
legacy_storages["Storage"] = legacy_storages["FloatStorage"]  # (torch.Storage is torch.FloatStorage's alias)


_warned = [False]


def warn_typed_storage():
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
            "storage class. This should only matter to you if you are using storages directly.  To access "
            "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
            UserWarning,
            stacklevel=3,
        )


def _cpu():
    from ._device import cpu

    return cpu

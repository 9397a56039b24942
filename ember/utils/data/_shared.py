"""Shared-memory transport of DataLoader batches from worker processes to the main process.

NOTE [ Batches travel through shared memory ]
A worker never pickles tensor data. `collate_tensor_fn` stacks a batch straight into a fresh POSIX
shared-memory segment (`empty`), and `dumps` pickles the batch with a reducer that turns every tensor
into a handle: (segment name, segment size, byte offset, dtype, shape, byte strides). A tensor that is
not already in one of this worker's segments (custom collate_fn, ``batch_size=None``) is first copied
into a new segment, keeping its strides. The payload is a few hundred bytes
whatever the batch size. The main process `loads` it: each segment is opened, mapped and *unlinked at
once* (the mapping stays valid, the name is gone), and tensors are NumPy views of the mapping wrapped
with no copy, so a batch's memory is freed when its last tensor dies.

Every segment name starts with the iterator's prefix (``/ember_dl_<main pid>_<n>_``), then the worker id
and a counter. Ownership is explicit, so nothing leaks:
- before a payload is sent, the worker owns its segments; if fetching or pickling fails, or a collated
  tensor is dropped by a custom collate_fn, the worker unlinks them (`settle`);
- once sent, the main process owns them: it unlinks them when it loads the payload, or when it discards
  one (shutdown drain, persistent-worker resume);
- a worker that dies between creating and sending leaves names only the main process knows the prefix
  of: at shutdown it unlinks whatever is left under its prefix (`unlink_prefix`, via /dev/shm).

Segments are created with `_posixshmem` (the module behind multiprocessing.shared_memory) rather than
`SharedMemory`, whose resource tracker in Python < 3.13 unlinks segments it did not create and warns
about "leaked" ones that were handed over on purpose.
"""

import io
import itertools
import mmap
import os
import pickle
import threading

import numpy as np

from ..._storage import _address, _flat_bytes, _root
from ..._tensor import Tensor, _wrap

try:
    import _posixshmem
except ImportError:  # Windows: no POSIX shared memory
    _posixshmem = None

_SHM_DIR = "/dev/shm"
_iterator_ids = itertools.count()


class _Segment(mmap.mmap):
    """A mapping of one shared-memory segment; `name` is its POSIX name."""


# ---- naming and cleanup (main process) ----------------------------------------------------------------


def available():
    return _posixshmem is not None


def make_prefix():
    """A name prefix unique to one DataLoader iterator of this process."""
    return f"/ember_dl_{os.getpid()}_{next(_iterator_ids)}_"


def _unlink(name):
    try:
        _posixshmem.shm_unlink(name)
    except FileNotFoundError:
        pass


def unlink_prefix(prefix):
    """Unlink every segment whose name starts with `prefix` (left by a worker that died mid-batch)."""
    if not os.path.isdir(_SHM_DIR):
        return
    stem = prefix.lstrip("/")
    for entry in os.listdir(_SHM_DIR):
        if entry.startswith(stem):
            _unlink("/" + entry)


# ---- worker side: allocate, pickle to handles ---------------------------------------------------------

_prefix = None  # this worker's name prefix; None outside a worker
_counter = itertools.count()
_pending = {}  # name -> segment, created by this worker and not yet handed to the main process


def init_worker(prefix):
    global _prefix, _counter
    _prefix = prefix
    _counter = itertools.count()
    _pending.clear()


def _create(nbytes):
    """A new segment of `nbytes` (>= 1) bytes and a uint8 array over all of it."""
    name = f"{_prefix}{next(_counter)}"
    fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        os.ftruncate(fd, nbytes)
        seg = _Segment(fd, nbytes)
    except BaseException:
        _unlink(name)
        raise
    finally:
        os.close(fd)
    seg.name = name
    _pending[name] = seg
    return np.frombuffer(seg, np.uint8)


def empty(shape, dtype):
    """An uninitialised C-contiguous array in a new segment of this worker (a plain array if empty)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes == 0 or _prefix is None:
        return np.empty(shape, dtype)
    return _create(nbytes).view(dtype).reshape(shape)


def _own_segment(root):
    """The not-yet-sent segment of this worker under `root`, or None."""
    b = root.base
    seg = b.obj if isinstance(b, memoryview) else None
    return seg if isinstance(seg, _Segment) and seg.name in _pending else None


def _into_segment(arr):
    """(root, view) with `arr`'s values in a new segment, with its strides: the bytes from its first to
    its last element are copied (torch ships the tensor's whole storage). A NumPy array with negative
    strides is made contiguous."""
    span = arr.itemsize + sum((n - 1) * s for n, s in zip(arr.shape, arr.strides, strict=False))
    if arr.flags.c_contiguous or min(arr.strides) < 0:
        root = _create(arr.nbytes)
        view = root.view(arr.dtype).reshape(arr.shape)
        view[...] = arr
        return root, view
    flat = _flat_bytes(arr)
    start = _address(arr) - _address(flat)
    root = _create(span)
    root[...] = flat[start:start + span]
    return root, np.ndarray(arr.shape, arr.dtype, buffer=root, strides=arr.strides)


_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
             "support crossing process boundaries.  If you just want to transfer the data, call detach() on "
             "the tensor before serializing (e.g., putting it on the queue).")


class _HandlePickler(pickle.Pickler):
    """Pickles tensors as shared-memory handles (NOTE [ Batches travel through shared memory ])."""

    def __init__(self, file):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.used = set()

    def reducer_override(self, obj):
        if not isinstance(obj, Tensor):
            return NotImplemented
        if obj.requires_grad and not obj.is_leaf:
            raise RuntimeError(_NON_LEAF)
        arr = obj._data
        if arr.size == 0:
            return _rebuild_empty, (arr.shape, arr.dtype, obj.requires_grad, type(obj))
        root = _root(arr)
        seg = _own_segment(root)
        if seg is None:
            root, arr = _into_segment(arr)
            seg = _own_segment(root)
        self.used.add(seg.name)
        return _rebuild_tensor, (seg.name, root.nbytes, _address(arr) - _address(root), arr.dtype, arr.shape,
                                 arr.strides, obj.requires_grad, type(obj))


def dumps(obj):
    """Pickle a batch for the main process; hands over the segments it references and unlinks the
    other segments this worker created since the last call (see `settle`)."""
    buf = io.BytesIO()
    pickler = _HandlePickler(buf)
    try:
        pickler.dump(obj)
    except BaseException:
        settle()
        raise
    settle(keep=pickler.used)
    return buf.getvalue()


def settle(keep=()):
    """Unlink this worker's pending segments except those in `keep`, which now belong to the receiver."""
    for name in list(_pending):
        if name not in keep:
            _unlink(name)
    _pending.clear()


# ---- main side: map handles back to tensors ------------------------------------------------------------

_loading = threading.local()  # .opened: name -> root array for the payload being loaded; .discard: bool


def _open(name, nbytes):
    """Map segment `name` and unlink it: the mapping lives as long as the arrays over it."""
    fd = _posixshmem.shm_open(name, os.O_RDWR, 0o600)
    try:
        seg = _Segment(fd, nbytes)
    finally:
        os.close(fd)
        _unlink(name)
    return np.frombuffer(seg, np.uint8)


def _rebuild_tensor(name, nbytes, offset, dtype, shape, strides, requires_grad, cls):
    if getattr(_loading, "discard", False):
        _unlink(name)
        return None
    opened = getattr(_loading, "opened", None)
    if opened is None:
        opened = {}
    root = opened.get(name)
    if root is None:
        root = opened[name] = _open(name, nbytes)
    t = _wrap(np.ndarray(shape, dtype, buffer=root, offset=offset, strides=strides), cls)
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_empty(shape, dtype, requires_grad, cls):
    t = _wrap(np.empty(shape, dtype), cls)
    return t.requires_grad_(True) if requires_grad else t


def loads(payload):
    """The batch in `payload`, its tensors mapped from shared memory (zero copy)."""
    _loading.opened = {}
    try:
        return pickle.loads(payload)
    finally:
        _loading.opened = None


def discard(payload):
    """Drop a payload that will not be used, unlinking the segments it references."""
    _loading.discard = True
    try:
        pickle.loads(payload)
    except Exception:  # noqa: BLE001 - an undecodable payload leaves its names to unlink_prefix
        pass
    finally:
        _loading.discard = False


# ---- spawn / forkserver start-up: datasets by value -----------------------------------------------------


class _ValuePickler(pickle.Pickler):
    """Pickles tensors by value (their NumPy data), for a dataset sent to a spawned worker."""

    def reducer_override(self, obj):
        if not isinstance(obj, Tensor):
            return NotImplemented
        if obj.requires_grad and not obj.is_leaf:
            raise RuntimeError(_NON_LEAF)
        return _rebuild_from_array, (obj._data, obj.requires_grad, type(obj))


def _rebuild_from_array(arr, requires_grad, cls):
    t = _wrap(arr, cls)
    return t.requires_grad_(True) if requires_grad else t


def dumps_by_value(obj):
    buf = io.BytesIO()
    _ValuePickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()

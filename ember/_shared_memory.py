"""Tensor storage in memory shared between processes (`share_memory_`, `is_shared`, and sending tensors
through multiprocessing queues).

NOTE [ Shared storages ]
A storage is the buffer under a tensor's NumPy array (NOTE [ Storage is derived, not stored ]).
`share_memory_()` copies that whole buffer once into a shared mapping (`SharedMapping`, an `mmap.mmap`) and
points the tensor's array at the same offset and strides inside it; the tensor then `is_shared()`, and any
process that maps the same memory sees its writes. Two sharing strategies, as torch's:
- "file_descriptor" (Linux default): an anonymous memory file (`memfd_create`); another process receives
  the descriptor itself (multiprocessing's `DupFd`), so no name ever exists to leak;
- "file_system": a named POSIX segment (`/dev/shm/ember_<pid>_<n>`); another process opens it by name;
  the creating process unlinks the name when its own mapping is freed.
Sending a tensor through a `multiprocessing` queue or as a `Process` argument (ember.multiprocessing
registers the reducer, as torch.multiprocessing does) moves its storage into shared memory first, as
torch does, and sends a handle; the receiver maps the same memory, so in-place writes on either side are
seen by the other. Handles of one storage map once per process (`_mapped`), so views sent separately
still share memory on the receiving side.

A limit that torch does not have: ember's views each hold their own NumPy view, so a view of a tensor made
*before* `share_memory_()` still points at the old, private buffer. Each moved buffer is remembered
(`_moved`), and such a view is re-pointed into the shared copy the next time it is shared, sent or asked
`is_shared()`; writes made through it in between went to the old buffer and are not carried over.
"""

import itertools
import mmap
import os
import weakref

import numpy as np

from ._storage import _address, _flat_bytes, _root

try:
    import _posixshmem
except ImportError:  # no POSIX shared memory (Windows)
    _posixshmem = None

_counter = itertools.count()
_mapped = weakref.WeakValueDictionary()  # storage key -> root uint8 array over its mapping, in this process
_moved = {}  # id of a private root array -> the shared root its bytes were copied to (while it lives)


class SharedMapping(mmap.mmap):
    """A mapping of shared memory: `key` names its storage across processes; `fd` (file_descriptor) or
    `name` (file_system) is how another process maps it."""


def is_shared_array(arr):
    """Whether `arr`'s buffer lives in shared memory (ours, or a DataLoader batch's segment), or was moved
    there (see the limit in NOTE [ Shared storages ])."""
    root = _root(arr)
    if id(root) in _moved:
        return True
    base = root.base
    obj = base.obj if isinstance(base, memoryview) else None
    if isinstance(obj, SharedMapping):
        return True
    return type(obj).__name__ == "_Segment"  # ember.utils.data._shared: worker batches in /dev/shm


def _strategy():
    import sys

    mp = sys.modules.get("ember.multiprocessing")
    return mp.get_sharing_strategy() if mp is not None else (
        "file_system" if sys.platform in ("darwin", "win32") else "file_descriptor")


def _unlink(name):
    try:
        _posixshmem.shm_unlink(name)
    except (FileNotFoundError, OSError):
        pass


def _new_mapping(nbytes, strategy):
    key = (os.getpid(), next(_counter))
    if strategy == "file_descriptor" and hasattr(os, "memfd_create"):
        fd = os.memfd_create(f"ember_{key[0]}_{key[1]}")
        os.ftruncate(fd, nbytes)
        m = SharedMapping(fd, nbytes)
        m.fd, m.name = fd, None
        weakref.finalize(m, os.close, fd)
    else:
        name = f"/ember_{key[0]}_{key[1]}"
        fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, nbytes)
            m = SharedMapping(fd, nbytes)
        finally:
            os.close(fd)
        m.fd, m.name = None, name
        weakref.finalize(m, _unlink, name)
    m.key = key
    return m


def share_(t):
    """Move tensor `t`'s storage into shared memory (no-op when it is already there). See NOTE [ Shared
    storages ]."""
    arr = t._data
    if t.device.type != "cpu":
        raise RuntimeError(("_share_fd_" if _strategy() == "file_descriptor" else "_share_filename_")
                           + ": only available on CPU")
    old_root = _root(arr)
    flat = _flat_bytes(arr)
    root = _moved.get(id(old_root))
    if root is None:
        if is_shared_array(arr):
            return t
        mapping = _new_mapping(max(flat.size, 1), _strategy())
        root = np.frombuffer(mapping, np.uint8)
        root[:flat.size] = flat
        _mapped[mapping.key] = root
        _moved[id(old_root)] = root
        weakref.finalize(old_root, _moved.pop, id(old_root), None)
    t._data = np.ndarray(arr.shape, arr.dtype, buffer=root, offset=_address(arr) - _address(flat),
                         strides=arr.strides)
    return t


# ---- sending tensors to other processes ------------------------------------------------------------------

_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
             "support crossing process boundaries.  If you just want to transfer the data, call detach() on "
             "the tensor before serializing (e.g., putting it on the queue).")


def reduce_tensor(t):
    """The reducer multiprocessing pickles a tensor with: its storage moved to shared memory, sent as a handle."""
    from multiprocessing.reduction import DupFd

    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(_NON_LEAF)
    share_(t)
    arr = t._data
    root = _root(arr)
    mapping = root.base.obj
    if not isinstance(mapping, SharedMapping):  # a DataLoader batch segment: re-share into our own mapping
        t._data = arr.copy()
        return reduce_tensor(t)
    handle = DupFd(mapping.fd) if mapping.fd is not None else mapping.name
    return rebuild_tensor, (mapping.key, handle, len(mapping), _address(arr) - _address(root), arr.dtype,
                            arr.shape, arr.strides, t.requires_grad, type(t))


def rebuild_tensor(key, handle, nbytes, offset, dtype, shape, strides, requires_grad, cls):
    """Map (or reuse this process's mapping of) a shared storage and wrap a tensor over it."""
    from ._tensor import _wrap

    root = _mapped.get(key)
    if root is None:
        if isinstance(handle, str):  # file_system: open the segment by name
            fd = _posixshmem.shm_open(handle, os.O_RDWR, 0o600)
            try:
                mapping = SharedMapping(fd, nbytes)
            finally:
                os.close(fd)
            mapping.fd, mapping.name = None, handle
        else:  # file_descriptor: the received descriptor, kept so that this process can send the storage on
            fd = handle.detach()
            mapping = SharedMapping(fd, nbytes)
            mapping.fd, mapping.name = fd, None
            weakref.finalize(mapping, os.close, fd)
        mapping.key = key
        root = np.frombuffer(mapping, np.uint8)
        _mapped[key] = root
    t = _wrap(np.ndarray(shape, dtype, buffer=root, offset=offset, strides=strides), cls)
    return t.requires_grad_(True) if requires_grad else t


def register_reductions():
    """Make multiprocessing pickle ember tensors (and Parameters) as shared-memory handles."""
    from multiprocessing.reduction import ForkingPickler

    from ._tensor import Tensor
    from .nn.parameter import Parameter

    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)

"""ember.save / ember.load: checkpoints in PyTorch's own file format, loaded safely by default.

A file written by `ember.save` is a file written by `torch.save` (torch loads it, and ember loads torch's):
a zip archive (see NOTE [ Zip layout of a checkpoint ] in _zip_container.py) holding `data.pkl`, a pickle of
the saved object in which every storage is replaced by a persistent id, and one raw record per storage.

NOTE [ Storages in a checkpoint ]
A tensor pickles as `torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
OrderedDict())`, and the storage as the persistent id `('storage', torch.<Dtype>Storage, key, 'cpu', numel)`
whose bytes are the record `data/<key>`. Keys count from "0" in the order storages are first met. A storage is
identified by its bytes (data pointer and size), which in ember means the array that owns the tensor's memory
(NOTE [ Storage is derived, not stored ]): every view of one tensor names the same key, so a saved view keeps
its offset and strides and two tensors sharing memory still share it after loading. Loading rebuilds one
uint8 array per key and NumPy views into it. As in torch, one storage saved under two dtypes is an error.

NOTE [ Global names in checkpoints ]
The pickle names torch's objects (`torch._utils _rebuild_tensor_v2`, `torch FloatStorage`, `torch float32`,
`torch Size`, `torch.nn.parameter Parameter`, ...), never ember's, so torch can read it. `_Pickler` writes
those names for ember's counterparts, and for any other ember class or function the same path with `torch`
in place of `ember`; `load` maps every `torch...` name back to ember. The C pickler cannot be told to write a
name other than the object's own, so saving uses `pickle`'s Python Pickler; only `data.pkl` (metadata, not
tensor bytes) goes through it, and it is byte-identical to what torch writes.

NOTE [ Atomic saves ]
Saving to a path writes a temporary file in the same directory, flushes and fsyncs it, then renames it over
the target (`os.replace`, atomic on POSIX and Windows). A crash or an exception mid-save leaves the previous
file untouched and no temporary file behind.
"""

import copyreg
import io
import os
import pickle
import sys
import zlib
from collections import OrderedDict

import numpy as np

from . import _dtypes, _utils
from . import _serialization_options as _opts
from . import _weights_only_unpickler as _wo
from ._device import device as _device
from ._naming import named
from ._serialization_options import (  # area M: torch.serialization's settings and helpers
    LoadEndianness,
    SourceChangeWarning,
    check_module_version_greater_or_equal,
    get_crc32_options,
    get_default_load_endianness,
    location_tag,
    mkdtemp,
    normalize_storage_type,
    register_package,
    set_crc32_options,
    set_default_load_endianness,
    skip_data,
    storage_to_tensor_type,
    validate_cuda_device,
    validate_hpu_device,
)
from ._storage import TypedStorage, UntypedStorage, _address, _flat_bytes, _root
from ._tensor import Tensor
from ._zip_container import ZipReader, ZipWriter, archive_name

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint", "StorageType", "default_restore_location",
           "get_default_mmap_options", "set_default_mmap_options",
           # area M: the rest of torch.serialization's names
           "SourceChangeWarning", "mkdtemp", "register_package", "check_module_version_greater_or_equal",
           "validate_cuda_device", "validate_hpu_device", "location_tag", "normalize_storage_type",
           "storage_to_tensor_type", "LoadEndianness", "get_crc32_options", "set_crc32_options",
           "get_default_load_endianness", "set_default_load_endianness", "skip_data"]

DEFAULT_PROTOCOL = 2
_package_registry = _opts._package_registry  # (torch's name for it: [(priority, tagger, deserializer)])
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `ember.load` "
    "from `False` to `True`. Re-running `ember.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of ember.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)

# ---- storage types ------------------------------------------------------------------------------------------

_STORAGE_NAMES = {"float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
                  "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
                  "uint8": "ByteStorage", "bool": "BoolStorage", "bfloat16": "BFloat16Storage",
                  "complex128": "ComplexDoubleStorage", "complex64": "ComplexFloatStorage"}
_STORAGE_DTYPES = {v: k for k, v in _STORAGE_NAMES.items()}


class StorageType:
    """What the name `torch.FloatStorage` (and its kin) in a checkpoint stands for: a storage dtype."""

    _cache = {}

    def __new__(cls, name):
        st = cls._cache.get(name)
        if st is None:
            st = object.__new__(cls)
            st.name = name
            st._dtype = getattr(_dtypes, _STORAGE_DTYPES[name])
            cls._cache[name] = st
        return st

    @property
    def dtype(self):
        return self._dtype

    def __str__(self):
        return f"StorageType(dtype={self.dtype})"


def _get_layout(name):
    """What `torch.serialization._get_layout('torch.strided')` in a pickle stands for: ember's layout value."""
    return name.split(".")[-1]


# ---- the user's allow-list for weights_only loading -------------------------------------------------------

def clear_safe_globals():
    """Clears the list of globals that are safe for ``weights_only`` load."""
    _wo._clear_safe_globals()


def get_safe_globals():
    """Returns the list of user-added globals that are safe for ``weights_only`` load."""
    return _wo._get_safe_globals()


def add_safe_globals(safe_globals):
    """Marks the given globals as safe for ``weights_only`` load.

    Each item is a class or function, or a tuple ``(obj, "module.name")`` naming it as the checkpoint does.

    Example:
        >>> class MyTensor(ember.Tensor):
        ...     pass
        >>> ember.serialization.add_safe_globals([MyTensor])
    """
    _wo._add_safe_globals(safe_globals)


class safe_globals(_wo._safe_globals):
    """Context manager that adds certain globals as safe for ``weights_only`` load (removed on exit).

    Example:
        >>> with ember.serialization.safe_globals([MyTensor]):
        ...     ember.load("checkpoint.pt")
    """


def get_unsafe_globals_in_checkpoint(f):
    """The dotted names of the globals in checkpoint `f` that ``weights_only`` loading would refuse."""
    with _open_for_read(f) as opened:
        pickle_bytes = ZipReader(opened).get_record("data.pkl")
    names = set()
    for op, arg, _ in __import__("pickletools").genops(pickle_bytes):
        if op.name == "GLOBAL":
            module, name = arg.split(" ", 1)
            if (module, name) in _wo.NAME_MAPPING:
                module, name = _wo.NAME_MAPPING[(module, name)]
            names.add(f"{_wo.IMPORT_MAPPING.get(module, module)}.{name}")
    safe = set(_wo._get_allowed_globals()) | set(_wo._get_user_allowed_globals()) | _wo._TORCH_ONLY
    return sorted(names - safe)


_mmap_flags = [None]


def get_default_mmap_options():
    """The mmap flags `load(..., mmap=True)` uses: ``mmap.MAP_PRIVATE`` unless set otherwise."""
    import mmap

    return _mmap_flags[0] if _mmap_flags[0] is not None else mmap.MAP_PRIVATE


class set_default_mmap_options:
    """Context manager (or call) setting the mmap flags of `load(..., mmap=True)`: MAP_PRIVATE or MAP_SHARED."""

    def __init__(self, flags):
        import mmap

        if flags not in (mmap.MAP_PRIVATE, mmap.MAP_SHARED):
            raise ValueError(
                "Invalid argument in function set_default_mmap_options, expected mmap.MAP_PRIVATE or mmap.MAP_SHARED,"
                f" but got {flags}"
            )
        self.prev = _mmap_flags[0]
        _mmap_flags[0] = flags

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _mmap_flags[0] = self.prev


# ---- pickling with torch's names (NOTE [ Global names in checkpoints ]) --------------------------------------

def _torch_name(obj, name):
    """(module, name) under which a checkpoint names `obj`, or None if `obj` keeps its own name."""
    if isinstance(obj, _dtypes.dtype):
        return "torch", obj.name
    if isinstance(obj, StorageType):
        return "torch", obj.name
    if obj is _utils._rebuild_from_type_v2:
        return "torch._tensor", "_rebuild_from_type_v2"
    module = getattr(obj, "__module__", None)
    if isinstance(module, str) and (module == "ember" or module.startswith("ember.")):
        return "torch" + module[5:], name or getattr(obj, "__qualname__", None) or obj.__name__
    return None


class _Pickler(pickle._Pickler):
    """`pickle`'s Python Pickler writing torch's global names and storages as persistent ids."""

    def __init__(self, file, protocol, persistent_id):
        super().__init__(file, protocol)
        self.persistent_id = persistent_id  # called for every object: no extra method layer

    def reducer_override(self, obj):
        cls = type(obj)
        if cls is Tensor or isinstance(obj, Tensor):
            return _reduce_for_save(obj)
        if cls is StorageType:
            return obj.name
        if cls is _device:  # torch's device pickles its type as a fresh string, and no None index
            kind = obj.type.encode().decode()
            return _device, (kind,) if obj.index is None else (kind, obj.index)
        return NotImplemented

    def save_global(self, obj, name=None):
        target = _torch_name(obj, name)
        if target is None:
            return super().save_global(obj, name)
        module, qualname = target
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch = pickle._Pickler.dispatch.copy()
    dispatch[type(save_global)] = save_global  # functions: the base table holds the base method


def _reduce_for_save(t):
    """How `ember.save` pickles tensor `t`: exactly as torch's `Tensor.__reduce_ex__` / `Parameter.__reduce_ex__`."""
    if type(t) is Tensor and not t.__dict__:  # the common case, kept short
        return _reduce_plain_tensor(t)
    from .nn.parameter import Parameter

    state = _utils._get_obj_state(t)
    if isinstance(t, Parameter):
        data = _wrap_plain(t)
        if not state:
            return _utils._rebuild_parameter, (data, t.requires_grad, OrderedDict())
        return _utils._rebuild_parameter_with_state, (data, t.requires_grad, OrderedDict(), state)
    dtype = t.dtype
    meta = (t.storage_offset(), tuple(t.shape), t.stride(), t.requires_grad, OrderedDict())
    if dtype.name in _STORAGE_NAMES:
        func, args = _utils._rebuild_tensor_v2, (TypedStorage(t.untyped_storage(), dtype),) + meta
    else:  # dtypes newer than typed storages (uint16 ...): an untyped storage and the dtype, as torch does
        func, args = _utils._rebuild_tensor_v3, (t.untyped_storage(),) + meta + (dtype,)
    if type(t) is Tensor and not state:
        return func, args
    return _utils._rebuild_from_type_v2, (func, type(t), args, state)


def _reduce_plain_tensor(t):
    a = t._data
    dtype, item = t.dtype, a.itemsize
    flat = _flat_bytes(a)
    stride = tuple(s // item for s in a.strides) if a.size else t.stride()  # empty: torch's strides
    meta = ((_address(a) - _address(flat)) // item, a.shape, stride, False, OrderedDict())
    if dtype.name in _STORAGE_NAMES:
        return _utils._rebuild_tensor_v2, (TypedStorage(UntypedStorage(flat), dtype),) + meta
    return _utils._rebuild_tensor_v3, (UntypedStorage(flat),) + meta + (dtype,)


def _wrap_plain(t):
    from ._tensor import _wrap

    return _wrap(t._data)


class _StorageRegistry:
    """The persistent ids of one save: a key per distinct storage (NOTE [ Storages in a checkpoint ])."""

    def __init__(self, legacy=False):
        self.storages = {}  # key -> (1-D uint8 array of the storage's bytes, dtype)
        self._keys = {}  # storage identity -> key
        self._dtypes = {}  # data pointer -> dtype saved under
        self._keep = []  # owners of empty storages, alive so that their ids stay unique
        self._legacy = legacy

    def __call__(self, obj):
        cls = type(obj)
        if cls is not TypedStorage and cls is not UntypedStorage:
            return None
        if cls is TypedStorage:
            flat, dtype = obj._untyped_storage._bytes, obj.dtype
            storage_type, numel = StorageType(_STORAGE_NAMES[dtype.name]), flat.size // dtype.itemsize
        else:
            flat, dtype = obj._bytes, _dtypes.uint8
            storage_type, numel = UntypedStorage, flat.size
        if flat.size:
            ptr = _address(flat)
            if self._dtypes.setdefault(ptr, dtype) is not dtype:
                raise RuntimeError(
                    "Cannot save multiple tensors or storages that view the same data as different types")
            ident = (ptr, flat.size)
        else:
            self._keep.append(_root(flat))
            ident = ("empty", id(self._keep[-1]))
        key = self._keys.get(ident)
        if key is None:
            key = self._keys[ident] = str(len(self._keys))
            self.storages[key] = (flat, dtype)
        pid = ("storage", storage_type, key, "cpu", numel)
        return pid + (None,) if self._legacy else pid


# ---- save --------------------------------------------------------------------------------------------------

def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True)

    Saves an object to a disk file, in PyTorch's format (`torch.load` reads it).

    Args:
        obj: saved object: tensors, Parameters, state_dicts, nested containers, any picklable object.
        f: a file-like object (has to implement write and flush) or a string or os.PathLike object containing
           a file name. Saving to a path is atomic (NOTE [ Atomic saves ]).
        pickle_module: module used for pickling metadata and objects
        pickle_protocol: can be specified to override the default protocol

    Example:
        >>> x = ember.tensor([0, 1, 2, 3, 4])
        >>> ember.save(x, "tensor.pt")
        >>> buffer = io.BytesIO()
        >>> ember.save(x, buffer)
    """
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")

    def write(fh, name):
        if _use_new_zipfile_serialization:
            _save(obj, ZipWriter(fh, name), pickle_module, pickle_protocol, _disable_byteorder_record)
        else:
            if _opts.skipping_data():
                raise RuntimeError("Cannot use skip_data=True with _use_new_zipfile_serialization=False")
            _legacy_save(obj, fh, pickle_module, pickle_protocol)

    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        name = archive_name(path) if _use_new_zipfile_serialization else None
        _atomic_write(path, lambda fh: write(fh, name))
        return
    if not callable(getattr(f, "write", None)):
        raise TypeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute 'write'")
    write(f, "archive")
    f.flush()


def _pickle_with_ids(obj, pickle_module, protocol, registry):
    buf = io.BytesIO()
    if pickle_module is pickle or getattr(pickle_module, "Pickler", None) is pickle.Pickler:
        _Pickler(buf, protocol, registry).dump(obj)
    else:  # e.g. dill: its own Pickler, with torch's names only where it lets us hook them
        class _Custom(pickle_module.Pickler):
            def persistent_id(self, o):
                return registry(o)

            def reducer_override(self, o):
                return _reduce_for_save(o) if isinstance(o, Tensor) else NotImplemented

        _Custom(buf, protocol=protocol).dump(obj)
    return buf.getvalue()


def _save(obj, zip_file, pickle_module, pickle_protocol, _disable_byteorder_record):
    registry = _StorageRegistry()
    zip_file.compute_crc32 = _opts.get_crc32_options()
    zip_file.write_record("data.pkl", _pickle_with_ids(obj, pickle_module, pickle_protocol, registry))
    zip_file.write_record(".format_version", b"1")
    zip_file.write_record(".storage_alignment", b"64")
    if not _disable_byteorder_record:
        zip_file.write_record("byteorder", sys.byteorder.encode())
    crc = 0
    skip = _opts.skipping_data()
    for key, (flat, _) in registry.storages.items():
        zip_file.write_record(f"data/{key}", np.zeros_like(flat) if skip else flat)
        crc = zlib.crc32(key.encode(), crc)
    zip_file.write_record("version", b"3\n")
    nonce = int.from_bytes(os.urandom(8), "little")
    zip_file.write_record(".data/serialization_id", f"{crc:020d}{nonce:020d}".encode())
    zip_file.finish()


def _atomic_write(path, write):
    """Run `write(file)` on a temporary file next to `path`, then rename it over `path` (NOTE [ Atomic saves ])."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    parent = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {os.path.dirname(target) or parent} does not exist.")
    if os.path.isdir(target):
        raise RuntimeError(f"open file failed with strerror: {os.strerror(21)}")
    tmp = os.path.join(parent, f".{os.path.basename(target)}.{os.urandom(6).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(target):
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _legacy_save(obj, f, pickle_module, pickle_protocol):
    """torch's pre-1.6 format (`_use_new_zipfile_serialization=False`): a stream of pickles, then the
    storages, each as an 8-byte element count and its bytes."""
    registry = _StorageRegistry(legacy=True)
    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    pickle.dump(MAGIC_NUMBER, f, protocol=pickle_protocol)
    pickle.dump(PROTOCOL_VERSION, f, protocol=pickle_protocol)
    pickle.dump(sys_info, f, protocol=pickle_protocol)
    f.write(_pickle_with_ids(obj, pickle_module, pickle_protocol, registry))
    keys = sorted(registry.storages)
    pickle.dump(keys, f, protocol=pickle_protocol)
    for key in keys:
        flat, dtype = registry.storages[key]
        f.write(np.int64(flat.size // dtype.itemsize).tobytes())
        f.write(memoryview(flat))
    f.flush()


# ---- load --------------------------------------------------------------------------------------------------

def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """load(f, map_location=None, pickle_module=pickle, *, weights_only=True, mmap=None, **pickle_load_args)

    Loads an object saved with `ember.save` or `torch.save` (torch 1.6+ zip files and the older format).

    Args:
        f: a file-like object (has to implement `read`, `readline`, `tell`, and `seek`), or a string or
            os.PathLike object containing a file name
        map_location: a function, `ember.device`, string or a dict specifying how to remap storage locations
            (everything lands on the CPU; a CUDA location fails as on a CPU-only torch)
        pickle_module: module used for unpickling metadata and objects (only with ``weights_only=False``)
        weights_only: restrict unpickling to tensors, primitive types, dicts and what
            `ember.serialization.add_safe_globals` allows (the default; see NOTE [ Weights-only unpickling ])
        mmap: map the file instead of reading the storages into memory (f must be a path)
        pickle_load_args: keyword arguments for `pickle_module.Unpickler`, e.g. ``encoding=...``

    Example:
        >>> ember.load("tensors.pt", map_location=ember.device("cpu"))
        >>> ember.load("tensors.pt", map_location=lambda storage, loc: storage)
    """
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        import warnings

        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors"):
        return _load_safetensors(os.fspath(f), map_location)
    unpickler = _wo if weights_only else pickle_module
    with _open_for_read(f) as opened:
        if _is_zipfile(opened):
            reader = ZipReader(opened)
            if reader.has_record("constants.pkl"):
                if weights_only:
                    raise RuntimeError(named("Cannot use ``weights_only=True`` with TorchScript archives "
                                             "passed to ``ember.load``. " + UNSAFE_MESSAGE))
                raise RuntimeError(named("ember.load received a TorchScript archive, which ember cannot run"))
            overall = _map_file(f) if mmap else None
            return _with_wo_message(weights_only, _load, reader, map_location, unpickler, overall,
                                    **pickle_load_args)
        if mmap:
            f_name = "" if not isinstance(f, str) else f"{f}, "
            raise RuntimeError(named(
                "mmap can only be used with files saved with "
                f"`ember.save({f_name}_use_new_zipfile_serialization=True), "
                "please ember.save your checkpoint with this option in order to use mmap."
            ))
        return _with_wo_message(weights_only, _legacy_load, opened, map_location, unpickler, **pickle_load_args)


def _with_wo_message(weights_only, fn, *args, **kwargs):
    if not weights_only:
        return fn(*args, **kwargs)
    try:
        return fn(*args, **kwargs)
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(named(_get_wo_message(str(e)))) from None


def _get_wo_message(message):
    """torch's wording around a refused weights-only load: what failed, and the two ways forward."""
    import re

    has_unsafe_global = re.search(r"GLOBAL (\S+) was not an allowed global by default.", message) is not None
    has_blocklist = re.search(r"whose module (\S+) is blocked", message) is not None
    if re.search(r"(\S+) must be (\S+) to load", message) is not None:
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n" + _DOCS_MESSAGE
    if has_unsafe_global:
        updated = (
            "Weights only load failed. This file can still be loaded, to do so you have two options, "
            "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
            f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
            "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message
        )
    else:
        updated = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
        if not has_blocklist:
            updated += ("Please file an issue with the following so that we can make "
                        "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
        updated += "\n\n" + message
    return updated + _DOCS_MESSAGE


class _open_for_read:
    """Opens a path (and closes it afterwards) or checks that a buffer is seekable, as torch does."""

    def __init__(self, f):
        self._close = isinstance(f, (str, os.PathLike))
        self.f = open(f, "rb") if self._close else f  # noqa: SIM115 - closed in __exit__
        if not self._close:
            _check_seekable(f)

    def __enter__(self):
        return self.f

    def __exit__(self, *exc):
        if self._close:
            self.f.close()


def _check_seekable(f):
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        if "seek" in str(e) or "tell" in str(e):
            raise type(e)(str(e) + named(
                ". You can only ember.load from a file that is seekable. Please pre-load the data into a "
                "buffer like io.BytesIO and try to load from it instead.")) from None
        raise


def _is_zipfile(f):
    start = f.tell()
    head = f.read(4)
    f.seek(start)
    return head == b"PK\x03\x04"


def _map_file(f):
    """The whole checkpoint mapped into memory (private copy-on-write pages unless MAP_SHARED is set)."""
    import mmap as _mmap

    if not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    shared = get_default_mmap_options() == _mmap.MAP_SHARED
    with open(f, "r+b" if shared else "rb") as fh:
        return _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_WRITE if shared else _mmap.ACCESS_COPY)


# ---- where storages land -------------------------------------------------------------------------------------

_ACCELERATORS = ("cuda", "xpu", "mtia")


def default_restore_location(storage, location):
    """The storage restored at `location`: itself for 'cpu'; any other device fails as on a CPU-only torch."""
    import re

    restored = _opts.registered_restore(storage, location)
    if restored is not None:
        return restored
    for backend in _ACCELERATORS + ("hpu", "privateuseone"):
        if location == backend or re.match(f"{backend}(:|[0-9]+)", location):
            if backend in _ACCELERATORS:
                raise RuntimeError(named(
                    f"Attempting to deserialize object on a {backend.upper()} device but ember.{backend}."
                    "is_available() is False. If you are running on a CPU-only machine, please use ember.load "
                    "with map_location=ember.device('cpu') to map your storages to the CPU."))
            raise RuntimeError(named(
                f"The {backend.upper()} device module is not registered. If you are running on a CPU-only "
                "machine, please use ember.load with map_location=ember.device('cpu') to map your storages to "
                "the CPU."))
    if location.startswith("mps"):
        raise RuntimeError(named("ember.UntypedStorage(): Storage device not recognized: mps"))
    raise RuntimeError(named("don't know how to restore data location of ember.storage.UntypedStorage "
                             f"(tagged with {location})"))


def _get_restore_location(map_location):
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        return lambda storage, location: default_restore_location(storage, map_location.get(location, location))
    if isinstance(map_location, (str, bytes)):
        loc = map_location.decode() if isinstance(map_location, bytes) else map_location
        return lambda storage, location: default_restore_location(storage, loc)
    if isinstance(map_location, _device):
        return lambda storage, location: default_restore_location(storage, str(map_location))

    def restore_location(storage, location):
        result = map_location(storage, location)
        return default_restore_location(storage, location) if result is None else result

    return restore_location


def _decode_ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


def _typed(storage, dtype):
    if isinstance(storage, TypedStorage):
        storage = storage._untyped_storage
    return TypedStorage(storage, dtype)


def _byteswap(flat, dtype):
    if dtype.itemsize > 1 and flat.size:
        flat.view(_dtypes.to_numpy(dtype)).byteswap(inplace=True)


# ---- reading a zip checkpoint ----------------------------------------------------------------------------------

def _load(zip_file, map_location, pickle_module, overall_storage=None, **pickle_load_args):
    restore_location = _get_restore_location(map_location)
    loaded_storages = {}
    if zip_file.has_record("byteorder"):
        byteorder = zip_file.get_record("byteorder").decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise ValueError("Unknown endianness type: " + byteorder)
    else:
        byteorder = _opts.fallback_byteorder(sys.byteorder)
    skip = _opts.skipping_data()

    def load_tensor(dtype, nbytes, key, location):
        name = f"data/{key}"
        size = zip_file.record_size(name)
        if size != nbytes:
            raise RuntimeError(f"record size ({size} bytes) does not match expected size ({nbytes} bytes = {nbytes} "
                               "elements * 1 bytes/element) for dtype Byte")
        if skip:
            flat = np.zeros(nbytes, np.uint8)
        elif overall_storage is not None and zip_file.is_stored(name):
            flat = np.ndarray((nbytes,), np.uint8, buffer=overall_storage, offset=zip_file.get_record_offset(name))
        else:
            flat = zip_file.read_into(name, np.empty(nbytes, np.uint8))
        if byteorder != sys.byteorder:
            _byteswap(flat, dtype)
        typed = _typed(restore_location(UntypedStorage(flat), location), dtype)
        loaded_storages[key] = typed
        return typed

    def persistent_load(saved_id):
        if not isinstance(saved_id, tuple):
            raise AssertionError(f"saved_id must be a tuple, got {type(saved_id).__name__}")
        typename = _decode_ascii(saved_id[0])
        if typename != "storage":
            raise AssertionError(f"Unknown typename for persistent_load, expected 'storage' but got '{typename}'")
        storage_type, key, location, numel = saved_id[1:]
        dtype = _dtypes.uint8 if storage_type is UntypedStorage else storage_type.dtype
        if key in loaded_storages:
            return loaded_storages[key]
        return load_tensor(dtype, numel * dtype.itemsize, key, _decode_ascii(location))

    data_file = io.BytesIO(zip_file.get_record("data.pkl"))
    unpickler = _make_unpickler(pickle_module, data_file, **pickle_load_args)
    unpickler.persistent_load = persistent_load
    return unpickler.load()


def _make_unpickler(pickle_module, file, **pickle_load_args):
    if pickle_module is _wo:
        return _wo.Unpickler(file, **pickle_load_args)

    class UnpicklerWrapper(pickle_module.Unpickler):
        def find_class(self, mod_name, name):
            return _find_ember_class(mod_name, name) or super().find_class(mod_name, name)

    return UnpicklerWrapper(file, **pickle_load_args)


def _find_ember_class(mod_name, name):
    """The ember object a `torch...` name in a pickle stands for (NOTE [ Global names in checkpoints ])."""
    if type(name) is str and "Storage" in name and name in _STORAGE_DTYPES:
        return StorageType(name)
    if mod_name != "torch" and not mod_name.startswith("torch."):
        return None
    hit = _wo._get_allowed_globals().get(f"{mod_name}.{name}")
    if hit is not None:
        return hit
    import importlib

    ember_module = "ember" + mod_name[5:]
    try:
        obj = importlib.import_module(ember_module)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise AttributeError(f"Can't get attribute '{name}' on <module '{ember_module}'>: ember has no counterpart "
                             f"of {mod_name}.{name} from the checkpoint") from None
    return obj


# ---- reading the pre-1.6 format --------------------------------------------------------------------------------

def _legacy_load(f, map_location, pickle_module, **pickle_load_args):
    restore_location = _get_restore_location(map_location)
    storages = {}  # key -> TypedStorage (bytes filled in after the main pickle)

    def persistent_load(saved_id):
        if not isinstance(saved_id, tuple):
            raise AssertionError(f"saved_id must be a tuple, got {type(saved_id).__name__}")
        typename = _decode_ascii(saved_id[0])
        if typename == "module":
            return saved_id[1]
        if typename != "storage":
            raise RuntimeError(f"Unknown saved id type: {saved_id[0]}")
        storage_type, root_key, location, numel, view_metadata = saved_id[1:]
        dtype = _dtypes.uint8 if storage_type is UntypedStorage else storage_type.dtype
        if root_key not in storages:
            flat = np.empty(numel * dtype.itemsize, np.uint8)
            storages[root_key] = _typed(restore_location(UntypedStorage(flat), _decode_ascii(location)), dtype)
        typed = storages[root_key]
        if view_metadata is None:
            return typed
        view_key, offset, view_size = view_metadata
        a, n = offset * dtype.itemsize, view_size * dtype.itemsize
        return storages.setdefault(view_key, _typed(UntypedStorage(typed._untyped_storage._bytes[a:a + n]), dtype))

    def unpickle():
        if pickle_module is _wo:
            return _wo.Unpickler(f, **pickle_load_args).load()
        return pickle_module.Unpickler(f, **pickle_load_args).load()

    if unpickle() != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol_version = unpickle()
    if protocol_version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol_version}")
    sys_info = unpickle()
    unpickler = _make_unpickler(pickle_module, f, **pickle_load_args)
    unpickler.persistent_load = persistent_load
    result = unpickler.load()
    swap = isinstance(sys_info, dict) and sys_info.get("little_endian", True) != (sys.byteorder == "little")
    for key in unpickle():
        typed = storages[key]
        flat, dtype = typed._untyped_storage._bytes, typed.dtype
        head = f.read(8)
        count = int(np.frombuffer(head, "<i8")[0]) if len(head) == 8 else -1
        if count * dtype.itemsize != flat.size or f.readinto(memoryview(flat)) != flat.size:
            got = max(count, 0) * dtype.itemsize
            raise RuntimeError(f"storage has wrong byte size: expected {flat.size} got {got}")
        if swap:
            _byteswap(flat, dtype)
    return result


def _load_safetensors(path, map_location):
    if isinstance(map_location, dict):
        raise RuntimeError(named("Loading safetensors file with dict map_location is not supported. "
                                 "Use a device string or ember.device instead."))
    if callable(map_location) and not isinstance(map_location, _device):
        raise RuntimeError(named("Loading safetensors file with callable map_location is not supported. "
                                 "Use a device string or ember.device instead."))
    from .utils.safetensors import load_file

    out = load_file(path)
    if map_location is not None:
        default_restore_location(None, str(map_location))
    return out


# ---- plain pickling of tensors (pickle.dumps, copy.copy, multiprocessing) --------------------------------------

def _reduce_tensor(t):
    """`Tensor.__reduce_ex__`: the storage owner array (pickled once per pickle, so views pickled together still
    share memory), the view's byte offset and strides, dtype, requires_grad, and any Python attributes."""
    from .nn.parameter import Parameter

    state = _utils._get_obj_state(t)
    if isinstance(t, Parameter):
        if not state:
            return _utils._rebuild_parameter, (_wrap_plain(t), t.requires_grad, OrderedDict())
        return _utils._rebuild_parameter_with_state, (_wrap_plain(t), t.requires_grad, OrderedDict(), state)
    a = t._data
    root = _root(a)
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        root = _flat_bytes(a).copy()
        start = _address(_flat_bytes(a))
    else:
        start = _address(root)
    args = (root, t.dtype, _address(a) - start, a.shape, a.strides, t.requires_grad)
    if type(t) is Tensor and not state:
        return _utils._rebuild_tensor_from_buffer, args
    return _utils._rebuild_from_type_v2, (_utils._rebuild_tensor_from_buffer, type(t), args, state)


copyreg.pickle(StorageType, lambda st: (StorageType, (st.name,)))

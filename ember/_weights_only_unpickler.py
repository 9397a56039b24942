"""The restricted unpickler behind `ember.load(..., weights_only=True)`, the default.

NOTE [ Weights-only unpickling ]
A pickle is a program: GLOBAL imports any callable, REDUCE calls it, BUILD sets attributes, so loading an
untrusted checkpoint with `pickle` runs whatever its author wrote (`os.system`, `eval`, ...). This unpickler
interprets the opcodes itself, like torch's, and never imports by name: GLOBAL looks the dotted name up in an
allow-list (the torch names a checkpoint uses for tensors, storages, dtypes, `OrderedDict`, ... mapped to the
ember objects, plus what the user allows with `ember.serialization.add_safe_globals`); REDUCE and NEWOBJ call
only allow-listed objects; BUILD touches only Tensor, Parameter, OrderedDict and allow-listed types;
APPEND(S) and SETITEM(S) work only on list and dict. Anything else is refused with an UnpicklingError before
it runs, and the modules `sys`, `os`, `posix` and `nt` can never be allow-listed. Opcodes outside the set
protocol 2 needs are refused as well (torch's set: `ember.save` writes protocol 2).
"""

import functools
import warnings
from _codecs import encode
from collections import Counter, OrderedDict
from pickle import (
    APPEND,
    APPENDS,
    BINFLOAT,
    BINGET,
    BININT,
    BININT1,
    BININT2,
    BINPERSID,
    BINPUT,
    BINUNICODE,
    BUILD,
    EMPTY_DICT,
    EMPTY_LIST,
    EMPTY_SET,
    EMPTY_TUPLE,
    GLOBAL,
    LONG1,
    LONG_BINGET,
    LONG_BINPUT,
    MARK,
    NEWFALSE,
    NEWOBJ,
    NEWTRUE,
    NONE,
    PROTO,
    REDUCE,
    SETITEM,
    SETITEMS,
    SHORT_BINSTRING,
    STOP,
    TUPLE,
    TUPLE1,
    TUPLE2,
    TUPLE3,
    UnpicklingError,
    decode_long,
)
from struct import unpack
from sys import maxsize

from ._naming import named

__all__ = ["Unpickler", "load"]

# modules in this list are never allowed, even if the user allow-lists functions or classes from them
_blocklisted_modules = ["sys", "os", "posix", "nt"]

# Python 2 names a protocol-2 pickle may carry (torch maps them the same way)
IMPORT_MAPPING = {"__builtin__": "builtins", "copy_reg": "copyreg", "Queue": "queue", "repr": "reprlib",
                  "_abcoll": "collections.abc", "UserDict": "collections", "UserList": "collections",
                  "UserString": "collections", "whichdb": "dbm", "StringIO": "io", "cStringIO": "io"}
NAME_MAPPING = {("__builtin__", "xrange"): ("builtins", "range"), ("__builtin__", "reduce"): ("functools", "reduce"),
                ("__builtin__", "intern"): ("sys", "intern"), ("__builtin__", "unichr"): ("builtins", "chr"),
                ("__builtin__", "unicode"): ("builtins", "str"), ("__builtin__", "long"): ("builtins", "int"),
                ("itertools", "izip"): ("builtins", "zip"), ("itertools", "imap"): ("builtins", "map"),
                ("itertools", "ifilter"): ("builtins", "filter"),
                ("itertools", "ifilterfalse"): ("itertools", "filterfalse"),
                ("itertools", "izip_longest"): ("itertools", "zip_longest"),
                ("UserDict", "IterableUserDict"): ("collections", "UserDict"),
                ("UserList", "UserList"): ("collections", "UserList"),
                ("UserString", "UserString"): ("collections", "UserString"),
                ("__builtin__", "basestring"): ("builtins", "str"),
                ("exceptions", "StandardError"): ("builtins", "Exception"),
                ("UserDict", "UserDict"): ("collections", "UserDict")}


# ---- the user's allow-list ----------------------------------------------------------------------------------

_marked_safe_globals_set = set()


def _add_safe_globals(safe_globals):
    global _marked_safe_globals_set
    _marked_safe_globals_set = _marked_safe_globals_set.union(set(safe_globals))


def _get_safe_globals():
    return list(_marked_safe_globals_set)


def _clear_safe_globals():
    global _marked_safe_globals_set
    _marked_safe_globals_set = set()


def _remove_safe_globals(globals_to_remove):
    global _marked_safe_globals_set
    _marked_safe_globals_set = _marked_safe_globals_set - set(globals_to_remove)


class _safe_globals:
    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        _add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):  # noqa: A002 - the context-manager protocol's name
        _remove_safe_globals(self.safe_globals)


def _get_user_allowed_globals():
    """Dotted name -> object for the user's allow-list. An ember object is listed under its torch name too,
    since checkpoints name `torch.nn.modules.linear.Linear` where ember has `ember.nn.modules.linear.Linear`."""
    rc = {}
    for f in _marked_safe_globals_set:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(
                    f"Expected tuple of length 2 (global, str of callable full path), but got tuple of length: {len(f)}"
                )
            if type(f[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: {type(f[1])}")
            f, name = f
            rc[name] = f
        else:
            module, name = f.__module__, f.__qualname__
            rc[f"{module}.{name}"] = f
            if module == "ember" or module.startswith("ember."):
                rc[f"torch{module[5:]}.{name}"] = f
    return rc


# ---- the built-in allow-list ----------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _get_allowed_globals():
    from . import _utils, serialization
    from ._device import device
    from ._dtypes import all_dtypes
    from ._size import Size
    from ._storage import TypedStorage, UntypedStorage
    from ._tensor import Tensor
    from .nn.parameter import Parameter

    rc = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.serialization._get_layout": serialization._get_layout,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": device,
        "_codecs.encode": encode,  # for bytes
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch.storage.TypedStorage": TypedStorage,
        "torch.storage.UntypedStorage": UntypedStorage,
        "torch._tensor._rebuild_from_type_v2": _utils._rebuild_from_type_v2,
    }
    for d in all_dtypes:
        rc[f"torch.{d.name}"] = d
    for name in serialization._STORAGE_NAMES.values():
        rc[f"torch.{name}"] = rc[f"torch.cuda.{name}"] = serialization.StorageType(name)
    for f in ("_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_parameter",
              "_rebuild_parameter_with_state"):
        rc[f"torch._utils.{f}"] = getattr(_utils, f)
    import ember

    for name in _LEGACY_TENSOR_TYPES:  # the legacy tensor types (`torch.FloatTensor`)
        rc[f"torch.{name}"] = getattr(ember, name)
    return rc


_LEGACY_TENSOR_TYPES = ("BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
                        "HalfTensor", "IntTensor", "LongTensor", "ShortTensor")


# NOTE [ The allow-list is torch's ]
# torch 2.13's default allow-list (torch._weights_only_unpickler._get_allowed_globals) is, name for name, the
# union of `_get_allowed_globals()` above and `_TORCH_ONLY`: the names torch allows for kinds of tensors or
# dtypes ember has nothing to build with (quantized, sparse, nested, sub-byte and float8 dtypes, CUDA tensor
# types). A checkpoint naming one of those fails with a RuntimeError saying so, not with the "Unsupported
# global" refusal, and `get_unsafe_globals_in_checkpoint` does not list them, as torch does not.
# tests/test_serialization_allowlist.py holds the union to torch's list. NumPy is not on it: torch 2.13
# refuses a checkpoint holding a NumPy array or dtype under `weights_only=True` until the user allow-lists
# `numpy._core.multiarray._reconstruct`, `numpy.ndarray`, `numpy.dtype` and the array's dtype class, and
# so does ember.
_TORCH_ONLY = frozenset(
    ["torch._utils._rebuild_qtensor", "torch._utils._rebuild_sparse_tensor",
     "torch._utils._rebuild_meta_tensor_no_storage", "torch._utils._rebuild_nested_tensor",
     "torch._utils._rebuild_wrapper_subclass", "torch._utils._rebuild_device_tensor_from_numpy",
     "torch._utils._rebuild_device_tensor_from_cpu_tensor", "torch.complex32", "torch.float8_e4m3fn",
     "torch.float8_e5m2", "torch.float8_e4m3fnuz", "torch.float8_e5m2fnuz", "torch.float8_e8m0fnu",
     "torch.float4_e2m1fn_x2", "torch.qint8", "torch.quint8", "torch.qint32", "torch.quint2x4", "torch.quint4x2",
     "torch.bits16", "torch.bits1x8", "torch.bits2x4", "torch.bits4x2", "torch.bits8",
     "torch.QInt32Storage", "torch.QInt8Storage", "torch.QUInt2x4Storage", "torch.QUInt4x2Storage",
     "torch.QUInt8Storage", "torch.per_channel_affine", "torch.per_channel_affine_float_qparams",
     "torch.per_channel_symmetric", "torch.per_tensor_affine", "torch.per_tensor_symmetric"]
    + [f"torch.{p}int{n}" for p in ("", "u") for n in range(1, 8)]
    + [f"torch.{ns}{name}" for ns in ("cuda.", "sparse.", "cuda.sparse.") for name in _LEGACY_TENSOR_TYPES
       if not (ns != "cuda." and name == "BoolTensor")])


def _read_global_instruction(readline):
    module = readline()[:-1].decode("utf-8")
    name = readline()[:-1].decode("utf-8")
    if (module, name) in NAME_MAPPING:
        module, name = NAME_MAPPING[(module, name)]
    elif module in IMPORT_MAPPING:
        module = IMPORT_MAPPING[module]
    return module, name


def _find_global(module, name):
    """The object a GLOBAL opcode names, if allowed; otherwise torch's UnpicklingError."""
    full_path = f"{module}.{name}"
    if module in _blocklisted_modules:
        raise UnpicklingError(f"Trying to load unsupported GLOBAL {full_path} whose module {module} is blocked.")
    allowed = _get_allowed_globals()
    if full_path in allowed:
        return allowed[full_path]
    user = _get_user_allowed_globals()
    if full_path in user:
        return user[full_path]
    if full_path in _TORCH_ONLY or (module.startswith("torch.") and "Storage" in name):
        raise RuntimeError(f"{full_path} in the checkpoint names a kind of tensor or dtype that ember does not have")
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    raise UnpicklingError(
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
        + named(f"Please use `ember.serialization.add_safe_globals([{full_path}])` or the "
                f"`ember.serialization.safe_globals([{full_path}])` context manager to allowlist this global "
                "if you trust this class/function.")
    )


class Unpickler:
    """Reads a protocol-2 pickle, allowing only what NOTE [ Weights-only unpickling ] lists."""

    def __init__(self, file, *, encoding="bytes"):
        self.encoding = encoding
        self.readline = file.readline
        self.read = file.read
        self.memo = {}
        self.proto = -1

    def load(self):
        """Read a pickled object representation from the open file and return the object it describes."""
        from ._tensor import Tensor
        from .nn.parameter import Parameter

        self.metastack = []
        self.stack = []
        self.append = self.stack.append
        allowed = list(_get_allowed_globals().values()) + list(_get_user_allowed_globals().values())
        self._allowed_ids = {id(v) for v in allowed}
        self._types = (Tensor, Parameter)
        read = self.read
        while True:
            key = read(1)
            if not key:
                raise EOFError("Ran out of input")
            op = key[0]
            handler = _DISPATCH.get(op)
            if handler is None:
                raise UnpicklingError(f"Unsupported operand {op}")
            if handler is _stop:
                return self.stack.pop()
            handler(self)

    def pop_mark(self):
        """The items pushed since the last MARK."""
        items = self.stack
        self.stack = self.metastack.pop()
        self.append = self.stack.append
        return items

    def persistent_load(self, pid):
        raise UnpicklingError("unsupported persistent id encountered")


# ---- opcodes that run code: only ever on allow-listed objects -------------------------------------------------

def _global(u):
    module, name = _read_global_instruction(u.readline)
    u.append(_find_global(module, name))


def _newobj(u):
    args = u.stack.pop()
    cls = u.stack.pop()
    if cls is u._types[1]:
        u.append(cls(*args))
    elif id(cls) in u._allowed_ids and isinstance(cls, type):
        u.append(cls.__new__(cls, *args))
    else:
        raise UnpicklingError(
            f"Can only create new object for nn.Parameter or classes allowlisted via `add_safe_globals` but got {cls}"
        )


def _reduce(u):
    args = u.stack.pop()
    func = u.stack[-1]
    if id(func) not in u._allowed_ids:
        error_msg = f"Trying to call reduce for unrecognized function {func}"
        if hasattr(func, "__self__"):
            error_msg += f" which belongs to {func.__self__}"
        raise UnpicklingError(error_msg)
    if type(args) is not tuple:
        raise UnpicklingError(f"REDUCE arguments must be a tuple, but got {type(args)}")
    u.stack[-1] = func(*args)


def _build(u):
    from ._utils import _set_obj_state, _set_storage

    state = u.stack.pop()
    inst = u.stack[-1]
    tensor_cls, param_cls = u._types
    if type(inst) is tensor_cls:
        _set_storage(inst, *state)  # legacy unpickling
    elif type(inst) is param_cls:
        _set_obj_state(inst, state)
    elif type(inst) is OrderedDict:
        inst.__dict__.update(state)
    elif id(type(inst)) in u._allowed_ids:
        if hasattr(inst, "__setstate__"):
            inst.__setstate__(state)
        else:  # mimics load_build in pickle
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                inst.__dict__.update(state)
            if slotstate:
                for k, v in slotstate.items():
                    setattr(inst, k, v)
    else:
        raise UnpicklingError(
            "Can only build Tensor, Parameter, OrderedDict or types allowlisted "
            f"via `add_safe_globals`, but got {type(inst)}"
        )


def _binpersid(u):
    pid = u.stack.pop()
    if type(pid) is not tuple and type(pid) is not int:
        raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
    if type(pid) is tuple and len(pid) > 0 and _decode_ascii(pid[0]) != "storage":
        raise UnpicklingError(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
    u.append(u.persistent_load(pid))


def _decode_ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


# ---- containers ---------------------------------------------------------------------------------------------

def _append(u):
    item = u.stack.pop()
    list_obj = u.stack[-1]
    if type(list_obj) is not list:
        raise UnpicklingError(f"Can only append to lists, but got {type(list_obj)}")
    list_obj.append(item)


def _appends(u):
    items = u.pop_mark()
    list_obj = u.stack[-1]
    if type(list_obj) is not list:
        raise UnpicklingError(f"Can only extend lists, but got {type(list_obj)}")
    list_obj.extend(items)


def _check_set_item_target(u, opcode):
    if type(u.stack[-1]) not in (dict, OrderedDict, Counter):
        raise UnpicklingError(
            f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, but got {type(u.stack[-1])}"
        )


def _setitem(u):
    v, k = u.stack.pop(), u.stack.pop()
    _check_set_item_target(u, "SETITEM")
    u.stack[-1][k] = v


def _setitems(u):
    items = u.pop_mark()
    _check_set_item_target(u, "SETITEMS")
    target = u.stack[-1]
    for i in range(0, len(items), 2):
        target[items[i]] = items[i + 1]


def _mark(u):
    u.metastack.append(u.stack)
    u.stack = []
    u.append = u.stack.append


def _tuple(u):
    items = u.pop_mark()  # before looking up `u.append`, which pop_mark rebinds
    u.append(tuple(items))


def _tuple1(u):
    u.stack[-1] = (u.stack[-1],)


def _tuple2(u):
    u.stack[-2:] = [(u.stack[-2], u.stack[-1])]


def _tuple3(u):
    u.stack[-3:] = [(u.stack[-3], u.stack[-2], u.stack[-1])]


# ---- atoms and the memo ---------------------------------------------------------------------------------------

def _const(value):
    return lambda u: u.append(value)


def _empty(factory):
    return lambda u: u.append(factory())


def _exact(u, n):
    data = u.read(n)
    if len(data) < n:
        raise EOFError("Ran out of input")
    return data


def _binint(u):
    u.append(unpack("<i", _exact(u, 4))[0])


def _binint1(u):
    u.append(_exact(u, 1)[0])


def _binint2(u):
    u.append(unpack("<H", _exact(u, 2))[0])


def _binfloat(u):
    u.append(unpack(">d", _exact(u, 8))[0])


def _binunicode(u):
    strlen = unpack("<I", _exact(u, 4))[0]
    if strlen > maxsize:
        raise UnpicklingError("String is too long")
    u.append(str(_exact(u, strlen), "utf-8", "surrogatepass"))


def _short_binstring(u):
    strdata = _exact(u, _exact(u, 1)[0])
    if u.encoding != "bytes":
        strdata = strdata.decode(u.encoding, "strict")
    u.append(strdata)


def _long1(u):
    u.append(decode_long(_exact(u, _exact(u, 1)[0])))


def _get(u, idx):
    u.append(u.memo[idx])


def _put(u, i):
    u.memo[i] = u.stack[-1]


def _proto(u):
    u.proto = _exact(u, 1)[0]
    if u.proto != 2:
        warnings.warn(
            named(f"Detected pickle protocol {u.proto} in the checkpoint, which was not the default pickle "
                  "protocol used by `ember.load` (2). The weights_only Unpickler might not support all "
                  "instructions implemented by this protocol, please file an issue for adding support if you "
                  "encounter this."),
            stacklevel=4,
        )


def _stop(u):
    return None


_DISPATCH = {
    GLOBAL[0]: _global, NEWOBJ[0]: _newobj, REDUCE[0]: _reduce, BUILD[0]: _build, BINPERSID[0]: _binpersid,
    APPEND[0]: _append, APPENDS[0]: _appends, SETITEM[0]: _setitem, SETITEMS[0]: _setitems, MARK[0]: _mark,
    TUPLE[0]: _tuple, TUPLE1[0]: _tuple1, TUPLE2[0]: _tuple2, TUPLE3[0]: _tuple3,
    NONE[0]: _const(None), NEWFALSE[0]: _const(False), NEWTRUE[0]: _const(True), EMPTY_TUPLE[0]: _const(()),
    EMPTY_LIST[0]: _empty(list), EMPTY_DICT[0]: _empty(dict), EMPTY_SET[0]: _empty(set),
    BININT[0]: _binint, BININT1[0]: _binint1, BININT2[0]: _binint2, BINFLOAT[0]: _binfloat,
    BINUNICODE[0]: _binunicode, SHORT_BINSTRING[0]: _short_binstring, LONG1[0]: _long1,
    BINGET[0]: lambda u: _get(u, _exact(u, 1)[0]), LONG_BINGET[0]: lambda u: _get(u, unpack("<I", _exact(u, 4))[0]),
    BINPUT[0]: lambda u: _put(u, _exact(u, 1)[0]), LONG_BINPUT[0]: lambda u: _put(u, unpack("<I", _exact(u, 4))[0]),
    PROTO[0]: _proto, STOP[0]: _stop,
}


def load(file, *, encoding="ASCII"):
    return Unpickler(file, encoding=encoding).load()

"""The legacy tensor types: `ember.FloatTensor`, `LongTensor`, ... (torch's `torch.tensortype` classes).

Old scripts build tensors with them (`torch.FloatTensor([1, 2])`, `torch.LongTensor(2, 3)`), test types with
them (`isinstance(x, torch.FloatTensor)`) and convert with them (`x.type(torch.DoubleTensor)`). As in torch
they are not Tensor subclasses: each is an instance of the metaclass `tensortype`, whose isinstance check
compares a tensor's dtype (a Parameter of the right dtype is one too) and whose call is torch's legacy
constructor: no argument gives an empty tensor, ints or a Size give an uninitialised tensor of that shape,
a sequence or array gives its data in the type's dtype, a tensor of the type gives an alias of it, a
storage gives a tensor over that memory.
"""

import numpy as np

from . import _dtypes, _naming
from ._device import device as _device
from ._size import Size
from ._storage import TypedStorage, UntypedStorage
from ._tensor import Tensor, _wrap

__all__ = ["tensortype", "TYPES"]

# the C++ names torch's TensorOptions message gives the dtypes
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}

_LONG = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
         "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}

_SIGNATURES = ("(*, torch.device device = None)", "(torch.Storage storage)", "(Tensor other)",
               "(tuple of ints size, *, torch.device device = None)",
               "(object data, *, torch.device device = None)")


def _options(dtype):
    return (f"TensorOptions(dtype={_CPP_NAMES[dtype.name]}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


def _label(a):
    """How torch's argument parser names the type of an argument: `int`, `Tensor`, `torch.dtype`."""
    t = type(a)
    if isinstance(a, Tensor):
        return "Tensor"
    return f"{_naming.prefix}.{t.__qualname__}" if t.__module__ in ("ember", "torch") else t.__qualname__


def _describe(a):
    if isinstance(a, list):
        return "list of [" + ", ".join(dict.fromkeys(type(v).__name__ for v in a)) + "]"
    return type(a).__name__


def _bad_arguments(args, kwargs):
    """torch's argument-parser error for a call no signature accepts, with its reasons where torch gives them:
    positional arguments are checked against the first signature, unknown keywords against the ones
    that would take the positional arguments."""
    got = ", ".join([_label(a) for a in args] + [f"{k}={_label(v)}" for k, v in kwargs.items()])
    reasons = {}
    if kwargs:
        why = "some of the keywords were incorrect: " + ", ".join(kwargs)
        reasons = {0: why} if args else {1: why, 2: why}
    elif args:
        marked = ", ".join(f"!{_describe(a)}!" for a in args)
        reasons = {0: f"some of the arguments have invalid types: ({marked})"}
    body = "".join(f" * {sig}\n" + (f"      didn't match because {reasons[i]}\n" if i in reasons else "")
                   for i, sig in enumerate(_SIGNATURES))
    got += "" if args else ", "
    return TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected "
                     f"one of:\n{body}")


def _unpack_error(size):
    pos, bad = next((i, a) for i, a in enumerate(size, 1) if not _is_int(a))
    return TypeError(f"new(): argument 'size' failed to unpack the object at pos {pos} with error "
                     f"\"type must be tuple of ints,but got {type(bad).__name__}\"")


def _is_int(a):
    return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))


def _construct(cls, args, kwargs):
    from ._ops.creation import empty, tensor

    dtype = cls.dtype
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    if device is not None and _device(device).type != "cpu":
        raise RuntimeError("legacy constructor expects device type: cpu but device type: "
                           f"{_device(device).type} was passed")
    if "size" in kwargs and not args:
        args = tuple(kwargs.pop("size"))
        if not all(_is_int(a) for a in args):
            raise _unpack_error(args)
    if kwargs:
        raise _bad_arguments(args, kwargs)
    if not args:
        return empty(0, dtype=dtype)
    if all(_is_int(a) for a in args):
        return empty(*args, dtype=dtype)
    if len(args) > 1 and _is_int(args[0]):
        raise _unpack_error(args)
    if len(args) != 1:
        raise _bad_arguments(args, kwargs)
    (arg,) = args
    if isinstance(arg, Size):
        return empty(*arg, dtype=dtype)
    if isinstance(arg, Tensor):
        if arg.dtype is not dtype:
            raise TypeError(f"expected {_options(dtype)} (got {_options(arg.dtype)})")
        return arg.view(arg.shape)  # an alias sharing memory and history, as torch's
    if isinstance(arg, (TypedStorage, UntypedStorage)):
        if isinstance(arg, TypedStorage) and arg.dtype is not dtype:
            raise RuntimeError(f"Expected a Storage of type {_LONG[dtype.name]} or an UntypedStorage, "
                               f"but got type {_LONG[arg.dtype.name]} for argument 1 'storage'")
        raw = arg.untyped()._bytes if isinstance(arg, TypedStorage) else arg._bytes
        return _wrap(raw.view(_dtypes.to_numpy(dtype)))
    if isinstance(arg, str):
        raise TypeError("new(): invalid data type 'str'")
    if isinstance(arg, (int, float, complex, bool, np.generic)):
        raise TypeError(f"new(): data must be a sequence (got {type(arg).__name__})")
    return tensor(arg, dtype=dtype)


class tensortype(type):
    """The class of `ember.FloatTensor` and friends: isinstance compares dtypes, calling constructs."""

    __module__ = "ember"

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __call__(cls, *args, **kwargs):
        return _construct(cls, args, kwargs)


def _make(name, dtype):
    return tensortype(name, (), {"__module__": "ember", "dtype": dtype, "is_sparse": False, "is_cuda": False,
                                 "__doc__": f"torch's legacy {name}: tensors of dtype {dtype.name}."})


TYPES = {name: _make(name, getattr(_dtypes, dt)) for dt, name in (
    ("float32", "FloatTensor"), ("float64", "DoubleTensor"), ("float16", "HalfTensor"),
    ("bfloat16", "BFloat16Tensor"), ("int64", "LongTensor"), ("int32", "IntTensor"), ("int16", "ShortTensor"),
    ("int8", "CharTensor"), ("uint8", "ByteTensor"), ("bool", "BoolTensor"))}

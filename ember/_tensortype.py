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

from . import _dtypes
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

_SIGNATURES = (" * (*, torch.device device = None)\n * (torch.Storage storage)\n * (Tensor other)\n"
               " * (tuple of ints size, *, torch.device device = None)\n"
               " * (object data, *, torch.device device = None)\n")


def _options(dtype):
    return (f"TensorOptions(dtype={_CPP_NAMES[dtype.name]}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


def _bad_arguments(args, kwargs):
    got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    return TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + _SIGNATURES)


def _is_int(a):
    return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))


def _construct(cls, args, kwargs):
    from ._ops.creation import empty, tensor

    dtype = cls.dtype
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    if device is not None and _device(device).type != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {_device(device).type} "
                           "was passed")
    if "size" in kwargs and not args:
        args = (tuple(kwargs.pop("size")),)
    if kwargs:
        raise _bad_arguments(args, kwargs)
    if not args:
        return empty(0, dtype=dtype)
    if all(_is_int(a) for a in args):
        return empty(*args, dtype=dtype)
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
            raise RuntimeError(f"Expected a Storage of type {_LONG[dtype.name]} or an UntypedStorage, but got "
                               f"type {_LONG[arg.dtype.name]} for argument 1 'storage'")
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

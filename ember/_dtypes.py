"""dtype objects, their NumPy twins, and torch's type-promotion rules.

Every ember dtype maps to one NumPy dtype; bfloat16 comes from ml_dtypes, which is imported lazily so
that `import ember` stays fast for users who never touch bfloat16.

NOTE [ Telling bfloat16 apart ]
ml_dtypes' bfloat16 is NumPy's only dtype of kind "V" that ember stores, so code tests `a.dtype.kind == "V"`
for it: `np.dtype.name` is a Python-level property that costs microseconds, more than a small kernel.
"""

import builtins

import numpy as np

from . import _naming
from ._argparse import call_error

__all__ = ["dtype", "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast"]


class dtype:
    """The element type of a Tensor (``ember.float32``, ``ember.int64``, ...)."""

    __slots__ = ("name", "itemsize", "is_floating_point", "is_complex", "is_signed", "_np", "_cat", "_abbr")
    __module__ = "ember"

    def __init__(self, name, np_dtype, cat, itemsize, signed, abbr):
        self.name = name
        self._np = np_dtype  # None for bfloat16 until first use (see to_numpy)
        self._cat = cat  # 0 bool, 1 integral, 2 floating, 3 complex: torch's promotion categories
        self.itemsize = itemsize
        self.is_floating_point = cat == 2
        self.is_complex = cat == 3
        self.is_signed = signed
        self._abbr = abbr

    def __repr__(self):
        return _naming.prefix + "." + self.name  # NOTE [ One switch for printed names ]

    __str__ = __repr__

    def __reduce__(self):
        return self.name  # pickles as the module-level global ember.<name>

    def to_complex(self):
        return {"float32": complex64, "float64": complex128, "float16": complex64}.get(self.name, self)

    def to_real(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)


bool = dtype("bool", np.dtype(np.bool_), 0, 1, False, "b1")  # noqa: A001 - torch's name
uint8 = dtype("uint8", np.dtype(np.uint8), 1, 1, False, "u8")
int8 = dtype("int8", np.dtype(np.int8), 1, 1, True, "i8")
int16 = dtype("int16", np.dtype(np.int16), 1, 2, True, "i16")
int32 = dtype("int32", np.dtype(np.int32), 1, 4, True, "i32")
int64 = dtype("int64", np.dtype(np.int64), 1, 8, True, "i64")
float16 = dtype("float16", np.dtype(np.float16), 2, 2, True, "f16")
bfloat16 = dtype("bfloat16", None, 2, 2, True, "bf16")
float32 = dtype("float32", np.dtype(np.float32), 2, 4, True, "f32")
float64 = dtype("float64", np.dtype(np.float64), 2, 8, True, "f64")
uint16 = dtype("uint16", np.dtype(np.uint16), 1, 2, False, "u16")
uint32 = dtype("uint32", np.dtype(np.uint32), 1, 4, False, "u32")
uint64 = dtype("uint64", np.dtype(np.uint64), 1, 8, False, "u64")
complex64 = dtype("complex64", np.dtype(np.complex64), 3, 8, True, "c64")
complex128 = dtype("complex128", np.dtype(np.complex128), 3, 16, True, "c128")

# torch's aliases
half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

all_dtypes = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128,
              uint16, uint32, uint64)
_barely_supported = (uint16, uint32, uint64)  # torch stores them but promotes them with nothing else

_from_np = {d._np: d for d in all_dtypes if d._np is not None}


def _load_bfloat16():
    import ml_dtypes

    bfloat16._np = np.dtype(ml_dtypes.bfloat16)
    _from_np[bfloat16._np] = bfloat16


def to_numpy(d):
    """The NumPy dtype that stores ember dtype `d`."""
    try:
        if d._np is None:
            _load_bfloat16()
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return d._np


def from_numpy(np_dtype):
    """The ember dtype for a NumPy dtype; TypeError like torch for one ember cannot hold."""
    d = _from_np.get(np_dtype)
    if d is None:
        if np_dtype.name == "bfloat16":
            _load_bfloat16()
            return bfloat16
        if np_dtype.kind in "iufcb":
            d = _from_np.get(np.dtype(np_dtype.str))  # e.g. a non-native byte order
            if d is not None:
                return d
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np_dtype.name}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
        )
    return d


# NOTE [ Default dtype ]
# torch.tensor([1.0]) is float32 because the default dtype is float32; it is also the dtype a Python
# float promotes an integer tensor to. It lives in a one-element list so that other modules that did
# `from ._dtypes import _default` see changes.
_default = [float32]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    if not isinstance(d, dtype) or d not in (float16, bfloat16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d
    _result_cache.clear()


# ---- promotion -------------------------------------------------------------------------------------------

_int_order = (uint8, int8, int16, int32, int64)


def _promote_pair(a, b):
    if a is b:
        return a
    if a in _barely_supported or b in _barely_supported:
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{_WORD[a.name]} and {_WORD[b.name]}")
    ca, cb = a._cat, b._cat
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if hi._cat == 3 and lo in (float64,):
            return complex128
        return hi
    if ca == 1:
        if uint8 in (a, b):
            other = b if a is uint8 else a
            return {int8: int16}.get(other, other)
        return a if _int_order.index(a) > _int_order.index(b) else b
    if ca == 2:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    return a if a.itemsize > b.itemsize else b


_WORD = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
         "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "uint16": "UInt16",
         "uint32": "UInt32", "uint64": "UInt64", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}

# the C++ type names some torch messages use ("expected m1 and m2 to have the same dtype, but got: double != float")
CPP_NAME = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}

_pair_cache = {}


def promote_types(type1, type2):
    """The smallest dtype that both `type1` and `type2` can be cast to (torch.promote_types)."""
    key = (type1, type2)
    r = _pair_cache.get(key)
    if r is None:
        r = _pair_cache[key] = _promote_pair(type1, type2)
    return r


def _combine(higher, lower):
    # torch's combine_categories: a lower-priority class wins only when its category is higher.
    if higher is None:
        return lower
    if lower is None or higher._cat == 3:
        return higher
    if lower._cat == 3:  # a complex number makes a float tensor complex of its own precision
        return {float32: complex64, float64: complex128}.get(higher, lower) if higher._cat == 2 else lower
    if higher._cat == 2:
        return higher
    if higher is bool or lower._cat >= 2:
        return promote_types(higher, lower)
    return higher


_py_bool, _py_int, _py_float = builtins.bool, builtins.int, builtins.float


def _scalar_dtype(x):
    t = type(x)
    if t is _py_float:
        return _default[0]
    if t is _py_int:
        return int64
    if t is _py_bool or isinstance(x, (_py_bool, np.bool_)):
        return bool
    if isinstance(x, (_py_int, np.integer)):
        return int64
    if isinstance(x, (_py_float, np.floating)):
        return _default[0]
    if isinstance(x, (complex, np.complexfloating)):
        return complex128 if _default[0] is float64 else complex64
    raise TypeError(f"result_type(): unsupported operand type {type(x).__name__}")


_result_cache = {}


def result_dtype(args):
    """torch's result_type over tensors and Python scalars.

    Three priority classes: tensors with dims, zero-dim tensors, then Python numbers; a lower class
    only matters when its category (bool < int < float < complex) is higher. So
    `int8_tensor + 1000` stays int8 and `int32_tensor + 2.5` is the default float dtype.
    """
    dim = zero = wrapped = None
    for a in args:
        if a is None:
            continue
        d = getattr(a, "_data", None)
        if d is None:
            s = _scalar_dtype(a)
            wrapped = s if wrapped is None else promote_types(wrapped, s)
        elif d.ndim:
            t = _from_np[d.dtype] if d.dtype in _from_np else from_numpy(d.dtype)
            dim = t if dim is None else promote_types(dim, t)
        else:
            t = _from_np[d.dtype] if d.dtype in _from_np else from_numpy(d.dtype)
            zero = t if zero is None else promote_types(zero, t)
    key = (dim, zero, wrapped)
    r = _result_cache.get(key)
    if r is None:
        r = _result_cache[key] = _combine(dim, _combine(zero, wrapped))
    return r


def result_type(tensor=None, other=None, *, scalar=None, scalar1=None, scalar2=None):
    """torch.result_type: the dtype an arithmetic op on `tensor` and `other` would produce (its overloads name
    a number `scalar`, or two numbers `scalar1` and `scalar2`)."""
    if scalar1 is not None or scalar2 is not None:
        tensor, other = scalar1, scalar2
    elif scalar is not None:
        tensor, other = (scalar, other) if tensor is None else (tensor, scalar)
    return result_dtype((tensor, other))


def can_cast(from_, to):
    """torch.can_cast: casting allowed under torch's same-kind rules (no float -> int, no x -> bool)."""
    try:
        return from_._cat <= to._cat
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None

"""Creation and conversion: tensor, as_tensor, from_numpy, zeros/ones/full/empty (and _like, new_),
arange, linspace, logspace, eye, empty_strided, tril/triu, meshgrid, and `to` with its shorthands.

Creation ops go through the dispatcher like every other op (kind CREATION), so modes see them: the
compiler's tracer records `zeros`, inference mode marks what it creates.
"""

import builtins
import warnings

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._device import check_device
from .._device import device as _device_cls
from .._dispatch import CREATION, POINTWISE, _modes, defop, dispatch, dispatch_inplace, quiet_numpy, run_meta
from .._meta import like_strides, meta_array
from .._tensor import Tensor, _wrap, keep_numpy_strides
from ._util import as_shape, attr_of_other, checked_scalar, finish_out, method, public
from .pointwise import _to_dtype

# ---- from data --------------------------------------------------------------------------------------


def _np_dtype(dtype):
    return _dtypes.to_numpy(dtype if dtype is not None else _dtypes.get_default_dtype())


def _dtype(dtype):
    """A factory's dtype as its op's static param: the ember dtype asked for, or the default one."""
    return dtype if dtype is not None else _dtypes.get_default_dtype()


def _ragged_error(data, dim=0):
    """torch's ValueError for nested sequences of uneven length."""
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], (list, tuple)):
        n = len(data[0])
        for item in data:
            if not isinstance(item, (list, tuple)) or len(item) != n:
                got = len(item) if isinstance(item, (list, tuple)) else type(item).__name__
                return ValueError(f"expected sequence of length {n} at dim {dim + 1} (got {got})")
        for item in data:
            e = _ragged_error(item, dim + 1)
            if e:
                return e
    return None


def _array_from_data(data, dtype):
    """A fresh NumPy array holding Python data with torch's dtype inference."""
    if isinstance(data, Tensor):
        arr = data._data.copy()
    elif isinstance(data, np.ndarray):
        arr = np.array(data, copy=True)
        if arr.dtype.kind == "u" and arr.dtype.itemsize > 1 or arr.dtype.kind in "OUSV":
            _dtypes.from_numpy(arr.dtype)
    else:
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        try:
            arr = np.array(data)
        except ValueError:
            e = _ragged_error(data)
            raise (e or ValueError("could not convert data to a tensor")) from None
        except OverflowError:
            raise RuntimeError("Overflow when unpacking long") from None
        if arr.dtype == object:
            e = _ragged_error(data)
            if e:
                raise e
            if isinstance(_first(data), int):
                raise ValueError("Overflow when unpacking long long")  # an int beyond 64 bits
            raise TypeError(f"Could not infer dtype of {type(_first(data)).__name__}")
        if dtype is not None or arr.dtype.kind == "u":  # (kept off the commonest path: tensor([1., 2.]))
            if arr.dtype == np.uint64 or arr.dtype == np.float64 and type(_first(data)) is int \
                    and _has_big_int(data):
                raise ValueError("Overflow when unpacking long long")  # Python ints are read as int64
            if dtype is not None:
                _check_python_values(arr, dtype)
        if arr.dtype.kind in "US":
            raise TypeError("new(): invalid data type 'str'")
        first = _first(data)
        typed = isinstance(first, (np.ndarray, np.generic, Tensor))  # data that carries NumPy/tensor dtypes
        if dtype is not None and arr.dtype.kind in "fc":
            pass  # an explicit dtype: cast once below, never through the default dtype
        elif arr.dtype == np.float64 and not typed:
            if type(first) is int and _has_big_int(data):
                raise ValueError("Overflow when unpacking long long")
            arr = arr.astype(_np_dtype(None))  # Python floats take the default dtype
        elif arr.dtype == np.complex128 and not typed:
            arr = arr.astype(np.complex128 if _dtypes.get_default_dtype() is _dtypes.float64 else np.complex64)
        elif arr.dtype.kind in "iu" and arr.dtype != np.int64 and not typed:
            arr = arr.astype(np.int64)
    if dtype is not None:
        try:
            arr = arr.astype(_dtypes.to_numpy(dtype), copy=False)
        except RuntimeWarning:  # overflow to inf under an "error" filter: NOTE [ Quiet NumPy ]
            with quiet_numpy():
                arr = arr.astype(_dtypes.to_numpy(dtype), copy=False)
    if isinstance(data, np.ndarray):
        keep_numpy_strides(arr)  # (torch's copy of an array keeps its strides, an empty one's zeros included)
    return arr


def _has_big_int(data):
    """Whether nested Python data holds an int beyond int64 (NumPy then reads the list as float64).

    Only asked when the data starts with an int: a list of floats is not scanned (tensor() stays cheap)."""
    if isinstance(data, (list, tuple)):
        return any(_has_big_int(v) for v in data)
    return type(data) is int and not -2 ** 63 <= data < 2 ** 63


def _check_python_values(arr, dtype):
    """torch.tensor(data, dtype=...) checks each Python number fits an integer dtype (floats wrap to inf)."""
    if arr.dtype.kind == "c" and dtype.is_complex is False and dtype is not _dtypes.bool:
        if dtype.is_floating_point:
            raise TypeError("must be real number, not complex")
        raise TypeError("'complex' object cannot be interpreted as an integer")
    np_dtype = _dtypes.to_numpy(dtype)
    if np_dtype.kind not in "iu" or not arr.size or arr.dtype.kind not in "iuf":
        return
    info = np.iinfo(np_dtype)
    lo = -int(info.max) if np_dtype.kind == "u" and arr.dtype.kind in "iu" else int(info.min)
    with quiet_numpy():
        bad = arr.min() < lo or arr.max() > info.max or arr.dtype.kind == "f" and np.isnan(arr).any()
    if bad:
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


def _first(data):
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return data


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


@defop("tensor", None, CREATION)
def _from_array(arr):
    return arr


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor copying `data` (nested lists, numbers, NumPy arrays, tensors)."""
    meta = check_device(device)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning, stacklevel=2)
    return _finish(_create(_from_array, (_array_from_data(data, dtype),), meta), requires_grad)


# NOTE [ Creating meta tensors ]
# A factory called with device="meta" dispatches the same op, computed by its meta rule: the op's
# parameters (shape, dtype) are all it needs, and no memory is touched (NOTE [ Meta payloads ]).

def _create(op, params, meta):
    if meta:
        return _wrap(run_meta(op, (), params))
    return dispatch(op, (), params)


_from_array.meta_(lambda arr: meta_array(arr.shape, arr.dtype))


def as_tensor(data, *, dtype=None, device=None):
    """Like `tensor`, but shares memory with a tensor or NumPy array when no conversion is needed (torch's
    parser takes dtype and device by keyword only)."""
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if isinstance(data, np.ndarray):
        t = from_numpy(data)
        return t if dtype is None or t.dtype is dtype else t.to(dtype)
    return tensor(data, dtype=dtype)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    if copy:
        return tensor(obj, dtype=dtype, requires_grad=requires_grad)
    t = as_tensor(obj, dtype=dtype, device=device)
    return _finish(t, requires_grad)


def from_numpy(ndarray):
    """A tensor sharing memory with NumPy array `ndarray` (no copy)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                         "between byte orders is currently not supported.")
    _dtypes.from_numpy(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are not "
            "currently supported. (You can probably work around this by making a copy of your array  with "
            "array.copy().) ")
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                         "between byte orders is currently not supported.")
    if not ndarray.flags.writeable:
        warnings.warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This means "
            "writing to this tensor will result in undefined behavior. You may want to copy the array to protect "
            "its data or make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program.", UserWarning, stacklevel=2)
    keep_numpy_strides(ndarray)
    return _wrap(ndarray)


def constant_like(ndarray, like):
    """NumPy array `ndarray`, a constant computed from shapes alone (index lists, interpolation weights), as a
    tensor on the device of tensor `like` (on meta: its shape and dtype, as torch's kernels make such
    constants on their input's device)."""
    t = from_numpy(ndarray)
    return t if like.device.type == "cpu" else t.to(like.device)


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing memory with any DLPack producer (NumPy arrays, torch tensors, ...); copy=True copies."""
    check_device(device)
    if isinstance(ext_tensor, Tensor):
        return ext_tensor.clone() if copy else ext_tensor
    if not hasattr(ext_tensor, "__dlpack__"):  # (torch hands anything else to its capsule reader)
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                           "only once, so you might have already constructed a tensor from it once.")
    try:
        arr = np.from_dlpack(ext_tensor)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return _wrap(arr.copy() if copy else arr)


# ---- filled tensors -------------------------------------------------------------------------------------

@defop("full", None, CREATION)
def _full(shape, fill, dtype):  # (dtype: an ember dtype; so are all the factories')
    np_dtype = _dtypes.to_numpy(dtype)
    if fill == 0 and type(fill) is not float:  # np.zeros maps fresh zeroed pages: far cheaper than a fill
        return np.zeros(shape, np_dtype)
    return np.full(shape, fill, np_dtype)


@defop("empty", None, CREATION)
def _empty(shape, dtype):
    np_dtype = _dtypes.to_numpy(dtype)
    return np.empty(shape, np_dtype)


_full.meta_(lambda shape, fill, dtype: meta_array(shape, dtype))
_empty.meta_(lambda shape, dtype: meta_array(shape, dtype))


_like_strides = like_strides


def _check_size(shape, name=None):
    for s in shape:
        if s < 0:
            if name:
                raise RuntimeError(f"{name}: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _creator(name, fill):
    def fn(*size_, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False, memory_format=None, names=None):
        meta = check_device(device)
        shape = _check_size(as_shape(size_ if size is None else (size,)), name)
        t = _create(_full, (shape, fill, _dtype(dtype)), meta)
        if out is not None:
            return finish_out(t, out)
        return _finish(t, requires_grad)
    fn.__name__ = name
    public[name] = fn
    return fn


zeros = _creator("zeros", 0)
ones = _creator("ones", 1)


def empty(*size_, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None, names=None):
    meta = check_device(device)
    t = _create(_empty, (_check_size(as_shape(size_ if size is None else (size,))), _dtype(dtype)), meta)
    if out is not None:
        return finish_out(t, out)
    return _finish(t, requires_grad)


def _fill_dtype(value, dtype):
    if dtype is not None:
        return dtype
    if isinstance(value, Tensor):
        return value.dtype
    if isinstance(value, (bool, np.bool_)):
        return _dtypes.bool
    if isinstance(value, (int, np.integer)):
        return _dtypes.int64
    if isinstance(value, complex):
        return _dtypes.complex64
    return _dtypes.get_default_dtype()


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, names=None,
         pin_memory=False):
    meta = check_device(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    d = _fill_dtype(fill_value, dtype)
    shape = _check_size(as_shape((size,)))
    fill_value = checked_scalar(fill_value, _dtypes.to_numpy(d), int(np.prod(shape)))
    return finish_out(_finish(_create(_full, (shape, fill_value, d), meta), requires_grad), out)


@defop("full_like", None, CREATION)
def _full_like(a, fill, dtype):
    return np.full_like(a, fill, dtype=_dtypes.to_numpy(dtype))


@_full_like.meta_
def _(a, fill, dtype):
    return meta_array(a.shape, dtype, _like_strides(a))


@defop("empty_like", None, CREATION)
def _empty_like(a, dtype):
    return np.empty_like(a, dtype=_dtypes.to_numpy(dtype))


_empty_like.meta_(lambda a, dtype: meta_array(a.shape, dtype, _like_strides(a)))


def _like(name, fill):
    def fn(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
           pin_memory=False):
        try:
            meta = check_device(device) if device is not None else input.is_meta  # (no default device)
        except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
            raise call_error(e) from None
        d = dtype if dtype is not None else input.dtype
        if meta:
            t = _wrap(meta_array(input.shape, d, _like_strides(input)))
        elif input.is_meta:  # off the meta device: fresh memory laid out as torch's empty_like lays it
            t = empty_strided(tuple(input.shape), _like_strides(input), dtype=d)
            if fill is not None:
                t.fill_(fill)
        elif fill is None:
            t = dispatch(_empty_like, (input.detach(),), (d,))
        else:
            t = dispatch(_full_like, (input.detach(),), (fill, d))
        return _finish(t, requires_grad)
    fn.__name__ = name
    public[name] = fn
    return fn


zeros_like = _like("zeros_like", 0)
ones_like = _like("ones_like", 1)
empty_like = _like("empty_like", None)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    check_device(device)
    d = dtype if dtype is not None else input.dtype
    fill_value = checked_scalar(fill_value.item() if isinstance(fill_value, Tensor) else fill_value,
                                _dtypes.to_numpy(d), input._data.size)
    return _finish(dispatch(_full_like, (input.detach(),), (fill_value, d)), requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    meta = check_device(device)
    size, stride = tuple(size), tuple(stride)
    for n in size:  # (torch's checks, before any storage: negative sizes, then a storage size that underflows)
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(size)}")
    if all(size) and any(st < 0 and n > 1 for n, st in zip(size, stride)):  # (unsigned arithmetic in torch)
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    return _finish(_create(_empty_strided, (tuple(size), tuple(stride), _dtype(dtype)), meta), requires_grad)


@defop("empty_strided", None, CREATION)
def _empty_strided(size, stride, dtype):
    d = _dtypes.to_numpy(dtype)
    n = 1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    return np.ndarray(size, d, buffer=np.empty(n, d), strides=tuple(st * d.itemsize for st in stride))


_empty_strided.meta_(lambda size, stride, dtype: meta_array(size, dtype, stride))


def _new(name, fn):
    def method_(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
                pin_memory=False):
        args = args if size is None else (size,)
        return fn(*args, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)
    method_.__name__ = name
    setattr(Tensor, name, method_)


_new("new_zeros", zeros)
_new("new_ones", ones)
_new("new_empty", empty)
Tensor.new_full = lambda self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, \
    pin_memory=False: full(
    size, fill_value, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)
Tensor.new_tensor = lambda self, data, *, dtype=None, device=None, requires_grad=False, pin_memory=False: tensor(
    data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)
Tensor.new_empty_strided = lambda self, size, stride, *, dtype=None, device=None, requires_grad=False, \
    layout=None, pin_memory=False: \
    empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)



def _tensor_new(self, *args, size=None, other=None, storage=None, device=None):
    """Tensor.new, the legacy constructor of self's dtype: `x.new(2, 3)` or `x.new(Size)` (uninitialized),
    `x.new([1, 2])` (data), `x.new(other)` (other itself, which must have self's dtype), `x.new()` (empty).
    A tensor over a given storage (`x.new(storage)`) is not built yet: it fails saying so."""
    check_device(device)
    if storage is not None or len(args) == 1 and type(args[0]).__name__ in ("UntypedStorage", "TypedStorage"):
        raise NotImplementedError("ember does not implement Tensor.new(storage) yet")
    args = (size,) if size is not None else (other,) if other is not None else args
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype != self.dtype:
            def options(d):
                return (f"TensorOptions(dtype={_dtypes.CPP_NAME[d.name]}, device=cpu, layout=Strided, requires_grad="
                        "false (default), pinned_memory=false (default), memory_format=(nullopt))")
            raise TypeError(f"expected {options(self.dtype)} (got {options(other.dtype)})")
        return other.detach()
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)) and type(args[0]).__name__ != "Size":
        return tensor(args[0], dtype=self.dtype)
    return empty(as_shape(args) if args else (0,), dtype=self.dtype)


Tensor.new = _tensor_new

def _legacy_new(cls, args, kwargs):
    """Tensor(2, 3) (uninitialized float32) and Tensor([1, 2]) (data as float32)."""
    check_device(kwargs.get("device"))
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        data = args[0]
        if isinstance(data, Tensor):
            return _wrap(data._data, cls)
        arr = np.array(data, dtype=_np_dtype(None)) if not isinstance(data, tuple) or data else np.empty(0, np.float32)
        return _wrap(arr, cls)
    return _wrap(np.empty(as_shape(args), _np_dtype(None)), cls)


# ---- ranges ---------------------------------------------------------------------------------------------

@defop("arange", None, CREATION)
def _arange(start, step, n, dtype):
    np_dtype = _dtypes.to_numpy(dtype)
    if np_dtype.kind in "iu":
        return (start + step * np.arange(n, dtype=np.int64)).astype(np_dtype)
    return (start + step * np.arange(n, dtype=np.float64)).astype(np_dtype)


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False):
    """Values from `start` to `end` (exclusive) by `step`; int64 unless an argument is a float."""
    meta = check_device(device)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        is_float = builtins.any(isinstance(v, (float, np.floating)) for v in vals)
        dtype = _dtypes.get_default_dtype() if is_float else _dtypes.int64
    try:
        if not np.isfinite(end - start):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(np.ceil((end - start) / step))
    n = builtins.max(n, 0)
    t = _create(_arange, (start, step, n, dtype), meta)
    if out is not None:
        return finish_out(t, out)
    return _finish(t, requires_grad)


_arange.meta_(lambda start, step, n, dtype: meta_array((n,), dtype))


@defop("linspace", None, CREATION)
def _linspace(start, end, steps, dtype):
    d = _dtypes.to_numpy(dtype)
    if steps == 1:
        return np.full(1, start, d)
    wide = np.float64 if d.kind != "f" or d.itemsize >= 4 else np.float32
    step = (end - start) / (steps - 1)
    idx = np.arange(steps, dtype=wide)
    half = steps // 2
    # torch fills the first half from the start and the second half from the end (exact endpoints)
    vals = np.where(idx < half, start + step * idx, end - step * (steps - 1 - idx))
    return vals.astype(d)


_linspace.meta_(lambda start, end, steps, dtype: meta_array((steps,), dtype))


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    meta = check_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    t = _create(_linspace, (start, end, steps, _dtype(dtype)), meta)
    return finish_out(_finish(t, requires_grad), out)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    if check_device(device):
        return finish_out(_finish(linspace(start, end, steps, dtype=dtype, device=device), requires_grad), out)
    exps = linspace(start, end, steps, dtype=_dtypes.float64)
    return finish_out(_finish((base ** exps).to(_dtype(dtype)), requires_grad), out)


@defop("eye", None, CREATION)
def _eye(n, m, dtype):
    return np.eye(n, m, dtype=_dtypes.to_numpy(dtype))


_eye.meta_(lambda n, m, dtype: meta_array((n, m), dtype))


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    meta = check_device(device)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    return finish_out(_finish(_create(_eye, (n, n if m is None else m, _dtype(dtype)), meta), requires_grad), out)


# ---- tril / triu / meshgrid -------------------------------------------------------------------------------

@defop("tril", "TrilBackward0", POINTWISE, saves="none")
def _tril(a, k):
    return np.tril(a, k)


@_tril.derivative_
def _(g, a, k):
    return g.tril(k)


@defop("triu", "TriuBackward0", POINTWISE, saves="none")
def _triu(a, k):
    return np.triu(a, k)


@_triu.derivative_
def _(g, a, k):
    return g.triu(k)


# torch's tril / triu give a contiguous result whatever the input's layout
_tril.meta_(lambda a, k: meta_array(a.shape, a._data.dtype))
_triu.meta_(lambda a, k: meta_array(a.shape, a._data.dtype))


@method()
def tril(input, diagonal: int = 0, *, out=None):
    try:
        if input._data.ndim < 2:
            raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(dispatch(_tril, (input,), (diagonal,)), out)


@method()
def triu(input, diagonal: int = 0, *, out=None):
    try:
        if input._data.ndim < 2:
            raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(dispatch(_triu, (input,), (diagonal,)), out)


Tensor.tril_ = lambda self, diagonal=0: dispatch_inplace(_tril, self, (self,), (diagonal,))
Tensor.triu_ = lambda self, diagonal=0: dispatch_inplace(_triu, self, (self,), (diagonal,))


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    try:
        shape = tuple(t.numel() for t in ts)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    n = len(ts)
    out = [t.reshape(tuple(-1 if i == k else 1 for i in range(n))).expand(shape) for k, t in enumerate(ts)]
    if swap:  # 'xy' is 'ij' on the first two inputs swapped, with the first two outputs swapped back
        out[0], out[1] = out[1], out[0]
    return tuple(out)


# ---- fill_, zero_ -----------------------------------------------------------------------------------------

# torch's nodes: fill_.Scalar FillBackward2, fill_.Tensor FillBackward3 (the value tensor gets the sum of
# the gradient), zero_ ZeroBackward0


@defop("fill_", "FillBackward2", POINTWISE, saves="none")
def _fill(a, value):
    return np.full_like(a, value)


@_fill.derivative_
def _(g, a, value):
    return g * 0


@defop("fill_", "FillBackward3", POINTWISE, saves="none", overload="Tensor")
def _fill_t(a, value):
    return np.full_like(a, value)


@_fill_t.derivative_
def _(g, a, value):
    return g * 0, g.sum()


@defop("zero_", "ZeroBackward0", POINTWISE, saves="none")
def _zero(a):
    return np.zeros_like(a)


_zero.derivative_(lambda g, a: g * 0)
for _op in (_fill, _fill_t):
    _op.meta_(lambda a, value: meta_array(a.shape, a._data.dtype, like_strides(a)))
_zero.meta_(lambda a: meta_array(a.shape, a._data.dtype, like_strides(a)))


def _fill_(self, value):
    if isinstance(value, Tensor):
        # under vmap torch's rule copies the value into self (ember/func/_rules.py `_fill_tensor`): no range
        # check, which would read the value (an int8 self takes 1e4 as 16), and no dim check of a batched one
        vmapped = _modes and (type(self).__name__ == "BatchedTensor" or type(value).__name__ == "BatchedTensor")
        if value._data.ndim and not (vmapped and type(value).__name__ == "BatchedTensor"):
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        if vmapped:
            return dispatch_inplace(_fill_t, self, (self, value))
        # torch's fill_.Tensor is self.copy_(value): the value is cast as copy_ casts it, with no range check
        # (a uint8 self takes -1.0 as 255 and -0.86 as 0, where the Python number -0.86 is refused)
        if value.dtype != self.dtype:
            value = value.to(self.dtype)
        return dispatch_inplace(_fill_t, self, (self, value))
    return dispatch_inplace(_fill, self, (self,), (checked_scalar(value, self._data.dtype, self._data.size),))


Tensor.fill_ = _fill_
Tensor.zero_ = lambda self: dispatch_inplace(_zero, self, (self,))


# ---- to() and the dtype shorthands ----------------------------------------------------------------------


def _parse_to(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    other = None
    for a in args:
        if isinstance(a, _dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            other = a
        elif isinstance(a, (str, _device_cls)) or (isinstance(a, int) and not isinstance(a, bool)):
            dev = a
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    if other is not None:
        dtype = other.dtype
    return dtype, dev


def to(self, *args, non_blocking=False, copy=False, memory_format=None, **kwargs):
    """Cast and/or move: `to(dtype)`, `to(device)`, `to(other)`; returns self when nothing changes."""
    dtype, dev = _parse_to(args, kwargs)
    if dev is not None and check_device(dev) != self.is_meta:
        if self.is_meta:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        moved = _wrap(meta_array(self.shape, (dtype or self.dtype), _like_strides(self)))
        return _finish(moved, self._requires_grad) if self._grad_fn is None else moved
    if dtype is None or dtype is self.dtype:
        return self.clone() if copy else self
    return dispatch(_to_dtype, (self,), (dtype,))


Tensor.to = to


def _caster(name, dtype):
    def fn(self, memory_format=None):
        return self.to(dtype)
    fn.__name__ = name
    setattr(Tensor, name, fn)


for _name, _dt in (("float", _dtypes.float32), ("double", _dtypes.float64), ("half", _dtypes.float16),
                   ("bfloat16", _dtypes.bfloat16), ("long", _dtypes.int64), ("int", _dtypes.int32),
                   ("short", _dtypes.int16), ("char", _dtypes.int8), ("byte", _dtypes.uint8),
                   ("bool", _dtypes.bool), ("cfloat", _dtypes.complex64), ("cdouble", _dtypes.complex128)):
    _caster(_name, _dt)


def _type(self, dtype=None, non_blocking=False, **kwargs):
    from .._tensor_str import legacy_type_name

    if dtype is None:
        return legacy_type_name(self)
    if not isinstance(dtype, (str, type, _dtypes.dtype)):
        raise TypeError("dtype must be a type, str, or dtype object")
    if isinstance(dtype, str):
        from .._tensor_str import dtype_from_legacy_name

        dtype = dtype_from_legacy_name(dtype)
    elif isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), _dtypes.dtype):
        dtype = dtype.dtype  # a legacy type: x.type(torch.DoubleTensor)
    return self.to(dtype)


Tensor.type = _type
def _type_as(self, other):
    return self.to(attr_of_other(other, "dtype"))


Tensor.type_as = _type_as


public.update(tensor=tensor, as_tensor=as_tensor, asarray=asarray, from_numpy=from_numpy, from_dlpack=from_dlpack,
              empty=empty, full=full, full_like=full_like, empty_strided=empty_strided, arange=arange,
              linspace=linspace, logspace=logspace, eye=eye, meshgrid=meshgrid)

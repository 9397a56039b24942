"""ember.Tensor: a NumPy array view plus the fields autograd needs.

NOTE [ Tensor layout ]
The only per-instance slot is `_data`, the NumPy array (a view into the storage's flat buffer, see
NOTE [ Storage is derived, not stored ]). Everything else autograd needs (`_grad_fn`, `_requires_grad`,
`_grad`, `_base`, `_vc`, hooks) is a class attribute holding its default and lands in the instance
`__dict__` only when set. A tensor made with no grad recording therefore costs one object and one slot
store, which is what keeps tiny-op overhead near torch's.

NOTE [ Version counters ]
`_vc` is a one-element list shared by a tensor, its views and its `detach()`es; in-place ops bump it and
saved tensors compare it (see autograd/graph.py). It is created on first need (`_version_counter`): a view
looks it up through its `_base`, so making a view stores nothing but the base.

NOTE [ Where the methods are ]
This file holds the core protocol: construction, metadata (shape, stride, storage), conversions and
autograd fields. Op methods (`add`, `__add__`, `view`, `sum`, ...) are attached by the op modules in
`ember/_ops/`, where each op is declared once.
"""

from __future__ import annotations

import operator
import weakref

import numpy as np

from . import _dtypes, _naming
from ._device import check_device, cpu
from ._device import device as _device_cls
from ._grad_state import state as _grad_state
from ._meta import MetaArray
from ._size import Size
from ._storage import TypedStorage, UntypedStorage, _address, _flat_bytes, _root, warn_typed_storage
from ._tensor_str import tensor_repr

__all__ = ["Tensor"]

_new = object.__new__
_ndarray = np.ndarray


def _real_part(v, word):
    """A complex scalar as torch converts it to a real C++ type: its real part, if its imaginary part is 0."""
    if v.imag != 0:
        raise RuntimeError(f"value cannot be converted to type {word} without overflow")
    return v.real


class Tensor:
    """A multi-dimensional array with autograd, mirroring ``torch.Tensor``."""

    __slots__ = ("_data", "__dict__", "__weakref__")
    __module__ = "ember"

    # defaults, overridden per instance only when set (NOTE [ Tensor layout ])
    _grad_fn = None
    _requires_grad = False
    _grad = None
    _base = None
    _vc = None
    _output_nr = 0
    _retains_grad = False
    _hooks = None  # tensor hooks of a leaf (non-leaf hooks live on grad_fn)
    _post_acc_hooks = None
    _acc = None  # weakref to the AccumulateGrad node of a leaf
    _is_inference = False
    _is_param = False
    _fw_grad = None  # forward AD (F): the tangent at the active dual level (ember.autograd.forward_ad)

    def __new__(cls, *args, **kwargs):
        # Legacy constructor: Tensor(2, 3) is uninitialized float32; Tensor([1, 2]) copies data.
        from ._ops.creation import _legacy_new

        return _legacy_new(cls, args, kwargs)

    def __init__(self, *args, **kwargs):
        pass

    def __init_subclass__(cls, **kwargs):
        # A subclass with a dispatch hook (ember's `__ember_dispatch__`, or torch's `__torch_dispatch__` in
        # code written for torch) sees every op on its instances, below autograd (NOTE [ The mode stack ]).
        super().__init_subclass__(**kwargs)
        hook = cls.__dict__.get("__ember_dispatch__") or cls.__dict__.get("__torch_dispatch__")
        if hook is not None:
            from ._dispatch import _hooked, _modes

            if "__ember_dispatch__" not in cls.__dict__:
                cls.__ember_dispatch__ = hook
            _hooked.append(cls)
            _modes.append(cls)

    # ---- metadata --------------------------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Size | int:
        if dim is None:
            return Size(self._data.shape)
        try:
            return self._data.shape[_wrap_dim(dim, self._data.ndim)]
        except IndexError:
            raise _no_dims(self, dim) from None

    @property
    def dtype(self) -> _dtypes.dtype:
        d = self._data.dtype
        r = _dtypes._from_np.get(d)
        return r if r is not None else _dtypes.from_numpy(d)

    @property
    def device(self) -> _device_cls:
        return cpu if type(self._data) is not MetaArray else _META

    @property
    def is_meta(self) -> bool:
        return type(self._data) is MetaArray

    @property
    def is_cpu(self):
        return type(self._data) is not MetaArray

    is_cuda = False
    is_sparse = False
    is_quantized = False
    is_mkldnn = False
    is_nested = False
    layout = None  # `strided`, set below the class (a layout object, as torch prints it)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def stride(self, dim: int | None = None) -> tuple | int:
        a = self._data
        item = a.itemsize
        st = tuple(s // item for s in a.strides)
        if a.size == 0 and not any(st) and type(a) is not MetaArray and id(_root(a)) not in _numpy_strides:
            st = contiguous_strides(a.shape)  # (NOTE [ Strides of empty tensors ])
        if dim is None:
            return st
        try:
            return st[_wrap_dim(dim, a.ndim)]
        except IndexError:
            raise _no_dims(self, dim) from None

    def storage_offset(self) -> int:
        a = self._data
        if type(a) is MetaArray:
            return a.offset
        return (_address(a) - _address(_root_start(a))) // a.itemsize

    def data_ptr(self) -> int:
        return _address(self._data) if type(self._data) is not MetaArray else 0

    def untyped_storage(self):
        return UntypedStorage(_flat_bytes(self._data))

    def storage(self):
        warn_typed_storage()
        return TypedStorage(self.untyped_storage(), self.dtype)

    def is_contiguous(self, memory_format=None) -> bool:
        a = self._data
        if memory_format is not None and memory_format is not contiguous_format:
            return _is_channels_last(a, memory_format)
        return _is_contiguous(a)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f" or self._data.dtype.kind == "V"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_signed(self):
        return self.dtype.is_signed

    def get_device(self):
        return -1

    def is_shared(self):  # area M: See NOTE [ Shared storages ] in ember/_shared_memory.py
        """Whether the tensor's storage is in memory shared between processes."""
        from ._shared_memory import is_shared_array, share_

        if type(self._data) is MetaArray or not is_shared_array(self._data):
            return False
        share_(self)  # (re-points a view made before its base was shared: NOTE [ Shared storages ])
        return True

    def is_pinned(self, device=None):
        return False

    def is_set_to(self, tensor):
        return (self.data_ptr() == tensor.data_ptr() and self.shape == tensor.shape
                and self.stride() == tensor.stride())

    # ---- autograd fields ---------------------------------------------------------------------------------

    # NOTE [ Tensors inside jvp ]
    # Inside `ember.func.jvp(f, ...)` torch's f sees wrappers at the jvp's level, whose autograd fields are their
    # own: a primal, and whatever f computes from it, answers requires_grad False, grad_fn None, is_leaf True,
    # even where the tensor underneath requires grad (an input that does, a product with a parameter that
    # does) and the gradient of an enclosing grad flows through it. ember's f sees the dual tensors
    # themselves, so these three properties answer as torch's wrappers do for a tensor carrying a tangent
    # while a jvp is the innermost grad/vjp/jvp transform running (`_grad_state.func_jvp_inner`, set by the
    # transform). ember's own code that decides what autograd records asks `tracks_grad` / `history_of`,
    # which see through them. Off the op path: the dispatcher and autograd read the fields themselves.

    @property
    def grad_fn(self):
        if self._fw_grad is not None and _grad_state.func_jvp_inner:  # NOTE [ Tensors inside jvp ]
            return None
        return history_of(self)

    @property
    def is_leaf(self) -> bool:
        if self._fw_grad is not None and _grad_state.func_jvp_inner:  # NOTE [ Tensors inside jvp ]
            return True
        return self._grad_fn is None

    @property
    def requires_grad(self) -> bool:
        if self._fw_grad is not None and _grad_state.func_jvp_inner:  # NOTE [ Tensors inside jvp ]
            return False
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self._grad_fn is not None:
            if value:
                raise RuntimeError("you can only change requires_grad flags of leaf variables.")
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        if value and not (self.is_floating_point() or self.is_complex()):
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if value and self._is_inference:
            if not _grad_state.inference:
                raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not "
                                   "allowed.")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad=True):
        if _grad_state.func_transforms and not _grad_state.func_requires_grad_ok:  # (V) ember.func
            from .func._batched import refuse_in_transform

            refuse_in_transform("requires_grad_")
        if requires_grad and not (self.is_floating_point() or self.is_complex()):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")  # torch's wording here
        if requires_grad and self._grad_fn is not None:
            return self  # a non-leaf already requires grad
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_dtypes.CPP_NAME[value.dtype.name]}' to a tensor "
                    "with "
                    f"grad_dtype '{_dtypes._WORD[self.dtype.name]}'. The gradient must match the tensor's grad_dtype "
                    "(defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific "
                    "dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor "
                    "and its gradient may break downstream systems that assume they match.")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor of size "
                    f"'{list(self._data.shape)}'. Please ensure that the gradient and the tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def _version(self):
        return _version_counter(self)[0]

    @property
    def data(self):
        # `.data` shares storage but not the version counter or history: changes through it are invisible
        # to autograd, which is the documented (and dangerous) point of it.
        d = _wrap(self._data)
        if self._is_inference:
            d._is_inference = True
        return d

    @data.setter
    def data(self, value):
        if _grad_state.func_grad_levels:  # (V) NOTE [ Refusals inside a transform ] (ember/func/_batched.py)
            raise RuntimeError("mutating directly with `.data` inside functorch transform is not allowed.")
        self._data = value._data

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def output_nr(self):
        return self._output_nr

    def is_inference(self):
        return self._is_inference

    # ---- conversions ---------------------------------------------------------------------------------------

    def numpy(self, *, force=False):
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if type(self._data) is MetaArray:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                            "to host memory first.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        a = self._data
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __dlpack__(self, *args, **kwargs):
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return (1, 0)

    def tolist(self):
        if type(self._data) is MetaArray:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self._data.tolist()

    def item(self) -> int | float | bool | complex:
        a = self._data
        if a.size != 1:
            raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
        if type(a) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return a.reshape(()).item() if a.dtype.kind != "V" else float(a.reshape(()))

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        a = self._data
        if a.size != 1:
            if a.size == 0:
                raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        if type(a) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return bool(a.reshape(()))

    def __float__(self):
        v = self._scalar("float")
        return float(v if v.dtype.kind != "c" else _real_part(v, "double"))

    def __int__(self):
        v = self._scalar("int")
        return int(v if v.dtype.kind != "c" else _real_part(v, "int64_t"))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def __index__(self):
        a = self._data
        if a.dtype.kind not in "iub" or a.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(a.reshape(()))

    def _scalar(self, kind):
        a = self._data
        if a.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if type(a) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return a.reshape(()).astype(np.float32) if a.dtype.kind == "V" else a.reshape(())

    def __hash__(self):
        return id(self)

    def __repr__(self, *, tensor_contents=None):
        return tensor_repr(self)

    def __format__(self, spec):
        # torch's rule: a 0-d plain Tensor formats as its Python number (f"{loss}" gives 0.25, f"{loss:.3f}"
        # 0.250); anything else, a Parameter included, as object.__format__ (str, or a TypeError for a spec)
        if self._data.ndim == 0 and type(self) is Tensor:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        from .serialization import _reduce_tensor

        return _reduce_tensor(self)

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
                "the moment.  If you were attempting to deepcopy a module, this may be because of a "
                "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
            )
        if id(self) in memo:
            return memo[id(self)]
        from ._utils import _deepcopy_array

        new = _wrap(_deepcopy_array(self._data, memo), type(self))
        new.__dict__.update(
            {k: v for k, v in self.__dict__.items() if k not in ("_grad", "_vc", "_base", "_acc", "_hooks")}
        )
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new

    @property
    def T(self):
        n = self._data.ndim
        if n == 2:
            return self.t()
        return self.permute(*range(n - 1, -1, -1))

    @property
    def mT(self):
        if self._data.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return self.transpose(-2, -1)

    @property
    def H(self):
        return self.T.conj() if self.is_complex() else self.T

    @property
    def mH(self):
        return self.mT.conj() if self.is_complex() else self.mT

    def cpu(self, memory_format=None):
        if type(self._data) is MetaArray:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self

    def cuda(self, *args, **kwargs):
        check_device("cuda")

    def pin_memory(self, device=None):
        return self

    def share_memory_(self):  # area M: See NOTE [ Shared storages ] in ember/_shared_memory.py
        """Move the storage to memory shared between processes (a no-op if it is already there)."""
        from ._shared_memory import share_

        return share_(self)

    def as_subclass(self, cls: type) -> Tensor:
        """The same tensor (data, version counter, autograd history) as an instance of `cls`."""
        _version_counter(self)
        t = _new(cls)
        t._data = self._data
        t.__dict__.update(self.__dict__)
        return t

    @classmethod
    def _make_subclass(cls, data, require_grad=False):
        t = _wrap(data._data, cls)
        if require_grad:
            t.requires_grad_(True)
        return t


_META = _device_cls("meta")


def _wrap(arr: np.ndarray | MetaArray, cls: type = Tensor) -> Tensor:
    """A new Tensor over NumPy array `arr` (no copy). The hot path of every op."""
    t = _new(cls)
    t._data = arr
    return t


def history_of(t: Tensor):
    """`t.grad_fn` as autograd has it (seen through NOTE [ Tensors inside jvp ])."""
    if t._base is not None and "_view_version" in t.__dict__:
        from .autograd.graph import grad_edge  # a view's grad_fn is remade after its base changed in place

        return grad_edge(t)[0]
    return t._grad_fn


_REQUIRES_GRAD = Tensor.requires_grad


def tracks_grad(t: Tensor) -> bool:
    """`t.requires_grad` as autograd has it (seen through NOTE [ Tensors inside jvp ]; a subclass that answers
    otherwise, BatchedTensor, answers itself)."""
    return t._requires_grad if type(t).requires_grad is _REQUIRES_GRAD else t.requires_grad


def _version_counter(t: Tensor) -> list:
    """The version counter shared by `t`, its views and detaches (NOTE [ Version counters ]).

    A view made by an op records only its `_base`; it shares the base's counter, found here on first need.
    """
    vc = t._vc
    if vc is None:
        base = t._base
        vc = t._vc = _version_counter(base) if base is not None else [0]
    return vc


def _root_start(a):
    r = _root(a)
    if r.flags.c_contiguous or r.flags.f_contiguous:
        return r
    return _flat_bytes(a)


def _no_dims(t, dim):
    """The IndexError of `t.size(dim)` / `t.stride(dim)` out of range: for a 0-d tensor torch names any dim."""
    if t._data.ndim == 0:
        return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    try:
        _wrap_dim(dim, t._data.ndim)
    except (IndexError, TypeError) as e:
        return e
    return IndexError("tuple index out of range")


def _wrap_dim(dim, ndim):
    n = ndim if ndim > 0 else 1
    if dim.__class__ is not int:  # a bool, float, str or None dim is refused as torch's parser does; a NumPy
        dim = _other_dim(dim)     # integer or a 0-d integer tensor is an int (NOTE [ Typed arguments ])
    if -n <= dim < n:
        return dim + n if dim < 0 else dim
    raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")


def _other_dim(dim):
    """A dim that is not a Python int: torch's parser takes what has `__index__` but a bool (NumPy integers,
    0-d integer tensors); anything else is its TypeError (NOTE [ Argument types on the error path ])."""
    if not isinstance(dim, (bool, np.bool_)) and not (isinstance(dim, Tensor) and (
            dim._data.ndim or dim._data.dtype.kind not in "iu")):
        try:
            return operator.index(dim)
        except TypeError:
            pass
    from ._argparse import call_error
    raise call_error(TypeError(f"dim must be an int, got {type(dim).__name__}")) from None


# NOTE [ Strides of empty tensors ]
# torch keeps whatever strides an empty tensor was made with. An op's fresh output is contiguous, but
# `from_numpy` and `tensor` of a NumPy array take NumPy's strides, and NumPy gives every empty array it
# makes all-zero strides; views and preserve-format copies (`clone`, `to`, `.to("meta")`) carry those on.
# An ember kernel's empty output has NumPy's zero strides too, so `stride()` reads the all-zero strides of
# an empty array as contiguous, except where the array's memory came in from NumPy: those owners are
# remembered here (weakly, by id), and their strides are torch's as they stand. A meta payload's strides
# are always its own. (Nothing on an op's path looks: only `stride()` and the constructors from NumPy.)
_numpy_strides = weakref.WeakValueDictionary()


def keep_numpy_strides(arr):
    """Note that `arr` came from NumPy, strides and all (NOTE [ Strides of empty tensors ])."""
    if arr.size == 0 and not any(arr.strides):
        root = _root(arr)
        _numpy_strides[id(root)] = root


def contiguous_strides(shape):
    """Row-major strides in elements, as torch gives a fresh tensor (size-1 dims included)."""
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(st))


def _is_contiguous(a):
    # torch ignores strides of size-1 dims and calls any tensor with a 0-size dim contiguous
    if a.flags.c_contiguous or a.size == 0:
        return True
    expected = a.itemsize
    for size, st in zip(reversed(a.shape), reversed(a.strides)):
        if size != 1:
            if st != expected:
                return False
            expected *= size
    return True


class memory_format:
    __module__ = "ember"

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return _naming.prefix + "." + self.name


class layout:
    """How a tensor's elements are laid out in memory; ember has torch's default, `strided`, only."""

    __module__ = "ember"

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return _naming.prefix + "." + self.name

    def __reduce__(self):
        return self.name  # pickles as the module-level global ember.<name>, as torch's layouts do


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
Tensor.layout = strided


def _is_channels_last(a, fmt):
    perm = (0, 2, 3, 1) if fmt is channels_last else (0, 2, 3, 4, 1)
    if a.ndim != len(perm):
        return False
    return _is_contiguous(a.transpose(perm))

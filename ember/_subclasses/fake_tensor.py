"""Fake tensors: tensors that carry shape, dtype, strides and device, and no data (torch's FakeTensorMode).

A `FakeTensor` is an ember Tensor whose payload is a `MetaArray` (NOTE [ Meta payloads ]) but which
reports the device it stands for (`cpu`), so code that checks devices runs unchanged. `FakeTensorMode` is
a mode below autograd (NOTE [ The mode stack ]): inside it, every op, factories included, computes its
outputs with the registry's meta rules and returns FakeTensors; autograd records on them as on real ones,
so `backward()` runs too, on fake gradients. A capture (make_fx, AOT autograd, ember.compile) runs a
program on fakes to learn every intermediate's metadata without computing anything.

Data never exists: reading it (`item`, `tolist`, `numpy`) raises torch's errors, and an op whose output
shape depends on data (`nonzero`, `unique`, ...) raises `DynamicOutputShapeException`.

    mode = FakeTensorMode()
    x = mode.from_tensor(ember.randn(8, 3))
    with mode:
        y = model(x)        # y.shape, y.dtype, y.stride() as torch's; nothing computed
"""

from __future__ import annotations

import weakref

from .. import _dispatch
from .._device import device as _device_cls
from .._dispatch import HIGHER_ORDER, run_meta
from .._meta import MetaArray
from .._modes import Mode
from .._tensor import Tensor

__all__ = ["FakeTensor", "FakeTensorMode", "UnsupportedFakeTensorException", "DynamicOutputShapeException",
           "DataDependentOutputException", "unset_fake_temporarily"]

_CPU = _device_cls("cpu")


class UnsupportedFakeTensorException(RuntimeError):
    pass


class DynamicOutputShapeException(RuntimeError):
    """An op whose output shape depends on its input's values met fake inputs (`func` is the op)."""

    def __init__(self, func):
        super().__init__(func)
        self.func = func


class DataDependentOutputException(RuntimeError):
    """A fake tensor's values were asked for (`item`, `tolist`): `func` is the op that would read them."""

    def __init__(self, func):
        super().__init__(func)
        self.func = func


class _LocalScalarDense:
    """The name torch gives a read of a tensor's value (`aten._local_scalar_dense.default`)."""

    def __repr__(self):
        return "aten._local_scalar_dense.default"


_LOCAL_SCALAR = _LocalScalarDense()


class FakeTensor(Tensor):
    """A tensor with metadata and no data, made by a `FakeTensorMode` (see the module docstring).

    `fake_mode` is the mode that made it; `fake_device` the device it reports.
    """

    __slots__ = ()
    _param_stays_subclass = True  # nn.Parameter(fake) is a fake flagged `_is_param`, as in torch

    @property
    def device(self) -> _device_cls:
        return self.__dict__.get("fake_device", _CPU)

    @property
    def is_meta(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def fake_mode(self) -> FakeTensorMode:
        return self.__dict__["_fake_mode"]

    def _saved_alias(self):  # (autograd's saved outputs: NOTE [ Saved subclass outputs ])
        return self.__dict__["_fake_mode"]._fake(self._data)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        # a `clone` op (as torch's deepcopy of a tensor is its dispatcher's clone), so a tracer above sees
        # where the copy came from (`copy.deepcopy(module)` inside a traced function: AveragedModel)
        from ..autograd.grad_mode import no_grad

        with no_grad():
            new = self.clone()
        if self.requires_grad:
            new.requires_grad_(True)
        memo[id(self)] = new
        return new

    def detach(self):
        return self.__dict__["_fake_mode"]._fakeify(super().detach())

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if "constant" in self.__dict__:
            return self.__dict__["constant"].item()
        raise DataDependentOutputException(_LOCAL_SCALAR)

    def tolist(self):
        if "constant" in self.__dict__:
            return self.__dict__["constant"].tolist()
        raise DataDependentOutputException(_LOCAL_SCALAR)

    def numpy(self, *, force=False):
        raise RuntimeError(".numpy() is not supported for tensor subclasses.")

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(".numpy() is not supported for tensor subclasses.")

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __float__(self):
        return self.item()

    __int__ = __index__ = __float__

    def __repr__(self, *, tensor_contents=None):
        extra = "" if self.dtype.name == "float32" else f", dtype={self.dtype}"
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"FakeTensor(..., size={tuple(self.shape)}{extra}{grad})"

    def __reduce_ex__(self, proto):
        raise RuntimeError("FakeTensor cannot be pickled: it has no data")


def _in_own_mode(name):
    """A `new_*` factory method run in the tensor's fake mode: its result is a fake, as torch's
    `aten.new_ones(fake)` is (ember's factories take no tensor input for a hook to see)."""
    method = getattr(Tensor, name)

    def in_mode(self, *args, **kwargs):
        from .._dispatch import _local

        mode = self.__dict__["_fake_mode"]
        if mode in _local.below:  # already active (maybe under a tracer, which must see the factory too)
            return method(self, *args, **kwargs)
        with mode:
            return method(self, *args, **kwargs)
    in_mode.__name__ = name
    return in_mode


for _name in ("new_ones", "new_zeros", "new_empty", "new_full", "new_empty_strided", "new_tensor"):
    if hasattr(Tensor, _name):
        setattr(FakeTensor, _name, _in_own_mode(_name))


def _fake_hook(cls, func, types, args, kwargs):
    """An op on FakeTensors outside any FakeTensorMode runs in the mode that made them, as in torch."""
    mode = next(a.__dict__["_fake_mode"] for a in args if isinstance(a, FakeTensor))
    n = func.n_inputs
    return mode.dispatch(func.op, args[:n], args[n:])


# NOTE [ Fakes outside their mode ]
# An op on FakeTensors outside any FakeTensorMode must still run in the mode that made them (torch's
# FakeTensor has its own `__torch_dispatch__`), and the compiler keeps fakes long after its mode has been
# exited: every captured graph holds them in `node.meta["val"]`. A tensor subclass with a dispatch hook is
# normally put on the dispatcher's global `_modes` list, which sends every op of every thread through the
# slower mode path (about 0.3 us an op) while it is there. A fake needs no such flag: its payload is a
# MetaArray, and the first thing a kernel does with it raises NoData, which `_run` already catches off its
# fast path (a kernel that answers from the payload's metadata alone, as `equal` of two shapes does,
# returns something other than an array, which `_run` also looks at off its fast path). There, a hooked
# input (`_hooked` lists FakeTensor while any FakeTensorMode lives) sends the op to the hook, below
# autograd, as the mode path would have; the mode's own computation calls `_run(..., hooks=False)`, where
# NoData means "answer with the meta rule". Eager ops pay nothing. An in-place op on a real tensor with
# fake arguments computes a fake result that cannot be written into real memory: as in torch, the real
# tensor is left as it is (`write_into_real`).
_live_modes = [0]


def _register():
    if _live_modes[0] == 0:
        FakeTensor.__ember_dispatch__ = classmethod(_fake_hook)
        _dispatch._hooked.append(FakeTensor)
    _live_modes[0] += 1


def _unregister():
    _live_modes[0] -= 1
    if _live_modes[0] == 0:
        _dispatch._hooked.remove(FakeTensor)


# NOTE [ When a fake op needs data ]
# A meta rule refuses an op it cannot answer without values: one whose output shape is its input's data
# (`nonzero`, `unique`: the registry's tag `dynamic_output_shape`, and the ops torch tags so, such as
# `linalg_lstsq` and `repeat_interleave` without an output size), or one that returns a value read from the
# data (`equal`, ASGD's step reading eta as a number: the meta rules say "Tensor.item() cannot be called on
# meta tensors"). Under a fake mode torch names these two cases with its own exceptions,
# DynamicOutputShapeException and DataDependentOutputException; `_data_dependence` turns a meta rule's
# refusal into them. Other errors (wrong shapes, wrong dtypes) pass through unchanged.
_TORCH_DYNAMIC = frozenset({"linalg_lstsq", "repeat_interleave", "repeat_interleave.Tensor"})
_TORCH_DATA_DEPENDENT = frozenset({"equal"})


def _data_dependence(op, e: Exception) -> Exception:
    from ..ops import overload_of

    if op.name in _TORCH_DATA_DEPENDENT or op.qualname in _TORCH_DATA_DEPENDENT or \
            str(e) == "Tensor.item() cannot be called on meta tensors":
        return DataDependentOutputException(overload_of(op))
    if ("dynamic_output_shape" in op.tags and isinstance(e, NotImplementedError)) or \
            op.name in _TORCH_DYNAMIC or op.qualname in _TORCH_DYNAMIC:
        return DynamicOutputShapeException(overload_of(op))
    return e


# NOTE [ Constants under a fake mode ]
# torch's FakeTensorMode keeps the value of a small tensor made from Python data (`torch.tensor(0)`, a
# step counter) as the fake's `constant`, and an op whose tensor inputs are all such constants runs for
# real on them, so code that reads a counter (`if self.n_averaged == 0`, `.item()`) still works under the
# mode. The same here: `tensor(data)` with at most one element gives a fake holding the real tensor as
# `constant`; an op (drawing no random numbers) whose tensor inputs all hold constants computes on them,
# and its small results are constants again; an in-place op updates the constant, or drops it when it
# writes values the mode cannot know.
_SMALL = 1


def _constants(op, inputs):
    """The constants standing for `inputs` if every tensor input holds one, else None."""
    out, seen = [], False
    for t in inputs:
        if isinstance(t, Tensor):
            c = t.__dict__.get("constant") if type(t) is FakeTensor else None
            if c is None:
                return None
            out.append(c)
            seen = True
        else:
            out.append(t)
    return out if seen and "nondeterministic_seeded" not in op.tags else None


class FakeTensorMode(Mode):
    """A mode below autograd in which every op computes FakeTensors from the meta rules.

    Args:
        allow_non_fake_inputs: a real tensor given to an op is converted to a fake (by default it is an
            error, as in torch, except for 0-dim tensors, which ops take as scalars).
        static_shapes: accepted for torch's signature (shapes are always static here).
    """

    level = "below"

    def __init__(self, *, allow_fallback_kernels: bool = True, allow_non_fake_inputs: bool = False,
                 shape_env=None, static_shapes=None, export: bool = False):
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.shape_env = shape_env
        self.static_shapes = True if static_shapes is None else static_shapes
        self._memo: dict[int, tuple] = {}  # id(real tensor) -> (real, fake), see from_tensor
        _register()
        weakref.finalize(self, _unregister)

    # ---- making fakes ------------------------------------------------------------------------------------
    def _fake(self, payload: MetaArray, base: FakeTensor | None = None) -> FakeTensor:
        t = object.__new__(FakeTensor)
        t._data = payload
        t.__dict__["_fake_mode"] = self
        if base is not None:
            t._base = base
        return t

    def from_tensor(self, t: Tensor, *, static_shapes=None, source=None, symbolic_context=None) -> FakeTensor:
        """The fake of real tensor `t`: same shape, dtype, strides, storage offset and requires_grad; the
        same fake each time for the same tensor, and views stay views of their base's fake."""
        if isinstance(t, FakeTensor):
            if t.fake_mode is not self:
                raise AssertionError("Mixing fake modes NYI")
            return t
        hit = self._memo.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        a = t._data
        base = self.from_tensor(t._base) if t._base is not None else None
        if type(a) is MetaArray:
            payload = MetaArray(a.shape, a.dtype, a.strides, a.offset)
        else:
            offset = 0
            if t._base is not None and a.size:
                offset = t.storage_offset()
            payload = MetaArray(a.shape, a.dtype, a.strides, offset)
        fake = self._fake(payload, base)
        if t.requires_grad:
            fake.requires_grad_(True)
        self._memo[id(t)] = (t, fake)
        return fake

    from_real_tensor = from_tensor

    # ---- running ops ---------------------------------------------------------------------------------------
    def _convert_inputs(self, op, inputs, params):
        out = list(inputs)
        for i, t in enumerate(inputs):
            if isinstance(t, Tensor) and not isinstance(t, FakeTensor):
                if type(t._data) is MetaArray:
                    continue  # a meta tensor (or a Parameter made over a fake) computes as a fake does
                if t._data.ndim == 0 or self.allow_non_fake_inputs:
                    out[i] = self.from_tensor(t)
                    continue
                from ..ops import overload_of

                shown = ", ".join(_shown(x) for x in tuple(inputs) + tuple(params))
                raise AssertionError("Please convert all Tensors to FakeTensors first or instantiate "
                                     "FakeTensorMode with 'allow_non_fake_inputs'. Found in "
                                     f"{overload_of(op)}({shown})")
            elif isinstance(t, FakeTensor) and t.__dict__["_fake_mode"] is not self:
                raise AssertionError("Mixing fake modes NYI")
        return out

    def dispatch(self, op, inputs, params):
        if op.kind == HIGHER_ORDER:  # its body runs, and its ops come back to this mode one by one
            return _dispatch._bottom(op, inputs, params)
        consts = _constants(op, inputs)
        if consts is not None:  # NOTE [ Constants under a fake mode ]
            return self._constant_fakes(_dispatch._run(op, consts, params))
        if op.name == "tensor" and not inputs:  # `tensor(data)` in the mode: a fake, a constant if small
            return self._constant_fakes(_dispatch._run(op, inputs, params, False))
        inputs = self._convert_inputs(op, inputs, params)
        try:
            if any(isinstance(t, Tensor) for t in inputs):
                out = _dispatch._run(op, inputs, params, False)  # the meta payloads answer with the meta rule
            else:  # a factory: no input says where to compute, so the meta rule says what comes out
                out = _dispatch._wrap_out(op, run_meta(op, inputs, params), None, None)
        except (NotImplementedError, RuntimeError) as e:
            raise _data_dependence(op, e) from None
        return self._fakeify(out)

    def dispatch_inplace(self, op, self_, inputs, params):
        consts = _constants(op, inputs)
        if consts is not None:
            _dispatch._write(op, self_.__dict__["constant"], consts, params)
        elif isinstance(self_, FakeTensor):
            self_.__dict__.pop("constant", None)  # written with values it cannot know: no constant any more
        inputs = self._convert_inputs(op, inputs, params)
        if not isinstance(self_, FakeTensor) and type(self_._data) is not MetaArray:
            raise AssertionError("Please convert all Tensors to FakeTensors first or instantiate "
                                 "FakeTensorMode with 'allow_non_fake_inputs'.")
        return _dispatch._write(op, self_, inputs, params)

    def write_into_real(self, real):
        """An in-place op on a real tensor with fake arguments, outside the mode: torch's mode converts the real
        tensor to a fake (if non-fake inputs are allowed) and writes into that, so the real one is unchanged."""
        if not self.allow_non_fake_inputs:
            raise AssertionError("Please convert all Tensors to FakeTensors first or instantiate "
                                 "FakeTensorMode with 'allow_non_fake_inputs'.")

    def _constant_fakes(self, out):
        if type(out) is tuple:
            return tuple(self._constant_fakes(o) for o in out)
        if not isinstance(out, Tensor):
            return out
        fake = self.from_tensor(out.detach())
        if out._data.size <= _SMALL:
            fake.__dict__["constant"] = out.detach()
        return fake

    def _fakeify(self, out):
        if type(out) is tuple:
            return tuple(self._fakeify(o) for o in out)
        if isinstance(out, Tensor) and type(out) is Tensor and type(out._data) is MetaArray:
            out.__class__ = FakeTensor
            out.__dict__["_fake_mode"] = self
        return out

    def __enter__(self):
        return super().__enter__()


def _shown(x) -> str:
    if isinstance(x, Tensor) and not isinstance(x, FakeTensor):
        return f"tensor([...], size={tuple(x.shape)})"
    return repr(x)


class unset_fake_temporarily:
    """A context with no FakeTensorMode active in this thread (torch's name)."""

    def __enter__(self):
        from .._dispatch import _local

        self._saved = [m for m in _local.below if isinstance(m, FakeTensorMode)]
        _local.below[:] = [m for m in _local.below if not isinstance(m, FakeTensorMode)]
        return None

    def __exit__(self, *exc):
        from .._dispatch import _local

        _local.below.extend(self._saved)

"""BatchedTensor and the vmap level: the mode that runs ops on batched tensors by batching rules.

A `vmap` call pushes one `VmapLevel` (a `Mode` above autograd, NOTE [ vmap levels ]) and wraps the mapped
inputs in `BatchedTensor`s of that level. A BatchedTensor is what the user's function sees: a tensor of
the *logical* shape (the batch dimension hidden) whose payload is a `MetaArray` of that shape (so shape,
dtype, dim(), size() answer as for a tensor of one sample, and any attempt at its data refuses), with the
*physical* tensor (`_value`, one more dimension: the batch, at `_bdim`) beside it. Every op reaching the
level with a BatchedTensor of that level among its inputs goes to the op's batching rule
(`ember/func/_rules.py`), which calls ops on the physical tensors; those ops go to the next level down
(an outer vmap, autograd, the kernel), so nested vmaps and autograd compose.

`expose` and `cover` move one level's batch dimension in and out of the logical shape (functorch's
`_remove_batch_dim` / `_add_batch_dim`); the function transforms (`grad`, `vjp`) use them to reach the
physical tensors of every level at once (NOTE [ grad under vmap ] in `_transforms.py`).
"""

from __future__ import annotations

import threading

from .. import _dtypes
from .._dispatch import _local, redispatch, redispatch_inplace
from .._grad_state import state as _grad_state
from .._meta import MetaArray
from .._modes import Mode
from .._ops import _util as _ops_util
from .._tensor import Tensor, _wrap, history_of, tracks_grad

__all__ = ["BatchedTensor", "VmapLevel", "expose", "cover", "active_levels", "is_batched"]

# NOTE [ vmap levels ]
# functorch gives each transform a level and keeps them on an interpreter stack; ember's mode stack is that
# stack. A vmap call pushes a `VmapLevel` above autograd, numbered one more than the innermost level alive
# in this thread (`_levels`), so the innermost transform is on top and sees ops first. A handler runs with
# itself popped (NOTE [ The mode stack ]): the ops a batching rule calls on physical tensors go to the
# levels below it, which batch them again if they carry *their* BatchedTensors (vmap(vmap(f))), and reach
# autograd, which records them on physical tensors. An op with no BatchedTensor of the top level passes
# down unchanged. The stack gains no new kind of level: a VmapLevel is an ordinary "above" mode, and with no
# vmap alive the dispatcher's fast path is untouched (`if _modes:` stays false).


class _Levels(threading.local):
    def __init__(self):
        self.stack: list = []  # the VmapLevels alive in this thread, outermost first


_levels = _Levels()


# NOTE [ autograd.grad inside vmap ]
# torch records autograd on the physical tensors, below the vmap layer: inside `vmap(f)` a BatchedTensor is
# not tracked at its level even when its physical tensor is (a product with a weight that requires grad),
# so `autograd.grad(out, w)` in f refuses as for any untracked output ("element 0 of tensors does not
# require grad and does not have a grad_fn"), whether `w` is batched or not; the gradient flows only through
# vmap's result. A reverse-mode transform started inside the vmap (`vmap(grad(f))`) differentiates at its
# level, and so may autograd.grad called within it (ember.func's `grad_of_batched`, as do
# autograd.functional's vectorized Jacobians, which run autograd under their own vmap). `_tracking` holds,
# for each of those running, how many vmap levels were alive when it started; a BatchedTensor of level
# `lvl` is tracked when one of them started with `lvl` alive (or when its vmap has returned). A BatchedTensor
# answers `requires_grad`, `grad_fn` and `is_leaf` as torch's wrapper does: the physical tensor's answers when
# it is tracked (inside vmap(grad(f)) torch's grad wrapper lies innermost), else those of a tensor autograd
# does not see (False, None, True), whatever its physical tensor requires. ember's transforms ask the
# physical tensors (`_physical_requires_grad`).


class _Tracking(threading.local):
    def __init__(self):
        self.stack: list = []


_tracking = _Tracking()


def _tracked(lvl: int) -> bool:
    if lvl > len(_levels.stack):  # (its vmap has returned)
        return True
    for depth in _tracking.stack:
        if depth >= lvl:
            return True
    return False


def _physical_requires_grad(t) -> bool:
    while type(t) is BatchedTensor:
        t = t._value
    return tracks_grad(t)  # (NOTE [ Tensors inside jvp ] in ember/_tensor.py)


# NOTE [ Refusals inside a transform ]
# torch refuses, while any functorch transform runs (its dynamic layer stack is not empty), `backward()` (only
# autograd.grad, which the transforms build on, may run inside), `requires_grad_()`, `retain_grad()` and
# custom Functions without `setup_context`: a transform's inputs are made differentiable by the transform,
# not by `f`; under a grad/vjp/jvp (not under vmap alone) it refuses `.data = ...` too.
# `_grad_state.func_transforms` counts the vmap levels and the grad/vjp/jvp calls running `f` in this thread,
# `func_grad_levels` the latter (pushed and popped with them, never read on an op's path);
# `func_requires_grad_ok` lets autograd.functional's vectorized Jacobians call requires_grad_() inside their
# own vmap, as torch's legacy vmap under them lets it.
_IN_TRANSFORM = {
    "backward": "backward() called inside a functorch transform. This is not supported, please use functorch.grad "
    "or functorch.vjp instead or call backward() outside of functorch transforms.",
}


def refuse_in_transform(what):
    """torch's refusal of `what` ("backward", "requires_grad_", "retain_grad") inside a transform."""
    if what in _IN_TRANSFORM:
        raise RuntimeError(_IN_TRANSFORM[what])
    raise RuntimeError(
        f"You are attempting to call Tensor.{what}() "
        + ("(or perhaps using torch.autograd.functional.* APIs) " if what == "requires_grad_" else "")
        + "inside of a function being transformed by a functorch transform. This is unsupported, please attempt "
        f"to use the functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call {what}() outside of "
        "a function being transformed instead."
    )


def active_levels() -> list:
    """The vmap levels alive in this thread, outermost first."""
    return list(_levels.stack)


_ITEM = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() "
    "on a Tensor, please try to rewrite what you're doing with other operations. If error is occurring "
    "somewhere inside PyTorch internals, please file a bug report."
)
_CONTROL = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We "
    "don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues ."
)


def _contiguous_strides(shape, itemsize):
    strides, acc = [], itemsize
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


class BatchedTensor(Tensor):
    """A tensor of one sample's shape inside `vmap`; the batch lives in `_value` at dim `_bdim`."""

    __module__ = "ember"

    # ---- what a function inside vmap may ask -------------------------------------------------------------

    @property
    def device(self):
        return self._value.device

    @property
    def is_meta(self) -> bool:
        return self._value.is_meta

    @property
    def is_cpu(self) -> bool:
        return self._value.is_cpu

    @property
    def requires_grad(self) -> bool:  # NOTE [ autograd.grad inside vmap ]; the physical tensor's as autograd has
        return _tracked(self._level) and tracks_grad(self._value)  # it (NOTE [ Tensors inside jvp ])

    @requires_grad.setter
    def requires_grad(self, value):
        self._value.requires_grad = value

    @property
    def grad_fn(self):
        return history_of(self._value) if _tracked(self._level) else None

    @property
    def is_leaf(self) -> bool:
        return history_of(self._value) is None if _tracked(self._level) else True

    _values_elsewhere = True  # value checks on it run as ops (see _meta.no_data)
    _param_stays_subclass = True  # nn.Parameter(bt) inside vmap is a BatchedTensor flagged as a Parameter
    _detaches_itself = True  # ember.detach(bt) comes here too (a subclass calling super().detach() must not)

    def detach(self):
        return _make(self._value.detach(), self._bdim, self._level)

    def item(self):
        raise RuntimeError(_ITEM)

    def tolist(self):
        raise RuntimeError(_ITEM)

    def __bool__(self):
        raise RuntimeError(_CONTROL)

    def __int__(self):
        raise RuntimeError(_ITEM)

    def __float__(self):
        raise RuntimeError(_ITEM)

    def __index__(self):
        raise RuntimeError(_ITEM)

    def numpy(self, *, force=False):
        raise RuntimeError(_ITEM)

    def __repr__(self):
        value = "\n".join("    " + line if line else line for line in repr(self._value).split("\n"))
        return f"BatchedTensor(lvl={self._level}, bdim={self._bdim}, value=\n{value}\n)"

    __str__ = __repr__


def _make(value: Tensor, bdim: int, level: int) -> BatchedTensor:
    """A BatchedTensor of `level` over physical `value`, whose dim `bdim` is the batch."""
    shape = value.shape
    logical = tuple(shape[:bdim]) + tuple(shape[bdim + 1 :])
    dt = _dtypes.to_numpy(value.dtype)
    t = _wrap(MetaArray(logical, dt, _contiguous_strides(logical, dt.itemsize)), BatchedTensor)
    t._value = value
    t._bdim = bdim
    t._level = level
    return t


def is_batched(t, level: int) -> bool:
    return type(t) is BatchedTensor and t._level == level


def level_of(t, level: int):
    """`t` seen at `level`: (physical tensor with the batch at dim 0, True) if `t` is batched at `level`,
    else (t, False)."""
    if type(t) is BatchedTensor and t._level == level:
        v = t._value
        return (v if t._bdim == 0 else v.movedim(t._bdim, 0)), True
    return t, False


# ---- moving one level's batch dim in and out of the logical shape ------------------------------------------


def expose(x, level: "VmapLevel"):
    """`x` (logical at the current levels) with `level`'s batch as a new leading logical dim, no longer
    batched at `level` (expanded to the batch size where `x` was not batched at it)."""
    lvl = level.lvl
    if type(x) is BatchedTensor:
        if x._level == lvl:
            return x._value.movedim(x._bdim, 0) if x._bdim else x._value
        if x._level > lvl:  # a newer level's wrapper lies outside: expose underneath it
            return _make(expose(x._value, level), x._bdim + 1, x._level)
    return x.unsqueeze(0).expand(level.batch_size, *x.shape)


def cover(x, level: "VmapLevel", dim: int = 0):
    """The inverse of `expose`: `x`'s logical dim `dim` becomes `level`'s batch dim."""
    if type(x) is BatchedTensor and x._level > level.lvl:
        bd = x._bdim
        d = dim if dim < bd else dim + 1
        return _make(cover(x._value, level, d), bd - 1 if d < bd else bd, x._level)
    return _make(x, dim, level.lvl)


# ---- the level ---------------------------------------------------------------------------------------------

_RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the 'same' "
    "or 'different' randomness flags on vmap or perform the randomness operation out of vmap"
)
_SAME_BATCHED = (
    "Vmap does not currently support same randomness with a batched tensor input. Please file an issue with "
    "functorch"
)


class VmapLevel(Mode):
    """One vmap call's interpreter: ops on its BatchedTensors go to their batching rules."""

    level = "above"

    def __init__(self, batch_size: int, randomness: str):
        self.batch_size = batch_size
        self.randomness = randomness
        self.lvl = (_levels.stack[-1].lvl + 1) if _levels.stack else 1

    def __enter__(self):
        super().__enter__()
        _levels.stack.append(self)
        _grad_state.func_transforms += 1
        return self

    def __exit__(self, *exc):
        _grad_state.func_transforms -= 1
        _levels.stack.pop()
        super().__exit__(*exc)

    def dispatch(self, op, inputs, params):
        lvl = self.lvl
        for t in inputs:
            if type(t) is BatchedTensor and t._level == lvl:
                break
        else:
            if "nondeterministic_seeded" in op.tags and self.randomness != "same":
                return _random_op(self, op, inputs, params, batched=False)
            return redispatch(op, inputs, params)
        if "nondeterministic_seeded" in op.tags:
            return _random_op(self, op, inputs, params, batched=True)
        from . import _rules

        rule = op.batch
        if rule is None:
            return _rules.fallback(self, op, inputs, params)
        return rule(self, op, inputs, params)

    def dispatch_inplace(self, op, self_, inputs, params):
        from . import _rules

        lvl = self.lvl
        if "nondeterministic_seeded" in op.tags:  # (an unbatched self too: a module's random init inside vmap)
            if self.randomness == "error":
                raise RuntimeError(_RANDOM_ERROR)
            if self.randomness == "different" and not is_batched(self_, lvl):
                raise RuntimeError(
                    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear "
                    "like same randomness. If this is necessary for your usage, please file an issue with functorch."
                )
        if not any(type(t) is BatchedTensor and t._level == lvl for t in inputs) and not (
            "nondeterministic_seeded" in op.tags and self.randomness == "different"
        ):
            return redispatch_inplace(op, self_, inputs, params)
        return _rules.inplace(self, op, self_, inputs, params)


def _random_op(level, op, inputs, params, batched):
    """A random op inside vmap: an error, one draw for the whole batch ("same"), or a draw per sample
    ("different"), per the vmap's `randomness`."""
    from . import _rules

    if level.randomness == "error":
        raise RuntimeError(_RANDOM_ERROR)
    if level.randomness == "same" and batched:
        if not op.name.endswith(("_", "_like")):  # (torch draws once for an in-place op or a *_like)
            raise RuntimeError(_SAME_BATCHED)
        return _rules.fallback(level, op, inputs, params, same_randomness=True, warn=False)
    if not batched:  # "different", no batched input: one draw per sample, stacked
        outs = [redispatch(op, inputs, params) for _ in range(level.batch_size)]
        return _rules.stack_outputs(level, outs)
    return _rules.fallback(level, op, inputs, params, warn=False)  # (torch has rules for its random ops)


# ---- Python composites that read their inputs' data --------------------------------------------------------


def _innermost(args, lvl=0):
    """The highest vmap level among the BatchedTensors in `args` (lists and tuples searched), or 0."""
    for a in args:
        if type(a) is BatchedTensor:
            lvl = max(lvl, a._level)
        elif isinstance(a, (list, tuple)):
            lvl = _innermost(a, lvl)
    return lvl


def _sample(a, lvl, b):
    """Argument `a` as sample `b` of level `lvl` sees it."""
    if type(a) is BatchedTensor and a._level == lvl:
        return a._value.select(a._bdim, b)
    if isinstance(a, (list, tuple)) and _innermost(a) == lvl:
        return type(a)(_sample(x, lvl, b) for x in a)
    return a


def per_sample(fn, args, kwargs, random, inplace):
    """NOTE [ Composites that read data under vmap ] (ember/_ops/_util.py): `fn` run on each sample of
    the innermost vmap level among `args`, with that level off the stack, and the results stacked."""
    from . import _rules

    lvl = _innermost(args) or _innermost(kwargs.values())
    if not lvl:
        return NotImplemented
    level = next(v for v in _levels.stack if v.lvl == lvl)
    if random and level.randomness == "error":
        raise RuntimeError(_RANDOM_ERROR)
    if random and level.randomness == "same":  # (a random composite's batched argument is a tensor input)
        raise RuntimeError(_SAME_BATCHED)
    if inplace and not is_batched(args[0], lvl):
        raise RuntimeError(_rules.inplace_error(inplace if isinstance(inplace, str) else "inplace arithmetic"))
    above = _local.above
    at = next(i for i, m in enumerate(above) if m is level)
    del above[at]
    try:
        outs = []
        for b in range(level.batch_size):
            sample_kwargs = {k: _sample(v, lvl, b) for k, v in kwargs.items()}
            outs.append(fn(*[_sample(a, lvl, b) for a in args], **sample_kwargs))
    finally:
        above.insert(at, level)
    if inplace:
        return args[0]
    return _rules.stack_outputs(level, outs)


_REFUSALS = {
    # torch's vmapErrorFallback
    "special": "Error: aten::{} requires special handling, and does not yet have a batching rule. Feel free to "
    "file a github issue!",
    # torch's batchedTensorForLoopFallback, for an op taking or returning a list of tensors or a non-tensor
    "no_fallback": "Batching rule not implemented for aten::{}. We could not generate a fallback.",
    # ... and for an out= or view op
    "out": "Batching rule not implemented for aten::{}; the fallback path doesn't work on out= or view ops.",
    # functions torch's vmap refuses by name (allclose), random ops it does not support (rrelu: refused
    # whenever a vmap is alive, batched argument or not: `args` None)
    "function": "vmap over torch.{} isn't supported yet. Please file an issue at "
    "https://github.com/pytorch/pytorch/issues if you need this feature.",
    "random": "vmap: we do not yet support aten::{}. Please file an issue",
    "mask": "vmap: Attempted to vmap over `mask` in torch.{}(self, mask) We cannot support this because for each "
    "batch this would return a differently shaped Tensor. Please file an issue at "
    "https://github.com/pytorch/pytorch/issues if you need this feature.",
}


def refuse(name, args, kind="special"):
    """torch's refusal of op `name` (with its overload) under vmap, whatever the data, when an argument (or
    a tensor of a list argument) is batched: `kind` is a key of `_REFUSALS`."""
    if (_levels.stack if args is None else _innermost(args)):
        raise RuntimeError(_REFUSALS[kind].format(name))


_ops_util._vmap_per_sample[:] = [per_sample, refuse]

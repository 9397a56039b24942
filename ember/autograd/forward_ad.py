"""ember.autograd.forward_ad: forward-mode automatic differentiation with dual tensors, as torch's.

Inside `with dual_level():`, `make_dual(x, t)` gives a tensor whose *tangent* is `t`; every op on it then
computes, beside its value, the tangent of its output (the Jacobian-vector product J t), read back with
`unpack_dual(y).tangent`:

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        jvp = forward_ad.unpack_dual(y).tangent

How it is built (NOTE [ Forward AD is a mode ]): entering a level pushes one dispatcher mode above autograd;
it runs each op on the primals and then the op's JVP rule (`op.jvp`, see `ember/autograd/_jvp.py`) on the
tangents. The tangent lives on the tensor (`Tensor._fw_grad`) and is cleared when the level exits.
"""

from __future__ import annotations

import weakref
from collections import namedtuple

from .._dispatch import redispatch, redispatch_inplace
from .._modes import Mode, pop_mode, push_mode
from .._tensor import Tensor
from . import _jvp

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "dual_level"]

# NOTE [ Forward AD is a mode ]
# Forward AD could be an autograd-level mechanism (every op's recording step also computing tangents), or a
# mode on the dispatcher's stack. It is a mode above autograd, for three reasons:
# - it costs nothing when no dual level is active: with no mode anywhere the hot path's one `if _modes:`
#   test is false, and `_run` / `record` are untouched;
# - a mode handler runs with itself popped, so a JVP rule is written in plain ember ops that go on to
#   autograd below it: the tangents it computes are recorded by reverse mode when their inputs require
#   grad (reverse-over-forward), and the ops a backward pass dispatches while a level is active reach the
#   mode like any other op, so their outputs carry tangents (forward-over-reverse: Hessian-vector products);
# - it is the design's place for transforms (DESIGN.md §4: "forward-mode AD ... a mode on the same stack"),
#   beside vmap's, so the two nest by stack order.
# As in torch, one level exists at a time (torch refuses nested levels); the level is process-wide, the
# mode is pushed on the thread that entered it.

# the active level: its number and the tensors that hold a tangent at it (cleared on exit), or None
_level: _Level | None = None
_current_level = -1  # torch's module attribute: the active level's number, -1 with none

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = """Namedtuple returned by :func:`unpack_dual` containing the primal and tangent
components of a dual tensor. See :func:`unpack_dual` for more details."""
UnpackedDualTensor.__module__ = __name__


class _Level:
    __slots__ = ("number", "holders", "mode")

    def __init__(self, number):
        self.number = number
        self.holders: list = []  # weak references to the tensors given a tangent at this level
        self.mode = _ForwardMode()


def enter_dual_level() -> int:
    """Enter a new forward-grad level and return its number (0: torch supports one level at a time).

    Prefer the `dual_level` context manager, which exits the level on the way out.
    """
    global _level, _current_level
    if _level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _level = _Level(0)
    _current_level = 0
    push_mode(_level.mode)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit forward-grad level `level` (the current one by default), deleting every tangent made in it."""
    global _level, _current_level
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if _level is None or level != _level.number:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This "
                           "is not supported.")
    lvl, _level, _current_level = _level, None, -1
    for ref in lvl.holders:
        t = ref()
        if t is not None:
            t.__dict__.pop("_fw_grad", None)
    pop_mode(lvl.mode)


class dual_level:
    """Context manager for forward AD: all forward-AD computation must happen inside one.

    Example::

        >>> x = ember.tensor([1.0])
        >>> with dual_level():
        ...     inp = make_dual(x, ember.tensor([1.0]))
        ...     out = (inp * inp).sum()
        ...     unpack_dual(out).tangent
        tensor(2.)
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()

    def __call__(self, fn):  # usable as a decorator, as torch's _DecoratorContextManager
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


def _check_level(level, what):
    if level is None:
        level = _current_level
    if _level is None or level != _level.number:
        if what == "_make_dual" and _level is None and level < 0:
            raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                               "enter_dual_level() first.")
        raise RuntimeError(f"Invalid level given to {what}")
    return level


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """Associate `tangent` with `tensor`: a new tensor (a view of `tensor`) whose tangent is `tangent`.

    The tangent must have the primal's size; a tangent laid out otherwise than the primal is copied into
    the primal's layout, as torch does. Both must be floating point or complex.
    """
    if level is None and _level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    _check_level(level, "_make_dual")
    if tensor._fw_grad is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the "
                           f"same level {_current_level} is not supported.")
    if tuple(tangent.shape) != tuple(tensor.shape):
        _size_error(tensor, tangent)
    with _suspended():
        dual = tensor.view_as(tensor)
        tangent = _same_layout(tangent, tensor)
    set_tangent(dual, tangent)
    return dual


def _size_error(t, tangent):
    raise RuntimeError(
        "Trying to set a forward gradient that has a different size than that of the original Tensor, this is not "
        f"supported. Tensor is of size {list(t.shape)} while the given forward gradient is of size "
        f"{list(tangent.shape)}.")


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal (a view of `tensor` without tangent) and the tangent (or None) of `tensor`, as a namedtuple.

    Outside a dual level, or for a tensor with no tangent, the tangent is None.
    """
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = tensor._fw_grad
    if tangent is None:  # (torch checks the level only of a tensor that has a forward grad)
        return UnpackedDualTensor(tensor, None)
    _check_level(level, "_fw_primal")
    with _suspended():
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


def _same_layout(tangent, primal):
    """`tangent` as make_dual keeps it: itself when laid out as the primal (same strides), else a copy in
    the primal's strides over a fresh buffer (torch's `new_with_same_meta`)."""
    if tangent.stride() == primal.stride() and tangent.storage_offset() == primal.storage_offset():
        return tangent
    if primal.is_contiguous():
        return tangent.contiguous() if not tangent.is_contiguous() else tangent.clone()
    import ember

    n = primal.untyped_storage().nbytes() // primal.element_size()
    buf = ember.zeros(n, dtype=tangent.dtype, device=tangent.device)
    out = buf.as_strided(tuple(primal.shape), primal.stride(), primal.storage_offset())
    out.copy_(tangent)
    return out


def set_tangent(t: Tensor, tangent: Tensor | None) -> None:
    """Give tensor `t` the tangent `tangent` at the active level (recorded so that exiting clears it)."""
    if tangent is None:
        t.__dict__.pop("_fw_grad", None)
        return
    if t._fw_grad is None:
        _level.holders.append(weakref.ref(t))
    t._fw_grad = tangent


class _suspended:
    """Run ops without the forward-AD mode (inside its own work and the API's bookkeeping views)."""

    def __enter__(self):
        self.mode = _level.mode if _level is not None else None
        if self.mode is not None:
            from .._dispatch import _local

            self.popped = _local.above and _local.above[-1] is self.mode
            if self.popped:
                pop_mode(self.mode)

    def __exit__(self, *exc):
        if self.mode is not None and self.popped:
            push_mode(self.mode)


class _ForwardMode(Mode):
    """The forward-AD interpreter: primal by the next level down, tangent by the op's JVP rule."""

    level = "above"
    hidden = False  # a custom Function's forward is running: its ops pass through (_jvp.function_apply)

    def dispatch(self, op, inputs, params):
        if self.hidden:
            return redispatch(op, inputs, params)
        tangents = None
        for i, t in enumerate(inputs):
            if isinstance(t, Tensor) and t._fw_grad is not None:
                if tangents is None:
                    tangents = [None] * len(inputs)
                tangents[i] = t._fw_grad
        if op.name == "autograd_function_apply":  # a custom Function: its forward, then its jvp
            return _jvp.function_apply(self, op, inputs, params, tangents)
        if tangents is None or op.derivative is None or op.kind == "higher_order":  # (cond's body runs with
            # this mode: its ops carry them; cond's own derivative is for a tracer's one-node cond. An op whose
            # node refuses backward has no derivative: NOTE [ What torch's autograd refuses ])
            if tangents is not None and op.qualname in _jvp.NO_FORWARD_AD:  # NOTE [ Ops torch's forward AD refuses ]
                _refuse(op, params)
            return redispatch(op, inputs, params)
        out = redispatch(op, inputs, params)
        _attach(out, _jvp.jvp(op, inputs, params, out, tangents))
        return out

    def dispatch_inplace(self, op, self_, inputs, params):
        if self.hidden:
            return redispatch_inplace(op, self_, inputs, params)
        tangents = None
        for i, t in enumerate(inputs):
            if isinstance(t, Tensor) and t._fw_grad is not None:
                if tangents is None:
                    tangents = [None] * len(inputs)
                tangents[i] = t._fw_grad
        if tangents is None or op.derivative is None:
            if tangents is not None and op.qualname in _jvp.NO_FORWARD_AD:  # NOTE [ Ops torch's forward AD refuses ]
                _refuse(op, params, inplace=True)
            out = redispatch_inplace(op, self_, inputs, params)
            if self_._fw_grad is not None and op.derivative is not None:  # overwritten by values without tangent
                _update_tangent(self_, None)
            return out
        old = self_.detach().clone()  # the rule sees self's value before the write
        if tangents[0] is not None:
            tangents[0] = tangents[0].clone()  # the tangent is about to be written in place
        out = redispatch_inplace(op, self_, inputs, params)
        if tangents[0] is not None:
            _save_old_tangent(self_, tangents[0])
        args = (old,) + tuple(inputs[1:])
        new = _jvp.jvp(op, args, params, self_.detach(), tangents)
        _update_tangent(self_, new)
        if self_._grad_fn is not None and self_._fw_grad is not None and self_._base is None:
            _save_tangent(self_, self_._fw_grad)  # (the node may have saved self's new value as its output)
        return out


def _refuse(op, params, inplace=False):
    e = _jvp.refusal(op, params, inplace)
    if e is not None:
        raise e


def _attach(out, tangents):
    if type(out) is tuple or type(out) is list:
        for o, t in zip(out, tangents if type(tangents) in (tuple, list) else (tangents,)):
            _attach(o, t)
        return
    if t_ok(out) and tangents is not None:
        if tangents.shape != out.shape:  # (torch's check on every forward gradient it sets)
            _size_error(out, tangents)
        set_tangent(out, tangents)
        if out._grad_fn is not None:
            _save_tangent(out, tangents)


def _save_tangent(out, tangent):
    """If `out`'s backward node saved `out` itself, save its tangent with it: forward-over-reverse runs the
    node's formula on the saved output, whose tangent it needs (torch's SavedVariable keeps it too)."""
    from .._tensor import _wrap
    from .graph import SavedDualOutput, SavedOutput, SavedTensor

    node = out._grad_fn
    saved = getattr(node, "_out", None)
    if type(saved) is SavedOutput:  # (the node of a single-output op: the saved output is `out`)
        dual = SavedDualOutput()
        dual.data, dual.vc, dual.version = saved.data, saved.vc, saved.version
        dual.dual = _wrap(saved.data)
        set_tangent(dual.dual, tangent)
        node._out = dual
        return
    if type(saved) is tuple and out._output_nr < len(saved):
        saved = saved[out._output_nr]
    if type(saved) is SavedTensor and saved.is_output and saved.tensor is not None:
        set_tangent(saved.tensor, tangent)


def _save_old_tangent(self_, tangent):
    """The node an in-place op recorded saved self's old value (a copy taken before the write): give it
    self's old tangent, which its backward formula needs under forward-over-reverse."""
    saved = getattr(self_._grad_fn, "_saved", None)
    if saved and isinstance(saved[0], Tensor) and saved[0] is not self_ and saved[0]._fw_grad is None:
        set_tangent(saved[0], tangent)


def t_ok(t):
    return isinstance(t, Tensor) and (t.is_floating_point() or t.is_complex())


def _update_tangent(self_, new):
    """After an in-place op on `self_`: its tangent becomes `new` (zeros for None), written in place into the
    tangent it has (so that its views' and its base's tangents see it), or into a fresh one that is a view
    of its base's tangent (made zero when the base had none), as torch does."""
    t = self_._fw_grad
    if t is None and new is None:
        return
    if t is not None:
        if new is None:
            t.zero_()
        else:
            t.copy_(new)
        return
    base = self_._base
    if base is None:
        set_tangent(self_, new.clone() if new._base is not None else new)
        return
    bt = base._fw_grad
    if bt is None:
        import ember

        bt = ember.zeros_like(base).as_strided(tuple(base.shape), base.stride(), 0) \
            if base.is_contiguous() else _same_layout(ember.zeros_like(base), base)
        set_tangent(base, bt)
    vt = bt.as_strided(tuple(self_.shape), self_.stride(),
                       bt.storage_offset() + self_.storage_offset() - base.storage_offset())
    vt.copy_(new)
    set_tangent(self_, vt)

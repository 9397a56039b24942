"""Dispatcher modes: interpreters of ops on a per-thread stack (NOTE [ The mode stack ] in `_dispatch.py`).

Subclass `Mode` and override `dispatch` (and `dispatch_inplace` for `x.op_(...)`); use it as a context
manager. `level = "above"` puts it above autograd (it sees ops before they are recorded: autocast, vmap),
`level = "below"` below it (it computes outputs that autograd then records on: fake tensors, tracing).
Inside a handler, ops go to the next level down, and `redispatch` passes the op itself on.

    class CountOps(Mode):
        def __init__(self):
            self.names = []
        def dispatch(self, op, inputs, params):
            self.names.append(op.qualname)
            return redispatch(op, inputs, params)

    with CountOps() as m:
        (x * 2).sum()
    m.names  # ['mul', 'sum']
"""

from __future__ import annotations

from ._dispatch import _local, _modes, redispatch, redispatch_inplace

__all__ = ["Mode", "push_mode", "pop_mode", "current_modes", "redispatch", "redispatch_inplace"]


class Mode:
    """Base class of dispatcher modes; by default passes every op on unchanged."""

    level = "above"

    def dispatch(self, op, inputs, params):
        return redispatch(op, inputs, params)

    def dispatch_inplace(self, op, self_, inputs, params):
        return redispatch_inplace(op, self_, inputs, params)

    def __enter__(self):
        push_mode(self)
        return self

    def __exit__(self, *exc):
        pop_mode(self)


def _stack(mode):
    level = getattr(mode, "level", "above")  # any object with `dispatch` methods will do; Mode is the base
    if level not in ("above", "below"):
        raise ValueError(f"a mode's level is 'above' or 'below' (autograd), got {level!r}")
    return _local.above if level == "above" else _local.below


def push_mode(mode: Mode) -> None:
    """Put `mode` on top of this thread's stack at its level; it sees this thread's ops until popped."""
    _stack(mode).append(mode)
    _modes.append(mode)


def pop_mode(mode: Mode) -> Mode:
    """Take `mode` off this thread's stack; it must be the top of its level."""
    stack = _stack(mode)
    if not stack or stack[-1] is not mode:
        raise RuntimeError("mode stack popped out of order: the mode being exited is not the innermost one")
    stack.pop()
    for i in range(len(_modes) - 1, -1, -1):
        if _modes[i] is mode:
            del _modes[i]
            break
    return mode


def current_modes() -> tuple:
    """This thread's modes, outermost first: those above autograd, then those below it."""
    return tuple(_local.above) + tuple(_local.below)

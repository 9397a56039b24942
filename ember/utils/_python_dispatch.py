"""`TorchDispatchMode`: torch's name for a mode below autograd, for user code written against torch.

A subclass overrides `__torch_dispatch__(self, func, types, args=(), kwargs=None)`; `func` is the op as an
`OpCall` (printed `aten.add.Tensor`, callable on the same args), and calling it inside the handler runs the
op at the next level down, as in torch. It is an ember `Mode` at level "below" (NOTE [ The mode stack ]):
autograd records on what the handler returns.
"""

from __future__ import annotations

from .._dispatch import OpCall, dispatch_inplace
from .._modes import Mode, current_modes

__all__ = ["TorchDispatchMode", "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack"]


def _types(args):
    from .._tensor import Tensor

    return tuple({type(a) for a in args if isinstance(a, Tensor)})


class _InplaceCall(OpCall):
    """`self.op_(...)` as a handler sees it (`aten.add_.Tensor`): calling it writes into args[0] again."""

    __slots__ = ()

    def __call__(self, *args, **kwargs):
        n = self.n_inputs
        return dispatch_inplace(self.op, args[0], args[:n], args[n:] + tuple(kwargs.values()))

    @property
    def __name__(self):
        name = self.op.name if self.op.name.endswith("_") else self.op.name + "_"
        return f"{name}.{self.op.overload or 'default'}"


class _TorchHookMode(Mode):
    """A mode that hands each op to a torch-style hook (`_hook` names it) as `(func, types, args, kwargs)`."""

    _hook = ""

    def dispatch(self, op, inputs, params):
        return getattr(self, self._hook)(OpCall(op, len(inputs)), _types(inputs), tuple(inputs) + tuple(params), {})

    def dispatch_inplace(self, op, self_, inputs, params):
        return getattr(self, self._hook)(_InplaceCall(op, len(inputs)), _types(inputs),
                                         tuple(inputs) + tuple(params), {})


class TorchDispatchMode(_TorchHookMode):
    """Base class of modes that see every op below autograd (torch's `TorchDispatchMode`)."""

    level = "below"
    _hook = "__torch_dispatch__"

    def __init__(self, _dispatch_key=None):
        pass

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{type(self).__name__} must implement __torch_dispatch__")

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls):
        return False


def _get_current_dispatch_mode():
    below = [m for m in current_modes() if getattr(m, "level", "above") == "below"]
    return below[-1] if below else None


def _get_current_dispatch_mode_stack():
    return [m for m in current_modes() if getattr(m, "level", "above") == "below"]

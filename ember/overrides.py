"""`TorchFunctionMode`: torch's name for a mode that sees calls before autograd, for user code written
against torch.

torch calls `__torch_function__` with the public Python function (`torch.add`); ember's dispatcher sees ops,
so here `func` is the op as an `OpCall` (`aten.add.Tensor`), callable on the same args: calling it inside
the handler runs it at the next level down. It is an ember `Mode` at level "above" (NOTE [ The mode stack ]).
"""

from __future__ import annotations

from ._dispatch import OpCall
from ._modes import Mode
from .utils._python_dispatch import _InplaceCall, _types

__all__ = ["TorchFunctionMode"]


class TorchFunctionMode(Mode):
    """Base class of modes that see every op above autograd (torch's `TorchFunctionMode`)."""

    level = "above"

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{type(self).__name__} must implement __torch_function__")

    def dispatch(self, op, inputs, params):
        args = tuple(inputs) + tuple(params)
        return self.__torch_function__(OpCall(op, len(inputs)), _types(inputs), args, {})

    def dispatch_inplace(self, op, self_, inputs, params):
        args = tuple(inputs) + tuple(params)
        return self.__torch_function__(_InplaceCall(op, len(inputs)), _types(inputs), args, {})

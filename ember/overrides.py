"""`TorchFunctionMode`: torch's name for a mode that sees calls before autograd, for user code written
against torch.

torch calls `__torch_function__` with the public Python function (`torch.add`); ember's dispatcher sees ops,
so here `func` is the op as an `OpCall` (`aten.add.Tensor`), callable on the same args: calling it inside
the handler runs it at the next level down. It is an ember `Mode` at level "above" (NOTE [ The mode stack ]).
"""

from __future__ import annotations

from .utils._python_dispatch import _TorchHookMode

__all__ = ["TorchFunctionMode"]


class TorchFunctionMode(_TorchHookMode):
    """Base class of modes that see every op above autograd (torch's `TorchFunctionMode`)."""

    level = "above"
    _hook = "__torch_function__"

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{type(self).__name__} must implement __torch_function__")

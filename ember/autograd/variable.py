"""`ember.autograd.Variable`: torch's pre-0.4 wrapper, now an alias for Tensor, and the engine handle.

`Variable(t)` returns a detached alias of `t` (with `requires_grad` set if asked) and `isinstance(t, Variable)` is
true for every tensor, as in torch. `Variable._execution_engine` exposes `queue_callback` and `run_backward`
where torch code (DDP-style gradient synchronisation in particular) looks for them.
"""

from .._tensor import Tensor
from . import engine as _engine

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class _ExecutionEngine:
    """The object torch exposes as `Variable._execution_engine`."""

    def queue_callback(self, callback):
        return _engine.queue_callback(callback)

    def run_backward(self, tensors, grad_tensors, keep_graph, create_graph, inputs=(), allow_unreachable=True,
                     accumulate_grad=True):
        return _engine.run_backward(tuple(tensors), tuple(grad_tensors), keep_graph, create_graph,
                                    inputs=tuple(inputs) or None, accumulate=accumulate_grad)


class Variable(metaclass=_VariableMeta):
    """Deprecated: tensors are Variables. `Variable(t, requires_grad=False)` returns a detached alias of `t`."""

    __module__ = "ember.autograd.variable"
    _execution_engine = _ExecutionEngine()

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            from .. import tensor

            data = tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)  # a new tensor sharing data, as torch gives

"""The inference-mode handler on the dispatcher's mode stack: it marks what ops create as inference tensors.

`ember.inference_mode()` switches grad recording off (like no_grad) and pushes this handler. Every op
result made while inference mode is on in the current thread becomes an inference tensor
(`t.is_inference()`), except views of normal tensors, which stay normal as in torch. Inference tensors
are refused later where torch refuses them: saved for backward (graph.SavedTensor), modified in place
outside inference mode (graph.check_inplace), `requires_grad_()` outside inference mode.

The handler still reads the thread-local flag: `inference_mode(False)` inside turns it off without popping.
"""

from .._dispatch import VIEW
from .._modes import Mode, redispatch
from .grad_mode import state as _grad_state

__all__ = ["InferenceModeHandler"]


class InferenceModeHandler(Mode):
    """Mode handler: marks op outputs made under inference mode as inference tensors."""

    def dispatch(self, op, inputs, params):
        out = redispatch(op, inputs, params)
        if _grad_state.inference and not (op.kind == VIEW and not inputs[0]._is_inference):
            for t in out if type(out) is tuple else (out,):
                t._is_inference = True
        return out

"""ember.autograd: reverse-mode automatic differentiation on a dynamic graph.

graph.py holds the Nodes and how ops record themselves; engine.py runs them; function.py is custom
Functions; grad_mode.py the grad modes; gradcheck.py and functional.py the tools built on top. This
file holds the user entry points `backward` and `grad` and the Tensor methods that belong to autograd.
"""

import weakref

from .. import _dispatch
from .._grad_state import state as _grad_state
from .._tensor import Tensor
from . import anomaly_mode as anomaly_mode
from . import forward_ad as forward_ad  # forward-mode AD (F)
from . import function as function
from . import functional as functional
from . import grad_mode as grad_mode
from . import graph as graph
from .anomaly_mode import detect_anomaly as detect_anomaly
from .anomaly_mode import set_detect_anomaly as set_detect_anomaly
from .engine import is_checkpoint_valid as _is_checkpoint_valid  # noqa: F401  (checkpointing, issue 21)
from .engine import queue_callback as queue_callback
from .engine import run_backward as _run_backward
from .function import Function as Function
from .function import InplaceFunction as InplaceFunction
from .function import NestedIOFunction as NestedIOFunction
from .function import once_differentiable as once_differentiable
from .grad_mode import enable_grad as enable_grad
from .grad_mode import enforce_grad_layout_policy as enforce_grad_layout_policy  # autograd names (L)
from .grad_mode import inference_mode as inference_mode
from .grad_mode import is_grad_enabled as is_grad_enabled
from .grad_mode import is_inference_mode_enabled as is_inference_mode_enabled
from .grad_mode import no_grad as no_grad
from .grad_mode import set_grad_enabled as set_grad_enabled
from .grad_mode import set_multithreading_enabled as set_multithreading_enabled
from .gradcheck import GradcheckError as GradcheckError
from .gradcheck import gradcheck as gradcheck
from .gradcheck import gradgradcheck as gradgradcheck
from .variable import Variable as Variable

__all__ = ["Variable", "Function", "backward", "grad", "gradcheck", "gradgradcheck", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "graph",
           "detect_anomaly", "set_detect_anomaly", "functional", "once_differentiable",
           "enforce_grad_layout_policy", "set_multithreading_enabled", "NestedIOFunction"]


def _batched(outputs, inputs):
    """Whether some of them are vmap's BatchedTensors (only asked while a mode is active)."""
    return any(type(t).__name__ == "BatchedTensor" for t in (outputs or ()) + (inputs or ()))


def _seq(x, what="tensors"):
    if x is None:
        return None
    if isinstance(x, (Tensor, graph.GradientEdge)):
        return (x,)
    if isinstance(x, (list, tuple)):
        return tuple(x)
    raise TypeError(f"{what} argument must be a Tensor or a sequence of Tensors, but got {type(x).__name__}")


def _grads_for(tensors, grad_tensors):
    if grad_tensors is None:
        return (None,) * len(tensors)
    if isinstance(grad_tensors, (int, float)) and not isinstance(grad_tensors, bool):
        raise TypeError(f"'{type(grad_tensors).__name__}' object is not iterable")
    grads = (grad_tensors,) if isinstance(grad_tensors, Tensor) else tuple(grad_tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Accumulate into `.grad` of the leaves (or only of `inputs`) the gradient of `tensors`.

    Args:
        tensors: the outputs to differentiate (a tensor or a sequence of them).
        grad_tensors: the gradient with respect to each output (None for a scalar output: ones).
        retain_graph: keep the saved tensors so the graph can be backpropagated again
            (default: `create_graph`).
        create_graph: record the backward pass itself, for higher-order gradients.
        inputs: accumulate only into these tensors' `.grad` (leaves or not).
    """
    if grad_variables is not None:
        import warnings

        warnings.warn("'grad_variables' is deprecated. Use 'grad_tensors' instead.", FutureWarning, stacklevel=2)
        if grad_tensors is None:
            grad_tensors = grad_variables
        else:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to "
                               "'backward'. Please only use 'grad_tensors'.")
    if _grad_state.func_transforms:  # (V) NOTE [ Refusals inside a transform ] (ember/func/_batched.py)
        from ..func._batched import refuse_in_transform

        refuse_in_transform("backward")
    tensors = _seq(tensors)
    grads = _grads_for(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if isinstance(inputs, dict):
        inputs = tuple(inputs.values())
    inputs = _seq(inputs, "inputs")
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    _run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, returned (a tuple, or a dict for dict inputs)
    rather than accumulated into `.grad`.

    `allow_unused=True` gives None for an input the outputs do not depend on; `materialize_grads=True`
    gives zeros instead. Other arguments as in `backward`.
    """
    if is_grads_batched:  # (V) vmap over dim 0 of the grad_outputs (ember.func)
        from ..func._functional import grad_batched

        return grad_batched(grad, outputs, inputs, _seq(grad_outputs, "grad_outputs"),
                            dict(retain_graph=True if retain_graph is None else retain_graph,
                                 create_graph=create_graph, only_inputs=only_inputs, allow_unused=allow_unused,
                                 materialize_grads=materialize_grads))
    keys = None
    if isinstance(inputs, dict):
        keys, inputs = list(inputs), tuple(inputs.values())
    outputs = _seq(outputs, "outputs")
    inputs = _seq(inputs, "inputs")
    if _dispatch._modes and _batched(outputs, inputs):  # (V) inside vmap: the physical tensors' gradients
        from ..func._functional import grad_of_batched

        return grad_of_batched(grad, outputs, inputs, _seq(grad_outputs, "grad_outputs"), dict(
            retain_graph=retain_graph, create_graph=create_graph, only_inputs=only_inputs,
            allow_unused=allow_unused, materialize_grads=materialize_grads))
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _grads_for(outputs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    result = _run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, accumulate=False)
    out = []
    for i, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if materialize_grads:
                from .. import zeros_like

                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
        out.append(g)
    if keys is not None:
        return dict(zip(keys, out))
    return tuple(out)


# ---- Tensor methods that belong to autograd -------------------------------------------------------------


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the leaves' `.grad` (see `ember.autograd.backward`)."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _register_hook(self, hook):
    """`hook(grad)` runs when this tensor's gradient is computed; a returned tensor replaces it."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = self.grad_fn
    if fn is not None:
        return fn._register_tensor_hook(self._output_nr, hook)
    return graph._add_hook(self, "_hooks", hook)


def _register_post_accumulate_grad_hook(self, hook):
    """`hook(tensor)` runs after the gradient has been accumulated into this leaf's `.grad`."""
    if self._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return graph._add_hook(self, "_post_acc_hooks", hook)


def _retain_grad(self):
    """Make a non-leaf tensor keep its gradient in `.grad` after backward (no-op on leaves)."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if _grad_state.func_transforms:  # (V) NOTE [ Refusals inside a transform ] (ember/func/_batched.py)
        from ..func._batched import refuse_in_transform

        refuse_in_transform("retain_grad")
    if self._grad_fn is None or self._retains_grad:
        return
    node = self.grad_fn
    if node._retains is None:
        node._retains = {}
    node._retains[self._output_nr] = weakref.ref(self)
    node._has_extras = True
    self._retains_grad = True


Tensor.backward = _tensor_backward
Tensor.register_hook = _register_hook
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
Tensor.retain_grad = _retain_grad


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    if name in ("profiler", "profiler_util"):  # the profiler: loaded on first use, off the import path
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)

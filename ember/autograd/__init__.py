"""ember.autograd: reverse-mode automatic differentiation on a dynamic graph (see engine.py, graph.py)."""

from .._tensor import Tensor
from . import graph as graph
from .anomaly_mode import detect_anomaly as detect_anomaly
from .anomaly_mode import set_detect_anomaly as set_detect_anomaly
from .engine import queue_callback as queue_callback
from .engine import run_backward as _run_backward
from .grad_mode import enable_grad as enable_grad
from .grad_mode import inference_mode as inference_mode
from .grad_mode import is_grad_enabled as is_grad_enabled
from .grad_mode import is_inference_mode_enabled as is_inference_mode_enabled
from .grad_mode import no_grad as no_grad
from .grad_mode import set_grad_enabled as set_grad_enabled

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "graph",
           "detect_anomaly", "set_detect_anomaly"]


def _seq(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _grads_for(tensors, grad_tensors):
    if grad_tensors is None:
        return (None,) * len(tensors)
    grads = _seq(grad_tensors) if not isinstance(grad_tensors, Tensor) else (grad_tensors,)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} tensors and {len(tensors)} gradients")
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Accumulate into `.grad` of the leaves (or of `inputs`) the gradient of `tensors`."""
    tensors = _seq(tensors)
    grads = _grads_for(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _seq(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    _run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, returned rather than accumulated."""
    outputs = _seq(outputs)
    single = isinstance(inputs, Tensor)
    inputs = _seq(inputs)
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
    for t, g in zip(inputs, result):
        if g is None:
            if materialize_grads:
                from .. import zeros_like

                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
        out.append(g)
    return tuple(out)


# ---- Tensor methods that belong to autograd -------------------------------------------------------------


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _register_hook(self, hook):
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._grad_fn is not None:
        return self._grad_fn._register_tensor_hook(self._output_nr, hook)
    return graph._add_hook(self, "_hooks", hook)


def _register_post_accumulate_grad_hook(self, hook):
    if self._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return graph._add_hook(self, "_post_acc_hooks", hook)


def _retain_grad(self):
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self._grad_fn is None or self._retains_grad:
        return
    import weakref

    node = self._grad_fn
    if node._retains is None:
        node._retains = {}
    node._retains[self._output_nr] = weakref.ref(self)
    self._retains_grad = True


Tensor.backward = _tensor_backward
Tensor.register_hook = _register_hook
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
Tensor.retain_grad = _retain_grad

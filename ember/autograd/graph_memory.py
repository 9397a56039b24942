"""How much memory the autograd graph holds: `saved_tensors_bytes`, the bytes of the tensors saved for
backward by the live graph (re-exported as `ember.autograd.graph.saved_tensors_bytes`).

NOTE [ Saved-tensor bytes on demand ]
On a CPU torch reports no allocator figures, so what activation checkpointing saves is invisible. ember
counts it on demand and only then: nothing is accounted while ops record (the recording path is the hot
path, NOTE [ Recording is the hot path ]). A call walks the graph, from the given outputs or, given none,
from every live Node the garbage collector knows of, and sums the storages of what each node keeps for its
backward:

- an op node's saved inputs (`_saved`: tensors, or SavedTensors when hooks packed them) and its saved
  output (`_out`); a CopySlices node's wrapped node; a custom Function's `save_for_backward` tensors;
- what a saved-tensor hook packed: a tensor it returned, or, for a packed object with `_saved_tensors()`
  (the checkpoint's holders), the tensors that object keeps alive (a checkpointed region's inputs and its
  recomputed tensors not yet unpacked). Other packed objects hold no tensor ember can see and count 0.

Each storage counts once, however many tensors and views of it are saved (torch's allocator counts
storages too), and whole: a saved view of a large buffer keeps the buffer. Parameters saved by an op (a
linear layer's weight) count like any saved tensor; `activations_only=True` leaves out leaves that
require grad and views of them (a linear layer's `weight.t()`), which the model holds anyway. Saved tensors
freed by a backward are not counted.
"""

import gc

from .._tensor import Tensor, _wrap
from .graph import Node, SavedOutput, SavedTensor

__all__ = ["saved_tensors_bytes"]


def saved_tensors_bytes(*outputs, activations_only=False):
    """The bytes held by tensors saved for backward in the autograd graph (each storage once).

    Args:
        outputs: tensors (or grad_fn nodes) whose graphs to walk; none: every live graph.
        activations_only (bool): leave out saved leaves that require grad (parameters).

    Example::

        >>> y = model(x)
        >>> ember.autograd.graph.saved_tensors_bytes(y)  # what backward through y will read
    """
    if outputs:
        nodes = _reachable([o.grad_fn if isinstance(o, Tensor) else o for o in outputs])
    else:
        nodes = [o for o in gc.get_objects() if issubclass(type(o), Node)]  # (type: no proxy objects asked)
    seen = {}
    for node in nodes:
        for t in _saved_by(node):
            if activations_only:
                root = t._base if t._base is not None else t
                if root.grad_fn is None and root.requires_grad:  # a parameter, or a view of one (weight.t())
                    continue
            s = t.untyped_storage()
            seen[s.data_ptr()] = max(seen.get(s.data_ptr(), 0), s.nbytes())
    return sum(seen.values())


def _reachable(roots):
    out, stack, seen = [], [n for n in roots if n is not None], set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(fn for fn, _ in n.next_functions if fn is not None)
        inner = n.__dict__.get("fn")  # a CopySlices node runs the in-place op's node
        if isinstance(inner, Node):
            stack.append(inner)
    return out


def _saved_by(node):
    """The tensors `node` keeps for its backward."""
    found = []
    d = node.__dict__
    _collect(d.get("_saved"), found)
    _collect(d.get("_out"), found)
    return found


def _collect(x, found):
    if x is None:
        return
    if isinstance(x, Tensor):
        found.append(x)
    elif isinstance(x, (tuple, list)):
        for v in x:
            _collect(v, found)
    elif type(x) is SavedOutput:
        if x.data is not None:
            found.append(_wrap(x.data))
    elif type(x) is SavedTensor:
        if x.tensor is not None:
            found.append(x.tensor)
        elif x.packed is not None:
            packed = x.packed
            keeps = getattr(packed, "_saved_tensors", None)
            _collect(keeps() if callable(keeps) else packed, found)

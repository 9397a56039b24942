"""The rest of torch.autograd.graph: GradientEdge and get_gradient_edge, allow_mutation_on_saved_tensors, and
the settings torch keeps for compiled regions and CUDA streams (what they do on a CPU-only torch).

`graph.py` re-exports these names; they are kept apart because they build on its pieces (saved-tensor
hooks, grad_edge) rather than being part of how ops record themselves.
"""

import contextlib
from collections import defaultdict
from typing import NamedTuple
from weakref import WeakKeyDictionary, WeakValueDictionary

from .._modes import Mode, redispatch_inplace
from .graph import Node, grad_edge, saved_tensors_hooks

__all__ = ["GradientEdge", "get_gradient_edge", "allow_mutation_on_saved_tensors", "region_activation_memory_budget",
           "set_warn_on_accumulate_grad_stream_mismatch", "set_override_stale_capture_stream"]


class GradientEdge(NamedTuple):
    """Object representing a given gradient edge within the autograd graph.

    To get the gradient edge where a given Tensor gradient will be computed, use
    ``edge = autograd.graph.get_gradient_edge(tensor)``; ``autograd.grad`` and ``backward`` take such an
    edge wherever they take a tensor among their inputs or outputs.
    """

    node: Node
    output_nr: int
    # torch's token keeping a Python-owned graph alive; ember's nodes are Python objects, kept by `node`
    ownership_token: Node | None = None


def get_gradient_edge(tensor):
    """The gradient edge of `tensor`: ``autograd.grad(loss, get_gradient_edge(x))`` is
    ``autograd.grad(loss, x)``."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    node, nr = grad_edge(tensor)
    return GradientEdge(node, nr)


def edge_of(t):
    """(node, output_nr) of a tensor or a GradientEdge (the engine's targets and roots)."""
    return (t.node, t.output_nr) if isinstance(t, GradientEdge) else grad_edge(t)


# ---- allow_mutation_on_saved_tensors ---------------------------------------------------------------------
# torch's design, on ember's pieces: tensors saved for backward inside the context are packed as handles
# (a saved-tensors hook); a mode sees every in-place op and, before it writes into a tensor whose storage
# and version match a saved one, clones the saved original; unpacking returns the clone if there is one.


def _tid(t):
    return (id(t), t.data_ptr(), t._version)


def _sid(t):
    return (t.data_ptr(), t._version)


class _Handle:
    pass


_enabled = [False]


class _AllowMutationOnSavedContext:
    def __init__(self):
        self.cloned = WeakKeyDictionary()
        self.original = WeakKeyDictionary()
        self.tid_to_weakhandle = WeakValueDictionary()
        self.sid_to_tid = defaultdict(set)

    def clear(self):
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which the graph was "
            "originally recorded.")


class _swap_with_cloned(saved_tensors_hooks):
    def __init__(self, ctx):
        def pack_hook(tensor):
            tid, sid = _tid(tensor), _sid(tensor)
            ctx.sid_to_tid[sid].add(tid)
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None:  # (the same tensor, at the same version, may be saved several times)
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = tensor
            return handle

        def unpack_hook(handle):
            if not _enabled[0]:
                raise AssertionError(_OUTSIDE)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(_OUTSIDE)
            return ctx.original[handle]

        super().__init__(pack_hook, unpack_hook)


class _CloneArgBeforeMutateMode(Mode):
    level = "below"

    def __init__(self, ctx):
        self.ctx = ctx

    def dispatch_inplace(self, op, self_, inputs, params):
        ctx = self.ctx
        sid = _sid(self_)
        for tid in ctx.sid_to_tid.get(sid, ()):
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None or handle in ctx.cloned:  # (freed by a backward already, or cloned already)
                continue
            ctx.cloned[handle] = ctx.original[handle].clone()
            del ctx.original[handle]
        return redispatch_inplace(op, self_, inputs, params)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager under which mutating tensors saved for backward is allowed: they are cloned on
    mutation, so backward sees the values they had when saved. Run both forward and backward inside it.

    Example::

        >>> with ember.autograd.graph.allow_mutation_on_saved_tensors():
        ...     a = ember.ones(2, 3, requires_grad=True)
        ...     b = a.clone()
        ...     out = (b**2).sum()
        ...     b.sin_()
        ...     out.sum().backward()
    """
    ctx = _AllowMutationOnSavedContext()
    with _swap_with_cloned(ctx), _CloneArgBeforeMutateMode(ctx):
        try:
            if _enabled[0]:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _enabled[0] = True
            yield ctx
        finally:
            ctx.clear()
            _enabled[0] = False


# ---- settings for compiled regions and CUDA streams --------------------------------------------------------


def region_activation_memory_budget(budget):
    """The activation memory budget of a region of a compiled graph (torch.compile's partitioner reads it).
    ember has no compiler yet, so, as torch does outside a compiled region, a valid budget is refused."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError(f"torch.autograd.graph.region_activation_memory_budget: expects a float, got "
                        f"{type(budget).__name__}")
    if not 0.0 <= budget <= 1.0:
        raise ValueError(f"torch.autograd.graph.region_activation_memory_budget: must be in [0, 1], got {budget}")
    raise RuntimeError("torch.autograd.graph.region_activation_memory_budget can only be used inside a "
                       "torch.compile region; it has no effect in eager mode.")


def set_warn_on_accumulate_grad_stream_mismatch(enabled):
    """Whether to warn when an AccumulateGrad node's stream differs from its gradient's (CUDA streams): a
    CPU has no streams, so there is nothing to warn about (as on a CPU-only torch)."""
    return None


def set_override_stale_capture_stream(enabled):
    """How autograd treats a stale stream during CUDA graph capture: a CPU has no streams or graph capture,
    so the setting changes nothing (as on a CPU-only torch)."""
    return None


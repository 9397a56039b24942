"""What the FX passes ask of a node: its registry op, whether it has effects, its tensor metadata.

The passes work on graphs from `make_fx`, AOT autograd and the capture alike: a dispatch-level node's target
is an `OpOverload` (`ember.ops.aten.mul.default`) whose `.op` is the registry entry, with the op's inputs as
positional args and its params as kwargs (NOTE [ How an OpOverload is called ] in ember/ops.py).

NOTE [ Which nodes have effects ]
A pass may drop, merge, fold or reorder a node only if running it has no effect beyond its output:
- in-place ops (`aten.add_`, names ending in `_`, the `inplace` tag) write an input;
- `nondeterministic_seeded` ops (`bernoulli_`, `rand`, dropout's mask) advance the generator, so dropping
  one changes every later draw, and merging two would make them equal;
- `native_batch_norm` with training=True updates its running statistics in place (torch's op mutates
  them too, without an `_` in its name);
- a node the capture marked `meta["impure"]` (grad-mode changes), a function marked with
  `fx.has_side_effect`, and any Python callable the passes do not know (it could do anything).
Pure callables besides registered ops: `operator`'s functions (getitem on a multi-output node).
"""

from __future__ import annotations

import operator

_PURE_CALLABLES = frozenset(getattr(operator, n) for n in dir(operator) if not n.startswith("_")
                            and not n.startswith("i") and n not in ("setitem", "delitem"))


def op_of(node):
    """The registry entry (`OpDef`) a call_function node calls, or None."""
    if node.op != "call_function":
        return None
    op = getattr(node.target, "op", None)
    return op if hasattr(op, "tags") else None


def is_inplace(node) -> bool:
    return type(node.target).__name__ == "InplaceOpOverload"


def has_effect(node) -> bool:
    """NOTE [ Which nodes have effects ]."""
    if node.op in ("placeholder", "output"):
        return True
    if node.meta.get("impure"):
        return True
    if node.op == "call_function":
        op = op_of(node)
        if op is None:
            return node.target not in _PURE_CALLABLES or bool(getattr(node.target, "_is_impure", False))
        if is_inplace(node) or "inplace" in op.tags or "nondeterministic_seeded" in op.tags:
            return True
        if op.name.endswith("_"):
            return True
        if op.name == "native_batch_norm" and node.kwargs.get("training", True):
            return True
        return False
    return node.is_impure()


def is_rng(node) -> bool:
    op = op_of(node)
    return op is not None and "nondeterministic_seeded" in op.tags


def val(node):
    """The node's example value (a real or fake tensor) if it recorded one."""
    v = node.meta.get("val") if hasattr(node, "meta") else None
    return v if hasattr(v, "shape") and hasattr(v, "stride") else None


def same_layout(a, b) -> bool:
    """Whether nodes (or values) `a` and `b` have one shape, stride and dtype (both known)."""
    va = val(a) if hasattr(a, "meta") else a
    vb = val(b) if hasattr(b, "meta") else b
    if va is None or vb is None:
        return False
    return tuple(va.shape) == tuple(vb.shape) and tuple(va.stride()) == tuple(vb.stride()) \
        and va.dtype == vb.dtype


def is_view(node) -> bool:
    op = op_of(node)
    return op is not None and op.kind == "view"


def output_node(graph):
    for n in reversed(graph.nodes):
        if n.op == "output":
            return n
    raise RuntimeError("graph has no output node")


def finish(gm):
    """Lint and regenerate the code after a pass changed `gm.graph`."""
    gm.graph.lint()
    gm.recompile()
    return gm

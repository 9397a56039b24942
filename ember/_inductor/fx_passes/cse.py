"""Common subexpression elimination: a node that repeats an earlier node's call is replaced by it.

Two nodes are the same computation when they have one op (kind and target) and equal arguments, after
earlier replacements (so chains of duplicates collapse in one pass). Nodes with an effect (NOTE [ Which
nodes have effects ]) are never merged: two dropout masks must stay two draws. An effect also ends
every earlier entry's life: after `x.add_(1)`, `relu(x)` is not the `relu(x)` computed before it (the write
may reach any alias of x, so the table is cleared rather than tracked per storage).
"""

from __future__ import annotations

from ..._tensor import Tensor
from ._util import finish, has_effect


def _key(node):
    def freeze(a):
        if isinstance(a, (list, tuple)):
            return (type(a).__name__,) + tuple(freeze(x) for x in a)
        if isinstance(a, dict):
            return ("dict",) + tuple(sorted((k, freeze(v)) for k, v in a.items()))
        if isinstance(a, slice):
            return ("slice", freeze(a.start), freeze(a.stop), freeze(a.step))
        if isinstance(a, float) and a != a:
            return ("nan",)
        if isinstance(a, Tensor):  # (a Tensor's == is elementwise: compare constants by identity)
            return ("id", id(a))
        try:
            hash(a)
        except TypeError:
            return ("id", id(a))
        # 1, 1.0 and True hash alike but are different arguments (dtype promotion differs)
        return (type(a).__name__, a)

    return (node.op, node.target, freeze(node.args), freeze(dict(node.kwargs)))


def common_subexpression_elimination(gm):
    """Merge repeated effect-free nodes of `gm.graph`; returns `gm` (recompiled)."""
    graph = gm.graph
    seen: dict = {}
    changed = False
    for node in list(graph.nodes):
        if node.op in ("placeholder", "output"):
            continue
        if has_effect(node):
            seen.clear()
            continue
        key = _key(node)
        prior = seen.get(key)
        if prior is None:
            seen[key] = node
            continue
        node.replace_all_uses_with(prior)
        graph.erase_node(node)
        changed = True
    if changed:
        finish(gm)
    return gm

"""Dead code elimination: erase nodes whose values nothing uses and that have no effect.

Walks from the output back (one sweep frees whole dead chains). A node is kept, used or not, when it has an
effect (NOTE [ Which nodes have effects ] in _util.py): in-place writes, RNG draws (dropping one would shift
every later random number), batch norm's running-statistics update, grad-mode changes. A multi-output
node whose getitems are all dead goes with them. Unused placeholders stay: they are the signature.
"""

from __future__ import annotations

from ._util import finish, has_effect


def dead_code_elimination(gm):
    """Erase unused, effect-free nodes of `gm.graph`; returns `gm` (recompiled)."""
    graph = gm.graph
    changed = False
    for node in reversed(list(graph.nodes)):
        if not node.users and not has_effect(node):
            graph.erase_node(node)
            changed = True
    if changed:
        # get_attr targets nothing reads any more (a folded constant's inputs) leave the module too
        finish(gm)
    return gm

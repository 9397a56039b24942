"""`replace_pattern`: find every occurrence of a pattern graph in a GraphModule and replace it.

The pattern and the replacement are functions (or GraphModules) with the same parameters; both are traced.
A match is found by walking the pattern backwards from its output node: a pattern node matches a graph node
of the same kind and target whose arguments match in turn; a pattern placeholder matches any value, the
same one wherever it appears. Matched nodes must not be used outside the match (except the matched
output). Each match, earliest first and without overlaps, is replaced by a copy of the replacement graph
wired to the values the placeholders matched. Returns the matches, as torch's does.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from .graph_module import GraphModule
from .node import Node

__all__ = ["replace_pattern", "Match"]


class Match(NamedTuple):
    anchor: Node  # the graph node the pattern's output matched
    nodes_map: dict  # pattern node -> graph node (or value)


def _graph_of(fn):
    from ._symbolic_trace import symbolic_trace

    return fn.graph if isinstance(fn, GraphModule) else symbolic_trace(fn).graph


def _match(pn, gn, nodes_map) -> bool:
    if pn in nodes_map:
        return nodes_map[pn] is gn if isinstance(gn, Node) else nodes_map[pn] == gn
    if pn.op == "placeholder":
        nodes_map[pn] = gn
        return True
    if not isinstance(gn, Node) or pn.op != gn.op or pn.target != gn.target:
        return False
    if len(pn.args) != len(gn.args) or set(pn.kwargs) != set(gn.kwargs):
        return False
    nodes_map[pn] = gn
    pairs = list(zip(pn.args, gn.args)) + [(pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs]
    for pa, ga in pairs:
        if isinstance(pa, Node):
            if not _match(pa, ga, nodes_map):
                return False
        elif pa != ga:
            return False
    return True


def replace_pattern(gm: GraphModule, pattern: Callable | GraphModule,
                    replacement: Callable | GraphModule) -> list:
    """Replace every non-overlapping match of `pattern` in `gm` by `replacement`; return the matches."""
    p_graph, r_graph = _graph_of(pattern), _graph_of(replacement)
    p_out = next(n for n in p_graph.nodes if n.op == "output").args[0]
    if not isinstance(p_out, Node):
        raise RuntimeError("replace_pattern: the pattern must return a single value")
    p_inputs = [n for n in p_graph.nodes if n.op == "placeholder"]
    matches, used = [], set()
    for node in list(gm.graph.nodes):
        if node.op in ("placeholder", "output") or node in used:
            continue
        nodes_map: dict = {}
        if not _match(p_out, node, nodes_map):
            continue
        inner = [g for p, g in nodes_map.items() if p.op != "placeholder"]
        if any(g in used for g in inner):
            continue
        # nothing outside the match may use an inner value (the output may be used anywhere)
        if any(u not in inner for g in inner if g is not node for u in g.users):
            continue
        used.update(inner)
        matches.append(Match(node, nodes_map))
    for m in matches:
        env = {}
        r_inputs = [n for n in r_graph.nodes if n.op == "placeholder"]
        for rp, pp in zip(r_inputs, p_inputs):
            env[rp] = m.nodes_map[pp]
        with gm.graph.inserting_before(m.anchor):
            out = None
            for rn in r_graph.nodes:
                if rn.op == "placeholder":
                    continue
                if rn.op == "output":
                    out = rn.args[0]
                    break
                env[rn] = gm.graph.node_copy(rn, lambda a: env[a])
        new = env[out] if isinstance(out, Node) else out
        m.anchor.replace_all_uses_with(new)
        inner = {g for p, g in m.nodes_map.items() if p.op != "placeholder"}
        for g in reversed(list(gm.graph.nodes)):  # users before what they use
            if g in inner and not g.users:
                gm.graph.erase_node(g)
    gm.recompile()
    return matches

"""Partitioning a joint forward+backward graph into a forward graph and a backward graph.

The joint graph (AOT autograd's) takes `primals` and `tangents` and returns the forward outputs, then the
gradients. Splitting it means choosing which forward values the forward graph hands to the backward one
(the *saved* values); whatever the backward needs and is not saved, it recomputes from what is.

- `default_partition` saves everything: every value computed from primals alone that a tangent-dependent
  node uses is saved (what eager autograd does).
- `min_cut_rematerialization_partition` (torch's default) chooses the cheapest set of values to save: a
  minimum cut of a flow network in which cutting a node costs the bytes of its value, with the primals on
  the source side and the nodes that need tangents on the sink side (NOTE [ The min-cut network ]). Cheap
  pointwise and view chains are then recomputed in the backward from a smaller saved set, which lowers the
  memory held between forward and backward.

Both return `(forward GraphModule, backward GraphModule)`: the forward graph outputs the forward outputs
then the saved values; the backward graph takes the saved values then the tangents.
"""

from __future__ import annotations

from collections import deque

from ..fx.graph import Graph
from ..fx.graph_module import GraphModule

__all__ = ["default_partition", "min_cut_rematerialization_partition", "max_flow_min_cut"]


def _is_tangent(n) -> bool:
    return n.op == "placeholder" and n.target.startswith("tangents")


def _is_primal(n) -> bool:
    return n.op == "placeholder" and not _is_tangent(n)


def _outputs(joint) -> tuple[list, list]:
    """(forward outputs, backward outputs) of the joint graph: `num_fwd_outputs` says where they split."""
    out = next(n for n in joint.graph.nodes if n.op == "output")
    flat = list(out.args[0])
    k = joint.meta_num_fwd_outputs
    return flat[:k], flat[k:]


def _tangent_dependent(joint) -> set:
    """The nodes whose value depends on a tangent: they can only run in the backward."""
    dep = set()
    for n in joint.graph.nodes:
        if _is_tangent(n) or any(a in dep for a in n.all_input_nodes):
            dep.add(n)
    return dep


def _ancestors(roots, stop=frozenset()) -> set:
    seen, todo = set(), [r for r in roots if hasattr(r, "op")]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n not in stop:
            todo.extend(n.all_input_nodes)
    return seen


def _extract(joint, inputs: list, outputs: list, name: str) -> GraphModule:
    """A graph computing `outputs` from `inputs` (nodes of the joint graph), copying the nodes between."""
    g = Graph()
    env = {}
    for n in inputs:
        env[n] = g.placeholder(n.name)
        env[n].meta = dict(n.meta)
    needed = _ancestors(outputs, stop=set(inputs))
    for n in joint.graph.nodes:
        if n in needed and n not in env and n.op != "output":
            if n.op == "placeholder":
                raise RuntimeError(f"partition: the {name} graph needs {n.name}, which it is not given")
            env[n] = g.node_copy(n, lambda a: env[a])
    g.output(tuple(env[o] if hasattr(o, "op") else o for o in outputs))
    return GraphModule(joint, g, name)


def _split(joint, saved: list) -> tuple[GraphModule, GraphModule]:
    fwd_outs, bwd_outs = _outputs(joint)
    primals = [n for n in joint.graph.nodes if _is_primal(n)]
    tangents = [n for n in joint.graph.nodes if _is_tangent(n)]
    saved = [n for n in joint.graph.nodes if n in set(saved)]  # graph order
    fw = _extract(joint, primals, list(fwd_outs) + saved, "GraphModule")
    bw = _extract(joint, saved + tangents, list(bwd_outs), "GraphModule")
    fw.meta_num_saved = bw.meta_num_saved = len(saved)
    return fw, bw


def default_partition(joint_module: GraphModule, _joint_inputs=None, *, num_fwd_outputs: int) -> tuple:
    """Save every forward value the backward uses (see the module docstring)."""
    joint_module.meta_num_fwd_outputs = num_fwd_outputs
    bw_only = _tangent_dependent(joint_module)
    fwd_outs, bwd_outs = _outputs(joint_module)
    bw_needed = _ancestors(bwd_outs)
    saved = []
    for n in joint_module.graph.nodes:
        if n in bw_only or n.op == "output" or n not in bw_needed:
            continue
        if any(u in bw_only for u in n.users):
            saved.append(n)
    return _split(joint_module, saved)


# NOTE [ The min-cut network ]
# Each joint-graph node v that the backward may need becomes two vertices v_in -> v_out joined by an edge
# whose capacity is the bytes of v's value (what saving v costs), and every data edge u -> v becomes
# u_out -> v_in with infinite capacity. The source feeds the primals; the sink drains every node that uses a
# tangent (the backward proper). A finite cut then separates "computed in the forward" from "computed in
# the backward" across some v_in -> v_out edges: those v are saved, the ones after them are recomputed. An
# op that must not run twice or is expensive (random draws, matmuls, convolutions, reductions: torch's
# "banned from recomputation" set) is tied to the source, so it is computed in the forward and its value, if
# the backward needs it, saved. A cheap op the forward computes anyway (for an output) is not tied: the
# backward may recompute it from something smaller, as torch's partitioner allows.
_RECOMPUTABLE_KINDS = frozenset({"pointwise", "view", "shape"})


def _recomputable(n) -> bool:
    op = getattr(n.target, "op", None)
    if op is None:
        return n.op == "call_function"  # getitem and the like
    return op.kind in _RECOMPUTABLE_KINDS and "nondeterministic_seeded" not in op.tags


def _bytes(n) -> float:
    v = n.meta.get("val")
    if v is None or not hasattr(v, "shape"):
        return 1.0
    numel = 1
    for s in v.shape:
        numel *= s
    return float(max(numel, 1) * v.dtype.itemsize)


def max_flow_min_cut(edges: dict, source, sink) -> tuple[float, set]:
    """Edmonds-Karp maximum flow on `edges` ({(u, v): capacity}); returns (flow, the vertices on the source
    side of a minimum cut)."""
    inf = float("inf")
    residual: dict = {}
    adj: dict = {}
    for (u, v), c in edges.items():
        residual[(u, v)] = residual.get((u, v), 0.0) + c
        residual.setdefault((v, u), 0.0)
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
    flow = 0.0
    while True:
        parent = {source: None}
        q = deque([source])
        while q and sink not in parent:
            u = q.popleft()
            for v in adj.get(u, ()):
                if v not in parent and residual[(u, v)] > 0:
                    parent[v] = u
                    q.append(v)
        if sink not in parent:
            break
        bottleneck, v = inf, sink
        while parent[v] is not None:
            u = parent[v]
            bottleneck = min(bottleneck, residual[(u, v)])
            v = u
        if bottleneck == inf:
            raise RuntimeError("min-cut: no finite cut separates the forward from the backward")
        v = sink
        while parent[v] is not None:
            u = parent[v]
            residual[(u, v)] -= bottleneck
            residual[(v, u)] += bottleneck
            v = u
        flow += bottleneck
    reach, q = {source}, deque([source])
    while q:
        u = q.popleft()
        for v in adj.get(u, ()):
            if v not in reach and residual[(u, v)] > 0:
                reach.add(v)
                q.append(v)
    return flow, reach


def min_cut_rematerialization_partition(joint_module: GraphModule, _joint_inputs=None, compiler="inductor",
                                        *, num_fwd_outputs: int, **kwargs) -> tuple:
    """Save the cheapest set of forward values, recomputing the rest in the backward (see the module
    docstring and NOTE [ The min-cut network ])."""
    joint_module.meta_num_fwd_outputs = num_fwd_outputs
    inf = float("inf")
    bw_only = _tangent_dependent(joint_module)
    fwd_outs, bwd_outs = _outputs(joint_module)
    bw_needed = _ancestors(bwd_outs)
    edges: dict = {}
    for n in joint_module.graph.nodes:
        if n.op == "output" or n not in bw_needed:
            continue
        if n in bw_only:
            edges[(n.name + "_in", "sink")] = inf
            continue
        if _is_primal(n) or not _recomputable(n):
            edges[("source", n.name + "_in")] = inf
        edges[(n.name + "_in", n.name + "_out")] = _bytes(n)
        for u in n.users:
            if u.op != "output" and u in bw_needed:
                edges[(n.name + "_out", u.name + "_in")] = inf
    _, reach = max_flow_min_cut(edges, "source", "sink")
    saved = [n for n in joint_module.graph.nodes
             if n.name + "_in" in reach and n.name + "_out" not in reach and n not in bw_only]
    return _split(joint_module, saved)

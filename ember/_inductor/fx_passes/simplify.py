"""Algebraic simplification: identities that need no arithmetic, as torch's `remove_no_ops` and view passes.

- `x * 1`, `1 * x`, `x + 0` (any alpha), `x - 0`, `x / 1` -> `x`;
- redundant copies: `clone`, `contiguous` and `expand` whose result has x's own shape, strides and dtype
  -> `x`;
- chains of `t`/`transpose`/`permute` -> one `permute`, or `x` itself when they cancel (`x.t().t()`);
- chains of `view`/`reshape` -> one node from the chain's start (`view` when every link is a view and the
  direct view is valid for x's strides, else `reshape`); one that ends at x's own shape -> `x`.
Each rewrite is checked against the nodes' recorded values (shape, strides, dtype): `x * 1` with an integer
x and a float 1 is a float tensor and is kept.

NOTE [ Forwarding a value without changing aliasing ]
Replacing a node N by its source S is invisible inside a functional graph, but visible through the outputs:
returning S where eager returned a fresh copy would make the output alias an input, a constant or another
output (a later in-place write through one would reach the other). So a node that the output returns is
replaced only by an intermediate that is not a view and that the output does not return already; and no
copy is removed whose source (or its base, through views) the graph writes in place. `x + 0` on a float
-0.0 gives +0.0 in eager and -0.0 after the rewrite, as in torch.compile, which removes these no-ops the
same way.
"""

from __future__ import annotations

from ._util import finish, has_effect, is_view, op_of, output_node, same_layout, val

_IDENTITY_SCALAR = {"mul": (1,), "div": (1,), "add": (0,), "sub": (0,)}
# (`to` is not here: eager `x.to(x.dtype)` records no node, so a recorded `to` is a real cast; AOT's
# functionalization records a cast back to an in-place op's dtype after the out-of-place op, whose recorded
# dtype is then the in-place one, `logical_xor_` on floats: the cast must stay)
_COPIES = {"clone", "contiguous", "expand", "alias"}
_PERMUTES = {"t", "transpose", "permute"}
_RESHAPES = {"view", "reshape", "_unsafe_view"}


def _static(node) -> bool:
    """Whether every argument of `node` besides tensors is a plain value: in a graph with symbolic sizes a
    shape argument may be a node (`x.size(0)`), and a rewrite decided on the example sizes would bake them in
    (NOTE [ Dynamic shapes ] in ember/_dynamo/output_graph.py)."""
    return all(val(n) is not None for n in node.all_input_nodes)


def _is_num(a, v):
    return type(a) in (int, float) and a == v


def _base(n):
    while is_view(n) and n.args and hasattr(n.args[0], "op"):
        n = n.args[0]
    return n


def _written(graph):
    """The bases of the buffers the graph writes in place, or None when an unknown effect could write any."""
    bases = set()
    for n in graph.nodes:
        if n.op != "call_function" or not has_effect(n):
            continue
        op = op_of(n)
        if op is None:
            return None
        if op.name == "native_batch_norm":
            targets = n.args[3:5]
        elif "inplace" in op.tags or op.name.endswith("_") or type(n.target).__name__ == "InplaceOpOverload":
            targets = n.args[:1]
        else:
            continue  # an RNG op that allocates its result writes nothing of the graph's
        bases.update(_base(t) for t in targets if hasattr(t, "op"))
    return bases


def _may_forward(node, src, outputs, writes):
    """NOTE [ Forwarding a value without changing aliasing ]."""
    if src.op == "get_attr":
        return False
    if not is_view(node) and (writes is None or _base(src) in writes or node in writes):
        return False
    if node not in outputs:
        return True
    return src.op == "call_function" and not is_view(src) and src not in outputs


def _perm(node, ndim):
    """The permutation a t/transpose/permute node applies to its input's dims, or None."""
    name = op_of(node).name
    if name == "t":
        return list(range(ndim))[::-1] if ndim == 2 else list(range(ndim))
    if name == "transpose":
        d0, d1 = (node.kwargs.get(k, a) for k, a in zip(("d0", "d1"), node.args[1:3] or (None, None)))
        if d0 is None or d1 is None:
            return None
        p = list(range(ndim))
        p[d0 % ndim], p[d1 % ndim] = p[d1 % ndim], p[d0 % ndim]
        return p
    dims = node.kwargs.get("dims", node.args[1] if len(node.args) > 1 else None)
    return None if dims is None else [d % ndim for d in dims]


def algebraic_simplification(gm):
    """Apply the identities above to `gm.graph`; returns `gm` (recompiled)."""
    import ember

    graph = gm.graph
    out = output_node(graph)
    outputs = set(out.all_input_nodes)
    writes = _written(graph)
    changed = False
    for node in list(graph.nodes):
        op = op_of(node)
        if op is None or not node.args or not hasattr(node.args[0], "op"):
            continue
        src = node.args[0]
        name = op.name
        new = None
        if not _static(node):
            continue
        if name in _IDENTITY_SCALAR and len(node.args) == 2:
            a, b = node.args
            if _is_num(b, _IDENTITY_SCALAR[name][0]):
                new = a
            elif name == "mul" and _is_num(a, 1) and hasattr(b, "op"):
                new = b
            new = new if new is not None and same_layout(node, new) else None
        elif name in _COPIES and len(node.all_input_nodes) == 1 and same_layout(node, src):
            new = src
        elif name in _PERMUTES:
            new = _fold_permutes(graph, node, ember)
        elif name in _RESHAPES:
            new = _fold_reshapes(graph, node, ember)
        if new is None or new is node:
            continue
        fresh = new.op == "call_function" and not new.users and new is not src
        if not fresh and not _may_forward(node, new, outputs, writes):
            continue
        node.replace_all_uses_with(new)
        if node in outputs:
            outputs.discard(node)
            outputs.add(new)
        graph.erase_node(node)
        changed = True
    if changed:
        from .dce import dead_code_elimination

        dead_code_elimination(gm)
        finish(gm)
    return gm


def _chain(node, names):
    """The nodes of the chain ending at `node` whose ops are in `names` (each with one user but the last)."""
    chain = [node]
    while True:
        src = chain[-1].args[0]
        sop = op_of(src) if hasattr(src, "op") else None
        if sop is None or sop.name not in names or len(src.users) != 1 or not _static(src):
            return chain
        chain.append(src)


def _fold_permutes(graph, node, ember):
    chain = _chain(node, _PERMUTES)
    root = chain[-1].args[0]
    v = val(root)
    if v is None:
        return None
    ndim = v.dim()
    perm = list(range(ndim))
    for link in reversed(chain):
        p = _perm(link, ndim)
        if p is None:
            return None
        perm = [perm[i] for i in p]
    if perm == list(range(ndim)):
        return root
    if len(chain) < 2:
        return None
    with graph.inserting_before(node):
        new = graph.call_function(ember.ops.aten.permute.default, (root,), {"dims": tuple(perm)})
    new.meta.update(node.meta)
    return new


def _fold_reshapes(graph, node, ember):
    from ember._meta import view_strides

    chain = _chain(node, _RESHAPES)
    root = chain[-1].args[0]
    v, vn = val(root), val(node)
    if v is None or vn is None:
        return None
    shape = tuple(vn.shape)
    all_views = all(op_of(link).name == "view" for link in chain)
    if shape == tuple(v.shape) and (all_views or v.is_contiguous()):
        return root
    if len(chain) < 2:
        return None
    direct = view_strides(tuple(v.shape), tuple(v.stride()), shape)
    if all_views and (direct is None or tuple(direct) != tuple(vn.stride())):
        return None
    target = ember.ops.aten.view.default if all_views else ember.ops.aten.reshape.default
    with graph.inserting_before(node):
        new = graph.call_function(target, (root,), {"shape": shape})
    new.meta.update(node.meta)
    return new

"""Pattern rewrites: `x @ w.t() + b` (and every `mm(a, b) + bias`) becomes one `addmm(bias, a, b)`.

make_fx and AOT graphs of a user's `x @ w.t() + b` hold `t`, `mm`, `add` (nn.Linear already records
`addmm`); BLAS then writes the product and a second pass adds the bias. `addmm` adds it in the same call
(ember's kernel computes `a @ b + bias`, the same float operations in the same order as `mm` then `add`,
so results are bitwise equal). `add(mm, bias, alpha=k)` becomes `beta=k`. Only when the sum has the
product's shape, strides and dtype (bias broadcasts into it and promotes nothing), and the product has no
other user. `bmm(a, b) + bias` becomes `baddbmm` under the same conditions.
"""

from __future__ import annotations

from ._util import finish, op_of, same_layout, val

_FUSED = {"mm": "addmm", "bmm": "baddbmm"}


def _product(node):
    op = op_of(node) if hasattr(node, "op") else None
    if op is None or op.name not in _FUSED or len(node.users) != 1 or node.kwargs:
        return None
    return op.name


def fuse_mm_bias(gm):
    """Rewrite `add(mm(a, b), bias)` to `addmm(bias, a, b)` in `gm.graph`; returns `gm`."""
    import ember

    graph = gm.graph
    changed = False
    for node in list(graph.nodes):
        op = op_of(node)
        if op is None or op.name != "add" or len(node.args) != 2:
            continue
        alpha = node.kwargs.get("alpha", 1)
        lhs, rhs = node.args
        if _product(lhs) and hasattr(rhs, "op"):
            prod, bias, beta = lhs, rhs, alpha
        elif _product(rhs) and hasattr(lhs, "op") and alpha == 1:
            prod, bias, beta = rhs, lhs, 1
        else:
            continue
        vb, vp = val(bias), val(prod)
        if vb is None or vp is None or vb.dtype != vp.dtype or not same_layout(node, prod):
            continue
        if vb.dim() > vp.dim() or isinstance(beta, bool):
            continue
        fused = getattr(ember.ops.aten, _FUSED[op_of(prod).name]).default
        a, b = prod.args
        with graph.inserting_before(node):
            new = graph.call_function(fused, (bias, a, b), {"beta": beta, "alpha": 1})
        new.meta.update(node.meta)
        node.replace_all_uses_with(new)
        graph.erase_node(node)
        graph.erase_node(prod)
        changed = True
    if changed:
        finish(gm)
    return gm

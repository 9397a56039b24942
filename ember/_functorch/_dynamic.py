"""Dynamic sizes through AOT autograd: graphs that compute their shape arguments from their inputs' sizes.

NOTE [ Dynamic sizes through AOT ]
torch traces with `tracing_mode="symbolic"`: sizes are SymInts through every meta function, and a graph's
shape arguments are expressions over its inputs' sizes, guarded where code branched on them. ember's meta
rules compute with Python ints, so a trace records numbers (`view(shape=(6, 8))`). Instead of symbols through
the rules, the size dependence is read off several traces, as ember's ONNX export does for dynamic axes:

1. *Which sizes.* A size is dynamic when the caller marks it (the capture's `dynamic=True`, `mark_dynamic` or
   automatic dynamic, handed down on the graph's placeholders as `meta["dynamic_dims"]`), or when a later call
   of the same compiled function brings a different value for it (automatic dynamic at this level). Sizes 0
   and 1 stay static, as torch specializes them (broadcasting and contiguity depend on them).
2. *Traces.* The function is traced (on fake tensors, nothing computed) at the first sizes, with each dynamic
   size one and two larger, and with each pair of them one larger together.
3. *Forms.* The traces must give graphs of the same structure (the same nodes, calls and arguments, every
   value but the ints equal); each int argument must then be `c + sum(a_k * s_k) + sum(b_kl * s_k * s_l)` in
   the sizes `s_k`: `a_k` from one step, checked against the second (linear in each size), `b_kl` from the
   pair. A size whose traces differ in structure (an LSTM's per-step sizes, a branch on a size), or whose
   ints are not of that form, is made static again (its value becomes part of the entry's guard), as torch
   specializes a symbol that code guards on; if none is left, the sizes are traced one by one as before.
4. *Graphs.* In each graph (forward and backward) a size is read from a placeholder that carries it
   (`primals_1.size(0)`, `tangents_1.size(0)`), each non-constant int argument becomes nodes of
   `operator.mul` / `operator.add` over those sizes, and the graphs are compiled once.
5. *Guards.* The entry runs any later call whose inputs have the same dtypes, ranks, requires_grad, dense
   layouts in the same dimension order and Python arguments, the same static sizes, and dynamic sizes >= 2.

What this does not do, where torch's symbolic tracing does: a decision taken inside an op's Python code on a
size (a threshold) that gives the same structure at the sampled sizes and a different one elsewhere is not
seen; ints that are not of the form above (a size squared, a float from a size such as a mean's 1/n) make the
size static instead of becoming an expression.
"""

from __future__ import annotations

import operator

from .._tensor import Tensor
from ..fx.node import Node


class _Entry:
    def __init__(self, sig, base_sizes, symbols, compiled):
        self.sig, self.base_sizes, self.symbols, self.compiled = sig, base_sizes, set(symbols), compiled

    def accepts(self, args) -> bool:
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                for d, (s, b) in enumerate(zip(a.shape, self.base_sizes[i])):
                    if s < 2 if (i, d) in self.symbols else s != b:
                        return False
        return True


def _signature(args, training):
    from .aot_autograd import _order

    out = [training]
    for a in args:
        if isinstance(a, Tensor):
            order = _order(a.stride())
            out.append((a.dtype, a.dim(), a.requires_grad, order, _dense_in(a, order)))
        else:
            out.append((type(a), a))
    return tuple(out)


def _dense_in(t, order) -> bool:
    from .aot_autograd import _dense

    return t.stride() == _dense(tuple(t.shape), order)


def entry(aot, args, training):
    """The compiled entry for `args` when some of their sizes are dynamic; None to trace them as they are."""
    sig = _signature(args, training)
    for g in aot.generalized:
        if g.sig == sig and g.accepts(args):
            return g.compiled
    if not all(s[-1] for s in sig[1:] if type(s[0]) is not type):  # (a layout with gaps: traced per size)
        return None
    sizes = [tuple(a.shape) if isinstance(a, Tensor) else None for a in args]
    first = aot.seen.setdefault(sig, sizes)
    symbols = [(i, d) for i, shape in enumerate(sizes) if shape is not None for d, s in enumerate(shape)
               if s >= 2 and (d in aot.dynamic_dims.get(i, ()) or first[i][d] != s)]
    if not symbols:
        return None
    found = _generalize(aot, args, training, symbols)
    if found is None:
        return None
    c, kept = found
    e = _Entry(sig, sizes, kept, aot._compile(c, training))
    aot.generalized.append(e)
    return e.compiled


# ---- tracing at other sizes ------------------------------------------------------------------------------


def _variant(args, symbols, steps):
    """Meta stand-ins for `args` with the sizes of `symbols[k]` grown by `steps[k]`, laid out alike."""
    from .. import empty_strided
    from .aot_autograd import _dense, _order

    out = []
    for i, a in enumerate(args):
        if not isinstance(a, Tensor):
            out.append(a)
            continue
        shape = list(a.shape)
        for k, n in steps.items():
            j, d = symbols[k]
            if j == i:
                shape[d] += n
        stride = _dense(tuple(shape), _order(a.stride()))
        t = empty_strided(tuple(shape), stride, dtype=a.dtype, device="meta")
        out.append(t.requires_grad_(a.requires_grad) if a.requires_grad else t)
    return out


def _graphs(c):
    return [g for g in (c.fw_graph, c.bw_graph) if g is not None]


def _walk(x, idx, struct, ints):
    """Flatten an argument: node references by position, ints collected, everything else compared."""
    if isinstance(x, Node):
        struct.append(("node", idx[x]))
    elif isinstance(x, bool) or not isinstance(x, (int, tuple, list, dict)):
        struct.append(("value", type(x).__name__, repr(x)))
    elif isinstance(x, int):
        struct.append(("int",))
        ints.append(x)
    elif isinstance(x, dict):
        struct.append(("dict", tuple(x)))
        for v in x.values():
            _walk(v, idx, struct, ints)
    else:
        struct.append((type(x).__name__, len(x)))
        for v in x:
            _walk(v, idx, struct, ints)


def _shape_of(gm):
    """(structure, int leaves) of a graph."""
    idx = {n: i for i, n in enumerate(gm.graph.nodes)}
    struct, ints = [], []
    for n in gm.graph.nodes:
        struct.append((n.op, n.target if n.op != "placeholder" else None))
        _walk(n.args, idx, struct, ints)
        _walk(n.kwargs, idx, struct, ints)
    return struct, ints


def _placeholder_sizes(gm):
    return [tuple(n.meta["val"].shape) if isinstance(n.meta.get("val"), Tensor) else None
            for n in gm.graph.nodes if n.op == "placeholder"]


def _generalize(aot, args, training, symbols):
    base = aot._trace(args, training)
    base_shapes = [_shape_of(g) for g in _graphs(base)]
    k_all = range(len(symbols))

    def trace(steps):
        try:
            c = aot._trace(_variant(args, symbols, steps), training)
        except Exception:  # noqa: BLE001 - a size the function refuses at other values: it stays static
            return None
        shapes = [_shape_of(g) for g in _graphs(c)]
        if len(shapes) != len(base_shapes) or any(s[0] != b[0] for s, b in zip(shapes, base_shapes)):
            return None
        return c, [s[1] for s in shapes]

    one = {k: trace({k: 1}) for k in k_all}
    two = {k: trace({k: 2}) if one[k] is not None else None for k in k_all}
    live = [k for k in k_all if one[k] is not None and two[k] is not None]
    pairs = {(k, m): trace({k: 1, m: 1}) for k in live for m in live if k < m}
    while True:
        forms, bad = _fit(base_shapes, one, two, pairs, live, [args[i].shape[d] for i, d in symbols])
        if bad is None:
            break
        live.remove(bad)
    if not live:
        return None
    values = [args[i].shape[d] for i, d in symbols]
    for gi, g in enumerate(_graphs(base)):
        if not _rewrite(g, forms[gi], values, one, gi):
            return None
    return base, [symbols[k] for k in live]


def _fit(base_shapes, one, two, pairs, live, values):
    """Per graph, per int leaf, its form `(c, {k: a}, {(k, m): b})` in the live sizes; or the first size
    whose leaves are not of that form (to make static)."""
    forms = []
    for gi, (_, ints) in enumerate(base_shapes):
        graph_forms = []
        for li, f0 in enumerate(ints):
            a, b = {}, {}
            for k in live:
                f1, f2 = one[k][1][gi][li], two[k][1][gi][li]
                if f2 - f1 != f1 - f0:
                    return None, k
                if f1 != f0:
                    a[k] = f1 - f0
            for (k, m), p in pairs.items():
                if k in live and m in live:
                    if p is None:
                        return None, m
                    d = p[1][gi][li] - one[k][1][gi][li] - one[m][1][gi][li] + f0
                    if d:
                        b[(k, m)] = d
            # from steps at the base sizes to coefficients of the sizes themselves
            alpha = {k: a.get(k, 0) - sum(v * values[m if k == kk else kk] for (kk, m), v in b.items()
                                          if k in (kk, m)) for k in live}
            c = f0 - sum(alpha[k] * values[k] for k in live) - sum(v * values[k] * values[m]
                                                                   for (k, m), v in b.items())
            graph_forms.append((c, {k: v for k, v in alpha.items() if v}, b))
        forms.append(graph_forms)
    return forms, None


def _rewrite(gm, forms, values, one, gi) -> bool:
    """Replace each non-constant int argument of `gm` by nodes computing it from its inputs' sizes."""
    if all(not f[1] and not f[2] for f in forms):
        return True
    g = gm.graph
    placeholders = [n for n in g.nodes if n.op == "placeholder"]
    base_sizes = _placeholder_sizes(gm)
    first_op = next(n for n in g.nodes if n.op != "placeholder")
    size_nodes = {}

    def size(k):  # a dim of an input that is size k itself: its value at the base, one more in k's trace
        if k not in size_nodes:
            size_nodes[k] = None
            moved = _placeholder_sizes(_graphs(one[k][0])[gi])
            for p, b, m in zip(placeholders, base_sizes, moved):
                if b is None or m is None or len(b) != len(m):
                    continue
                d = next((d for d, (x, y) in enumerate(zip(b, m)) if x == values[k] and y == x + 1), None)
                if d is not None:
                    with g.inserting_before(first_op):
                        size_nodes[k] = g.call_method("size", (p, d))
                    size_nodes[k].meta["val"] = values[k]
                    break
        return size_nodes[k]

    def emit(target, *a):
        with g.inserting_before(first_op):
            return g.call_function(target, a)

    def build(form):
        c, alpha, beta = form
        total = None
        for k, v in alpha.items():
            s = size(k)
            if s is None:
                return None
            term = s if v == 1 else emit(operator.mul, s, v)
            total = term if total is None else emit(operator.add, total, term)
        for (k, m), v in beta.items():
            sk, sm = size(k), size(m)
            if sk is None or sm is None:
                return None
            term = emit(operator.mul, sk, sm)
            term = term if v == 1 else emit(operator.mul, term, v)
            total = term if total is None else emit(operator.add, total, term)
        return total if c == 0 else emit(operator.add, total, c)

    it = iter(forms)

    def replace(x):
        if isinstance(x, Node) or isinstance(x, bool) or not isinstance(x, (int, tuple, list, dict)):
            return x
        if isinstance(x, int):
            form = next(it)
            if not form[1] and not form[2]:
                return x
            node = build(form)
            if node is None:
                raise LookupError
            return node
        if isinstance(x, dict):
            return {k: replace(v) for k, v in x.items()}
        return type(x)(replace(v) for v in x)

    try:
        for n in list(g.nodes):
            if n in size_nodes.values() or n.op == "placeholder":
                continue
            n.args, n.kwargs = replace(n.args), replace(n.kwargs)
    except LookupError:  # a size this graph has no input to read from
        return False
    gm.recompile()
    return True

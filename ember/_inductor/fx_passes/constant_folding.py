"""Constant folding: subgraphs computed only from constants (get_attr tensors) run once, at compile time.

A node folds when it has no effect (NOTE [ Which nodes have effects ] in _util.py: no RNG draw, no in-place
write) and every node it reads is a constant or folded. Its value is computed by calling the node's op on
the constant values; where a folded value is read by code that stays (the frontier), the node becomes a
`get_attr` of a new attribute `_frozen_param<i>`, torch's name; the folded interior is then dead.

NOTE [ What constant folding refuses ]
As torch's `constant_fold` (torch/_inductor/constant_folding.py):
- constructors are not folded (`full`, `arange`, `zeros` with no tensor input): generated code makes them
  as cheaply as it reads them, and a stored tensor would be an extra read;
- a folded value whose elements are all equal is not stored: it becomes one `full(shape, value)` node, as
  torch's uniform-value folding does (`x * 0` on a constant, `ones * 2`);
- parameters (an `nn.Parameter`, or any tensor that requires grad) are not constants: training changes
  them. (AOT graphs lift parameters to placeholders anyway.)
And the size limit: a folded tensor is stored only when it is no larger than the constants it was computed
from, or under `max_bytes` (64 KiB). A fold that grows memory (an `expand`, an outer product of two constant
vectors) would trade a cheap op for a large read on every call and a larger module.
"""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ._util import finish, has_effect, op_of

MAX_BYTES = 64 * 1024


def _attr(gm, target):
    obj = gm
    for atom in target.split("."):
        obj = getattr(obj, atom)
    return obj


def _nbytes(v):
    return v.numel() * v.element_size() if isinstance(v, Tensor) else 0


def _map(a, env):
    from ember.fx import Node

    if isinstance(a, Node):
        return env[a]
    if isinstance(a, (list, tuple)):
        return type(a)(_map(x, env) for x in a)
    if isinstance(a, dict):
        return {k: _map(v, env) for k, v in a.items()}
    return a


def _uniform(t):
    d = t.detach().numpy() if t.numel() else None
    if d is None or t.dtype.is_complex:
        return None
    flat = d.reshape(-1)
    first = flat[0]
    if np.isnan(first) if d.dtype.kind == "f" else False:
        return None
    return first.item() if bool((flat == first).all()) else None


def constant_fold(gm, max_bytes: int = MAX_BYTES):
    """Fold `gm`'s constant-only subgraphs (NOTE [ What constant folding refuses ]); returns `gm`."""
    import ember

    graph = gm.graph
    env: dict = {}
    source_bytes: dict = {}  # node -> bytes of the get_attr constants its value was computed from
    for node in graph.nodes:
        if node.op == "get_attr":
            v = _attr(gm, node.target)
            if isinstance(v, Tensor) and (v.requires_grad or isinstance(v, ember.nn.Parameter)):
                continue
            env[node] = v
            source_bytes[node] = _nbytes(v)
            continue
        if node.op != "call_function" or has_effect(node):
            continue
        ins = node.all_input_nodes
        if not ins or any(n not in env for n in ins):
            continue
        if op_of(node) is not None and not any(isinstance(env[n], Tensor) for n in ins):
            continue  # a constructor (or an op on Python numbers only): left to generated code
        with ember.no_grad():
            env[node] = node.target(*_map(node.args, env), **_map(dict(node.kwargs), env))
        source_bytes[node] = sum(source_bytes[n] for n in set(ins))
    folded = {n for n in env if n.op == "call_function"}
    changed = False
    for node in list(folded):
        v = env[node]
        if not isinstance(v, Tensor) or all(u in folded for u in node.users):
            continue
        fill = _uniform(v) if v.numel() > 1 and v.is_contiguous() else None
        if fill is not None:
            with graph.inserting_before(node):
                new = graph.call_function(ember.ops.aten.full.default, (),
                                          {"shape": tuple(v.shape), "fill": fill, "dtype": v.dtype})
        elif _nbytes(v) <= max(max_bytes, source_bytes[node]):
            name = _fresh_name(gm)
            gm.register_buffer(name, v.detach())
            with graph.inserting_before(node):
                new = graph.get_attr(name)
        else:
            continue
        new.meta.update(node.meta)
        node.replace_all_uses_with(new)
        changed = True
    if changed:
        from .dce import dead_code_elimination

        dead_code_elimination(gm)
        _drop_unused_attrs(gm)
        finish(gm)
    return gm


def _fresh_name(gm):
    i = getattr(gm, "_frozen_param_count", 0)
    while hasattr(gm, f"_frozen_param{i}"):
        i += 1
    gm._frozen_param_count = i + 1
    return f"_frozen_param{i}"


def _drop_unused_attrs(gm):
    for node in list(gm.graph.nodes):
        if node.op == "get_attr" and not node.users:
            gm.graph.erase_node(node)
            if node.target.startswith("_frozen_param") and hasattr(gm, node.target):
                delattr(gm, node.target)

"""The backward engine: runs a graph of Nodes from root gradients down to the leaves.

It counts, for every node reachable from the roots, how many edges point at it; a node runs when all of
them have delivered their gradient (summed per output). Ready nodes run latest-created first, as torch's
CPU queue orders them by sequence number, so hooks fire in torch's order. Per node the engine calls, in
order: the hooks of the tensors it produced (`register_hook`, then `retain_grad`), the node's pre-hooks,
the node itself, its post-hooks; then frees its saved tensors unless `retain_graph`.
"""

import heapq

import numpy as np

from .._tensor import Tensor, _wrap
from .grad_mode import state as _grad_state
from .graph import AccumulateGrad, grad_edge

__all__ = ["run_backward", "queue_callback"]

_callbacks = []  # callbacks queued during the current backward pass
_depth = [0]


def queue_callback(fn):
    """Run `fn()` once the current backward pass has finished (DDP uses this to wait for its allreduces)."""
    if not _depth[0]:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _callbacks.append(fn)


def _make_root_grads(tensors, grad_tensors, is_grads_batched=False):
    from .. import _size

    roots = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not (t.is_floating_point() or t.is_complex()):
                raise RuntimeError(
                    f"grad can be computed only for real floating point outputs but got {t.dtype}")
            g = _wrap(np.ones_like(t._data))
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        elif g._data.shape != t._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {_size.Size(g._data.shape)} and "
                f"output[{i}] has a shape of {_size.Size(t._data.shape)}.")
        roots.append((grad_edge(t), g))
    return roots


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None, allow_unused=False,
                 accumulate=True):
    """Backpropagate from `tensors`; accumulate into leaves' `.grad` (accumulate=True, restricted to
    `inputs` if given) or return the gradients of `inputs` (accumulate=False, autograd.grad)."""
    roots = _make_root_grads(tensors, grad_tensors)
    targets = {}  # (node, nr) -> position in inputs
    if inputs is not None:
        for i, t in enumerate(inputs):
            edge = grad_edge(t)
            if edge[0] is None:
                if accumulate:
                    raise RuntimeError("One of the differentiated Tensors does not require grad")
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.setdefault(edge, i)
    deps, needed = _prepare(roots, targets)
    captured = [None] * (len(inputs) if inputs is not None else 0)

    buffers = {}
    heap = []
    for (node, nr), g in roots:
        _add_grad(buffers, node, nr, g)
    for (node, nr), g in roots:
        if node is not None and deps.get(node, 0) == 0 and node not in [h[2] for h in heap]:
            heapq.heappush(heap, (-node._seq, id(node), node))

    prev = _grad_state.enabled
    _grad_state.enabled = create_graph
    _depth[0] += 1
    try:
        while heap:
            _, _, node = heapq.heappop(heap)
            grads = buffers.pop(node, {})
            outs = _call_pre_hooks(node, grads)
            if type(node) is AccumulateGrad and 0 in outs:
                outs[0] = _leaf_hooks(node.variable, outs[0])
            for nr, g in outs.items():
                pos = targets.get((node, nr))
                if pos is not None:
                    captured[pos] = g if create_graph or g is None else g.detach()
            if type(node) is AccumulateGrad:
                if accumulate and (inputs is None or (node, 0) in targets):
                    _accumulate(node.variable, outs.get(0), create_graph)
                continue
            if needed is not None and node not in needed:
                continue
            grad_inputs = _call_node(node, outs)
            if not retain_graph:
                _release(node)
            for (nxt, nr), g in zip(node.next_functions, grad_inputs):
                if nxt is None:
                    continue
                if g is not None:
                    _add_grad(buffers, nxt, nr, g)
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    heapq.heappush(heap, (-nxt._seq, id(nxt), nxt))
        if accumulate and inputs is not None:
            _accumulate_nonleaf_targets(inputs, captured, create_graph)
    finally:
        _grad_state.enabled = prev
        _depth[0] -= 1
        if not _depth[0]:
            cbs = list(_callbacks)
            _callbacks.clear()
            for cb in cbs:
                cb()
    if not accumulate:
        return captured
    return None


def _prepare(roots, targets):
    """Dependency counts of every reachable node; with targets, the set of nodes that lead to one."""
    deps = {}
    seen = set()
    order = []
    stack = [node for (node, _), _ in roots if node is not None]
    for n in stack:
        seen.add(n)
    while stack:
        node = stack.pop()
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    if not targets:
        return deps, None
    target_nodes = {n for n, _ in targets}
    needed = set()
    # a node is needed if a target is reachable from it: iterate to a fixed point in reverse order
    changed = True
    while changed:
        changed = False
        for node in order:
            if node in needed:
                continue
            if node in target_nodes or any(n in needed for n, _ in node.next_functions if n is not None):
                needed.add(node)
                changed = True
    return deps, needed


def _add_grad(buffers, node, nr, g):
    if node is None:
        return
    b = buffers.get(node)
    if b is None:
        buffers[node] = {nr: g}
    elif nr in b:
        b[nr] = b[nr] + g
    else:
        b[nr] = g


def _call_pre_hooks(node, grads):
    th = node._tensor_pre_hooks
    if th:
        for nr, hooks in th.items():
            for fn in list(hooks.values()):
                if nr in grads:
                    r = fn(grads[nr])
                    if r is not None:
                        grads[nr] = r
    ret = node._retains
    if ret:
        for nr, ref in ret.items():
            t = ref()
            if t is not None and nr in grads:
                g = grads[nr]
                if t._grad is None:
                    t._grad = g.detach().clone() if not _grad_state.enabled else g.clone()
                else:
                    t._grad = t._grad + g
    if node._pre_hooks:
        n = _num_outputs(node, grads)
        go = tuple(grads.get(i) for i in range(n))
        for fn in list(node._pre_hooks.values()):
            r = fn(go)
            if r is not None:
                go = tuple(r)
        grads = {i: g for i, g in enumerate(go) if g is not None}
    return grads


def _num_outputs(node, grads):
    meta = getattr(node, "_out_meta", None)
    return max(len(meta) if meta else 1, max(grads) + 1 if grads else 1)


def _call_node(node, grads):
    n = _num_outputs(node, grads)
    meta = getattr(node, "_out_meta", None)
    go = []
    for i in range(n):
        g = grads.get(i)
        if g is None and meta is not None and i < len(meta):
            shape, dt = meta[i]
            g = _wrap(np.zeros(shape, dt))  # a gradient that never arrived is zero
        go.append(g)
    go = tuple(go)
    from . import anomaly_mode

    if anomaly_mode._enabled[0]:
        grad_inputs = anomaly_mode.run_checked(node, go)
    else:
        grad_inputs = node.apply(go)
    if node._hooks:
        for fn in list(node._hooks.values()):
            r = fn(grad_inputs, go)
            if r is not None:
                grad_inputs = tuple(r)
    return grad_inputs


def _release(node):
    rel = getattr(node, "release", None)
    if rel is not None:
        rel()


def _leaf_hooks(var, g):
    if var._hooks:
        for fn in list(var._hooks.values()):
            r = fn(g)
            if r is not None:
                g = r
    return g


def _accumulate(var, g, create_graph):
    """AccumulateGrad: run the leaf's hooks, add `g` into `var.grad`, then post-accumulate hooks."""
    if g is None:
        return
    old = var._grad
    if old is None:
        if create_graph:
            var._grad = g
        else:
            # a fresh buffer laid out like the variable (torch's layout contract); never alias g, which
            # may be shared with another edge or be the caller's own gradient tensor
            buf = np.empty_like(var._data)
            np.copyto(buf, g._data, casting="unsafe")
            var._grad = _wrap(buf)
    elif create_graph or _grad_state.enabled:
        var._grad = old + g
    else:
        np.add(old._data, g._data, out=old._data, casting="unsafe")
    if var._post_acc_hooks:
        for fn in list(var._post_acc_hooks.values()):
            fn(var)


def _accumulate_nonleaf_targets(inputs, captured, create_graph):
    for t, g in zip(inputs, captured):
        if t._grad_fn is not None and g is not None:
            t._grad = g if t._grad is None else t._grad + g

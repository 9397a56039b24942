"""The backward engine: runs a graph of Nodes from root gradients down to the leaves.

It counts, for every node reachable from the roots, how many edges point at it; a node runs when all of
them have delivered their gradient (summed per output). Ready nodes run latest-created first, as torch's
CPU queue orders them by sequence number, so hooks fire in torch's order. Per node the engine calls, in
order: the hooks of the tensors it produced (`register_hook`, then `retain_grad`), the node's pre-hooks,
the node itself, its post-hooks; then frees its saved tensors unless `retain_graph`. For a leaf's
AccumulateGrad node: the leaf's tensor hooks, the node's pre-hooks, the accumulation into `.grad`, the
post-accumulate-grad hooks, the node's post-hooks.

NOTE [ Graph tasks ]
Each call of `run_backward` is one graph task: its own dependency counts, gradient buffers and queue of
final callbacks (`queue_callback`), which run when that task finishes, in the order queued (a callback may
queue more). Tasks nest: a hook or a custom Function's backward may itself call backward. The stack of
running tasks is thread-local, like grad mode.
"""

import heapq
import threading

import numpy as np

from .. import _dispatch
from .._meta import NoData, like_strides, meta_array, no_data
from .._tensor import Tensor, _wrap
from .grad_mode import state as _grad_state
from .graph import AccumulateGrad, _mask, grad_edge

__all__ = ["run_backward", "queue_callback"]


class _Tasks(threading.local):
    stack = ()


_tasks = _Tasks()

# A profiler's hook per backward node: called with the node, it returns a context manager wrapping the
# node's step (ember/profiler/_recorder.py). Empty unless a profiler runs: the loop's fast path checks it.
_node_observers: list = []


class _GraphTask:
    __slots__ = ("callbacks", "nodes", "token", "all_leaves")

    def __init__(self, nodes, all_leaves=True):
        self.callbacks = []
        self.nodes = nodes
        self.token = object()
        self.all_leaves = all_leaves  # a backward() into every leaf (no `inputs`, not autograd.grad)


def queue_callback(fn):
    """Run `fn()` once the current backward pass has finished (DDP uses this to wait for its allreduces)."""
    if not _tasks.stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _tasks.stack[-1].callbacks.append(fn)


def current_pass():
    """An object identifying the running backward pass (None outside one)."""
    return _tasks.stack[-1].token if _tasks.stack else None


def is_checkpoint_valid():
    """Whether a reentrant checkpoint may run its backward here: outside any backward pass, or inside one
    that accumulates into every leaf (torch's `_is_checkpoint_valid`: not `autograd.grad`, no `inputs`)."""
    return _tasks.stack[-1].all_leaves if _tasks.stack else True


def expected_count(tensors):
    """How many of `tensors` the running backward pass will compute a gradient for."""
    nodes = _tasks.stack[-1].nodes
    return sum(1 for t in tensors if grad_edge(t)[0] in nodes)


# ---- roots -------------------------------------------------------------------------------------------


def _make_root_grads(tensors, grad_tensors):

    roots = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not isinstance(t, Tensor):
            if isinstance(t, GradientEdge):  # an edge as an output: its gradient must be given
                if g is None:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                roots.append(((t.node, t.output_nr), g))
                continue
            raise TypeError(f"backward(): argument 'tensors' must be tuple of Tensors, not {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not (t.is_floating_point()):
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {t.dtype}")
            g = t.new_ones(t.shape)  # (torch's at::ones_like, legacy contiguous)
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        elif g.shape != t.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                f"output[{i}] has a shape of {t.shape}.")
        roots.append((grad_edge(t), g))
    return roots


# ---- the engine --------------------------------------------------------------------------------------


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None, accumulate=True):
    """Backpropagate from `tensors`; accumulate into leaves' `.grad` (accumulate=True, restricted to
    `inputs` if given) or return the gradients of `inputs` (accumulate=False, autograd.grad)."""
    roots = _make_root_grads(tensors, grad_tensors)
    targets = {}  # (node, nr) -> positions in inputs
    if inputs is not None:
        for i, t in enumerate(inputs):
            edge = grad_edge(t) if type(t) is not GradientEdge else (t.node, t.output_nr)
            if edge[0] is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.setdefault(edge, []).append(i)
    deps, needed = _prepare(roots, targets)
    captured = [None] * (len(inputs) if inputs is not None else 0)
    task = _GraphTask(deps, inputs is None)
    buffers = {}
    heap = []
    for (node, nr), g in roots:
        if node is not None:
            _add_grad(buffers, node, nr, g)
    for node in {node for (node, _), _ in roots if node is not None}:
        if deps[node] == 0:
            heapq.heappush(heap, (-node._seq, id(node), node))

    prev = _grad_state.enabled
    _grad_state.enabled = create_graph
    _tasks.stack = _tasks.stack + (task,)
    try:
        _loop(heap, buffers, deps, needed, targets, captured, retain_graph, create_graph,
              accumulate and (inputs is None), accumulate)
        if accumulate and inputs is not None:
            _accumulate_targets(inputs, captured, create_graph)
    finally:
        _grad_state.enabled = prev
        _mask.value = None  # a formula called outside the engine must see "every input needs a gradient"
        try:
            _run_callbacks(task)
        finally:
            _tasks.stack = _tasks.stack[:-1]
    return None if accumulate else captured


def _loop(heap, buffers, deps, needed, targets, captured, retain_graph, create_graph, acc_all, accumulate):
    # See NOTE [ The engine loop ]
    heappop, heappush = heapq.heappop, heapq.heappush
    node = None
    while True:
        if node is None:
            if not heap:
                return
            node = heappop(heap)[2]
            grads = buffers.pop(node, None)
            if grads is None:
                grads = [None] * node._n_outputs
        if type(node) is AccumulateGrad:
            _leaf(node, grads[0], targets, captured, create_graph, acc_all, accumulate)
            node = None
            continue
        extras = node._has_extras  # hooks, retained grads or per-output metadata (NOTE [ Node fields ])
        if extras and (node._tensor_pre_hooks or node._retains or node._pre_hooks):
            grads = _call_pre_hooks(node, grads)
        if targets:
            _capture(node, grads, targets, captured, create_graph)
        if needed is not None and node not in needed:
            node = None
            continue
        if not extras and not _anomaly[0] and not _node_observers:
            grad_inputs = node._run(grads, not retain_graph)  # the common case of _call_node
        else:
            grad_inputs = _call_node(node, grads)
            if not retain_graph:
                node.release()
        ready = ready_grads = None  # the one node this step made ready: run next, without the heap, if it may
        for (nxt, nr), g in zip(node.next_functions, grad_inputs):
            if nxt is None:
                continue
            left = deps[nxt] - 1
            deps[nxt] = left
            b = buffers.get(nxt)
            if b is None:
                if left == 0 and nxt._n_outputs == 1:  # its only gradient: no buffer needed
                    if ready is not None:
                        buffers[ready] = ready_grads
                        heappush(heap, (-ready._seq, id(ready), ready))
                    ready, ready_grads = nxt, [g]
                    continue
                if g is None:
                    b = None
                elif nxt._n_outputs == 1:
                    b = buffers[nxt] = [g]
                else:
                    b = buffers[nxt] = [None] * nxt._n_outputs
                    b[nr] = g
            elif g is not None:
                b[nr] = g if b[nr] is None else _sum_grads(b[nr], g)
            if left == 0:
                heappush(heap, (-nxt._seq, id(nxt), nxt))
        if ready is not None and heap and -heap[0][0] > ready._seq:
            buffers[ready] = ready_grads  # a ready node created later runs first (torch's order)
            heappush(heap, (-ready._seq, id(ready), ready))
            ready = None
        node = ready
        if ready is not None:
            grads = ready_grads


def _capture(node, grads, targets, captured, create_graph):
    for nr, g in enumerate(grads):
        pos = targets.get((node, nr))
        if pos is not None:
            for p in pos:
                captured[p] = g if create_graph or g is None else g.detach()


def _leaf(node, g, targets, captured, create_graph, acc_all, accumulate):
    """An AccumulateGrad node is ready: the leaf's tensor hooks, then capture and/or accumulation."""
    target = bool(targets) and (node, 0) in targets
    if not (acc_all or target):
        return
    var = node.variable
    if var._hooks and g is not None:
        for fn in list(var._hooks.values()):
            r = fn(g)
            if r is not None:
                g = _check_hook_result(r, g)
    if target:
        _capture(node, [g], targets, captured, create_graph)
    if acc_all or accumulate:
        _accumulate(node, g, create_graph)


def _prepare(roots, targets):
    """Dependency counts of every reachable node; with targets, the set of nodes that lead to one."""
    deps = {}
    stack = []
    for (node, _), _ in roots:
        if node is not None and node not in deps:
            deps[node] = 0
            stack.append(node)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)
    if not targets:
        return deps, None
    # topological order (Kahn), then needed-ness flows from children back to parents
    left = dict(deps)
    order = [n for n, d in deps.items() if d == 0]
    i = 0
    while i < len(order):
        for nxt, _ in order[i].next_functions:
            if nxt is not None:
                left[nxt] -= 1
                if left[nxt] == 0:
                    order.append(nxt)
        i += 1
    target_nodes = {n for n, _ in targets}
    needed = set()
    for node in reversed(order):
        if node in target_nodes or any(n in needed for n, _ in node.next_functions):
            needed.add(node)
    return deps, needed


# NOTE [ The engine loop ]
# Ready nodes wait in a heap ordered by sequence number (latest first), their gradients in `buffers`
# until then. Two shortcuts keep a chain of ops cheap without changing that order: a node whose only
# gradient arrives needs no buffer, and the one node a step makes ready runs next directly when no
# waiting node is newer than it.

# NOTE [ Summing gradients ]
# Gradients meeting at one node output are summed. With grad mode off (no create_graph), no mode on the
# dispatch stack (a profiler or tracer must see the add) and two plain tensors of one float dtype and shape,
# `a + b` would run exactly `np.add(a, b)` (the dispatcher's fast path); calling it directly skips the
# dispatch. Anything else goes through `+`, differentiable when create_graph asks for it.

def _sum_grads(a, b):
    x, y = a._data, b._data
    if (not _grad_state.enabled and not _dispatch._modes and x.dtype is y.dtype and x.shape == y.shape
            and type(a) is Tensor and type(b) is Tensor and x.dtype in _dispatch._FLOATS):
        try:
            return _wrap(np.add(x, y))
        except NoData:  # meta gradients: the op's meta rule, below
            pass
        except RuntimeWarning:  # inf + -inf under a user's "error" filter: the dispatcher's quiet retry, below
            pass  # (NOTE [ Quiet NumPy ] in ember/_dispatch.py)
    return a + b


def _add_grad(buffers, node, nr, g):
    b = buffers.get(node)
    if b is None:
        b = buffers[node] = [None] * node._n_outputs
    b[nr] = g if b[nr] is None else b[nr] + g


# ---- hooks -------------------------------------------------------------------------------------------


def _call_pre_hooks(node, grads):
    grads = list(grads)
    th = node._tensor_pre_hooks
    if th:
        for nr, hooks in th.items():
            for fn in list(hooks.values()):
                if grads[nr] is not None:
                    r = fn(grads[nr])
                    if r is not None:
                        grads[nr] = _check_hook_result(r, grads[nr])
    ret = node._retains
    if ret:
        for nr, ref in ret.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                g = grads[nr]
                if t._grad is None:
                    t._grad = g.clone() if _grad_state.enabled else g.detach().clone()
                else:
                    t._grad = t._grad + g
    if node._pre_hooks:
        go = tuple(grads)
        for fn in list(node._pre_hooks.values()):
            r = fn(go)
            if r is not None:
                r = tuple(r)
                if len(r) != len(go):
                    raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has returned an incorrect number of "
                                       f"values (got {len(r)}, but expected {len(go)})")
                go = r
        grads = list(go)
    return grads


def _check_hook_result(r, g):
    if not isinstance(r, Tensor):
        raise TypeError(f"expected Tensor, but hook returned '{type(r).__name__}'")
    return r


def _zeros(shape, dt, grads):
    """Zeros standing for a missing gradient, on the device of the gradients that did arrive."""
    if _dispatch._modes:  # a tracer below must see where they came from: made by an op (as `new_zeros`)
        from .._dtypes import from_numpy

        like = next(g for g in grads if g is not None)
        return like.new_zeros(shape, dtype=from_numpy(dt))
    if any(g is not None and no_data(g) for g in grads):  # (meta or fake)
        return _wrap(meta_array(shape, dt))
    return _wrap(np.zeros(shape, dt))


def _call_node(node, grads):
    meta = node._out_meta
    if meta is not None:
        for i, g in enumerate(grads):
            if g is None:
                shape, dt = meta[i]
                grads[i] = _zeros(shape, dt, grads)  # a gradient that never arrived is zero
    go = tuple(grads)
    if _node_observers:  # a profiler: ranges around the node and its formula
        with _node_observers[-1](node) as ranges:
            grad_inputs = _apply(node, go)
            ranges.applied()
            return _call_post_hooks(node, grad_inputs, go)
    return _call_post_hooks(node, _apply(node, go), go)


def _apply(node, go):
    if _anomaly[0]:
        from .anomaly_mode import run_checked

        return run_checked(node, go)
    return node.apply(go)


def _call_post_hooks(node, grad_inputs, go):
    if node._hooks:
        for fn in list(node._hooks.values()):
            r = fn(grad_inputs, go)
            if r is not None:
                grad_inputs = tuple(r)
    return grad_inputs


def _run_callbacks(task):
    cbs = task.callbacks
    i = 0
    while i < len(cbs):  # a callback may queue more
        cbs[i]()
        i += 1


# ---- accumulation into .grad -------------------------------------------------------------------------


def _accumulate(node, g, create_graph):
    """AccumulateGrad proper: node pre-hooks, `var.grad += g`, post-accumulate hooks, node post-hooks."""
    var = node.variable
    if node._pre_hooks:
        for fn in list(node._pre_hooks.values()):
            r = fn((g,))
            if r is not None:
                g = tuple(r)[0]
    if g is None:
        return
    old = var._grad
    if old is None:
        if create_graph:
            var._grad = g
        else:
            # a fresh buffer laid out like the variable (torch's layout contract); never alias g, which
            # may be shared with another edge or be the caller's own gradient tensor
            try:
                # with the layout contract relaxed (enforce_grad_layout_policy(False)), torch steals the
                # incoming gradient: .grad takes g's layout (a copy here, so nothing is aliased)
                like = var._data if _grad_state.grad_layout_enforced or g.dtype != var.dtype else g._data
                buf = np.empty_like(like)
                try:
                    np.copyto(buf, g._data, casting="unsafe")
                except RuntimeWarning:  # an overflowing cast under a user's "error" filter: the copy is
                    pass  # done, NumPy warns after it (NOTE [ Quiet NumPy ] in ember/_dispatch.py)
                var._grad = _wrap(buf)
            except NoData:  # a meta (or fake) variable: its gradient has no data, laid out as it is
                if not (no_data(var) and no_data(g)):
                    raise RuntimeError("Tensor on device cpu is not on the expected device meta!") from None
                # (made by the variable, so a fake variable's gradient is a fake of its mode)
                var._grad = var.new_empty_strided(tuple(var.shape), like_strides(var))
    elif create_graph or _grad_state.enabled:
        var._grad = old + g
    elif not no_data(old):  # (on meta or fake tensors, there is nothing to add)
        try:
            np.add(old._data, g._data, out=old._data, casting="unsafe")
        except RuntimeWarning:  # inf + -inf under a user's "error" filter: the sum is written, NumPy warns
            pass  # after it (NOTE [ Quiet NumPy ] in ember/_dispatch.py)
    if var._post_acc_hooks:
        for fn in list(var._post_acc_hooks.values()):
            fn(var)
    if node._hooks:
        for fn in list(node._hooks.values()):
            fn((), (g,))


def _accumulate_targets(inputs, captured, create_graph):
    """backward(inputs=...): each input's gradient goes into its `.grad` (leaf or not)."""
    done = set()
    for t, g in zip(inputs, captured):
        if g is None or id(t) in done:
            continue
        done.add(id(t))
        if t._grad_fn is not None:  # leaves were accumulated when their AccumulateGrad node ran
            t._grad = g if t._grad is None else t._grad + g


from .graph import _anomaly  # noqa: E402  (shared flag list, see anomaly_mode)
from .graph_edges import GradientEdge  # noqa: E402

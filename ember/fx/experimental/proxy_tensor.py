"""`make_fx`: dispatch-level tracing. Every op that reaches the dispatcher becomes a graph node.

`make_fx(f)(*args)` runs `f` once with a tracing mode on the mode stack, below autograd (NOTE [ The mode
stack ]). The mode sees each op as the dispatcher does, `(op, inputs, params)`, after Python-level sugar is
gone (`x @ w` is already `mm` or `matmul`, `F.linear` already its ops), runs it one level down, and records
a `call_function` node whose target is the op's `ember.ops.aten` identity, whose args are the nodes of its
tensor inputs and whose kwargs are its params (NOTE [ How an OpOverload is called ]). Because the tracer
sits below autograd, the ops a backward formula runs (when `f` calls `autograd.grad` or `backward`) come to
it too, so tracing forward-and-backward gives the joint graph for free.

Three ways to get the values the ops run on (`tracing_mode`):

- "real": the real inputs; every op computes (the graph is a by-product of running `f`);
- "fake": the inputs are turned into FakeTensors and a FakeTensorMode sits below the tracer, so no op
  computes anything: each node's `meta["val"]` is a fake carrying shape, dtype and strides;
- "symbolic" (symbolic shapes) is not supported: shapes are always concrete. AOT autograd gets graphs whose
  shape arguments follow dynamic sizes another way, from traces at neighbouring sizes (NOTE [ Dynamic sizes
  through AOT ] in ember/_functorch/_dynamic.py).

A decomposition table (`ember._decomp.get_decompositions`) maps an op to a function written in ember ops:
the tracer then runs that function instead of recording the op, so the graph holds only the primitives it
decomposes into. Tensors the traced function uses but did not receive (constants, closed-over weights)
become attributes of the returned GraphModule (`_tensor_constant0`) read by `get_attr` nodes.
"""

from __future__ import annotations

import inspect
from operator import getitem as _getitem
from typing import Callable

from ... import _dispatch
from ..._dispatch import HIGHER_ORDER, VIEW, redispatch, redispatch_inplace
from ..._grad_state import state as _grad_state
from ..._meta import no_data
from ..._modes import Mode, pop_mode, push_mode
from ..._tensor import Tensor
from ...nn.modules.module import Module
from ...ops import inplace_overload_of, overload_of
from .. import traceback as _fx_traceback
from ..graph import Graph
from ..graph_module import GraphModule
from ..node import map_aggregate

__all__ = ["make_fx", "ProxyTorchDispatchMode", "get_isolated_graphmodule"]


# NOTE [ Payload identity ]
# The tracer knows a tensor by the node that made it. Autograd hands formulas and callers new Tensor objects
# over the same payload (a saved output is rebuilt on unpack, `detach` wraps the same array, the engine
# returns gradients in fresh wrappers); these hold the very same array (or MetaArray) object, so the tracer
# also looks a tensor up by its payload's identity. An in-place op rebinds both to its node.


# NOTE [ Writes through views ]
# A graph node is a value, but a tensor is memory: `y = x.clone(); d = y.diagonal(); d.copy_(s)` changes y,
# and any other view of y, though only d was written. The tracer keeps the graph's values true to memory, as
# torch's functionalization does:
# - a write into a view (self has a `_base`) is followed by `as_strided_scatter(base, new view value, size,
#   stride, offset)`, and the base is bound to that node: the base's new value;
# - each view node remembers the base node it was taken from (`view_of`); a view used after its base got a
#   new node is stale, and is taken again from the new base (`as_strided` with the view's geometry).
# Functionalization then only has to turn each in-place node into its out-of-place op.


class _Recorder:
    """The graph being built and which node stands for which tensor (kept alive while tracing)."""

    def __init__(self):
        self.graph = Graph()
        self.nodes: dict[int, tuple] = {}  # id(tensor) -> (tensor, node)
        self.payloads: dict[int, tuple] = {}  # id(tensor._data) -> (payload, node)
        self.view_of: dict = {}  # view node -> its base's node when taken (NOTE [ Writes through views ])
        self.root = Module()
        self.n_constants = 0

    def node_of(self, t: Tensor):
        node = self._known(t)
        if node is None:
            return self._constant(t)
        base = t._base
        if base is not None and self.view_of:
            was = self.view_of.get(node)
            if was is not None and (now := self._known(base)) is not None and now is not was:
                node = self.view_again(t, now)  # the base was written since: the view sees the new value
        return node

    def view_again(self, t: Tensor, base_node):
        from ...ops import aten

        node = self.graph.call_function(aten.as_strided.default, (base_node,), _geometry(t))
        self.bind(t, node)
        self.view_of[node] = base_node
        return node

    def wrote(self, t: Tensor, node) -> None:
        """`t` was written in place by `node`: a view's write goes back into its base."""
        base = t._base
        if base is None:
            return
        from ...ops import aten

        base_node = self.node_of(base)
        scatter = self.graph.call_function(aten.as_strided_scatter.default, (base_node, node), _geometry(t))
        self.bind(base, scatter)
        self.view_of[node] = scatter

    def _known(self, t: Tensor):
        hit = self.nodes.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        # the same payload under another wrapper (a saved tensor unpacked for a backward formula, a detach,
        # a gradient handed back by the engine): the same value, so the same node (NOTE [ Payload identity ])
        hit = self.payloads.get(id(t._data))
        if hit is not None and hit[0] is t._data:
            return hit[1]
        return None

    def _constant(self, t: Tensor):
        # a tensor the function did not receive and no op made: a constant of the graph module
        name = f"_tensor_constant{self.n_constants}"
        self.n_constants += 1
        setattr(self.root, name, t)
        with self.graph.inserting_before(self._first_op()):
            node = self.graph.get_attr(name)
        node.meta["val"] = t
        self.bind(t, node)
        return node

    def _first_op(self):
        for n in self.graph.nodes:
            if n.op != "placeholder":
                return n
        return None

    def bind(self, t: Tensor, node) -> None:
        self.nodes[id(t)] = (t, node)
        self.payloads[id(t._data)] = (t._data, node)
        node.meta.setdefault("val", t)
        node.meta["tensor_meta"] = _tensor_meta(t)

    def arg(self, a):
        return map_aggregate(a, lambda x: self.node_of(x) if isinstance(x, Tensor) else x)


def _geometry(view: Tensor) -> dict:
    """A view's place in its base (the offset counted from the base's first element)."""
    return {"size": tuple(view.shape), "stride": view.stride(),
            "offset": view.storage_offset() - view._base.storage_offset()}


def _tensor_meta(t: Tensor):
    return (tuple(t.shape), t.dtype, t.stride(), t.requires_grad)


def _params_by_name(op, n_inputs: int, params) -> dict:
    names = op.signature(n_inputs, len(params))[1]
    return dict(zip(names, params))


class ProxyTorchDispatchMode(Mode):
    """The tracing mode below autograd: each op it sees becomes a node (see the module docstring)."""

    level = "below"

    def __init__(self, recorder: _Recorder, decomposition_table: dict | None = None):
        self.recorder = recorder
        self.decompositions = decomposition_table or {}

    def dispatch(self, op, inputs, params):
        if op.kind == HIGHER_ORDER:
            if op.meta is not None and any(isinstance(t, Tensor) and no_data(t) for t in inputs):
                return self._opaque(op, inputs, params)
            return _dispatch._bottom(op, inputs, params)  # its body runs; its ops come back here one by one
        target = overload_of(op)
        decomp = self.decompositions.get(target)
        if decomp is not None:  # the primitives it decomposes into are what the graph records
            push_mode(self)
            try:
                return decomp(*inputs, **_params_by_name(op, len(inputs), params))
            finally:
                pop_mode(self)
        out = redispatch(op, inputs, params)
        written = op.writes(inputs, params) if op.writes is not None else None
        if written is not None:  # its functional form, each written input standing for its new value
            indices, functional = written
            self._record(target, op, inputs, functional, tuple(inputs[i] for i in indices), wrote=True)
            return out
        self._record(target, op, inputs, params, out)
        return out

    def _opaque(self, op, inputs, params):
        """A higher-order op whose body cannot run without data (a `cond` on a fake predicate): one node, its
        outputs from its meta rule (run with this tracer popped: nothing inside is recorded), and, where
        its inputs need gradients, autograd's node for it (its derivative is again such an op)."""
        out = op.meta(inputs, params)
        self._record(overload_of(op), op, inputs, params, out)
        if _grad_state.enabled and op.differentiable and any(
                isinstance(t, Tensor) and t.requires_grad for t in inputs):
            _dispatch._record(op, inputs, params, out)
        return out

    def dispatch_inplace(self, op, self_, inputs, params):
        redispatch_inplace(op, self_, inputs, params)
        self._record(inplace_overload_of(op), op, inputs, params, self_, wrote=True)

    def _record(self, target, op, inputs, params, out, wrote=False):
        rec = self.recorder
        node = rec.graph.call_function(target, tuple(rec.arg(list(inputs))),
                                       _params_by_name(op, len(inputs), params))
        st = _fx_traceback.get_current_meta().get("stack_trace")
        if st:  # (the user's source line of the captured node being traced: ember/fx/traceback.py)
            node.meta["stack_trace"] = st
        if isinstance(out, tuple):
            node.meta["val"] = out
            for i, o in enumerate(out):
                if isinstance(o, Tensor):
                    item = rec.graph.call_function(_getitem, (node, i))
                    if st:
                        item.meta["stack_trace"] = st
                    self._bind(o, item, inputs, op, wrote)
        elif isinstance(out, Tensor):
            self._bind(out, node, inputs, op, wrote)

    def _bind(self, t, node, inputs, op, wrote):
        rec = self.recorder
        rec.bind(t, node)
        if wrote:
            rec.wrote(t, node)
        elif op.kind == VIEW and t._base is not None:  # remember which base value it views
            base = rec._known(t._base)
            if base is not None:
                rec.view_of[node] = base


def _placeholder_names(f: Callable, n: int) -> list[str]:
    try:
        ps = [p for p in inspect.signature(f).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        ps = []
    names = [p.name for p in ps][:n]
    return names + [f"arg{i}" for i in range(len(names), n)]


def make_fx(f: Callable, decomposition_table: dict | None = None, tracing_mode: str = "real",
            _allow_non_fake_inputs: bool = False, *, pre_dispatch: bool = False,
            record_module_stack: bool = False, _allow_fake_constant: bool = False,
            _error_on_data_dependent_ops: bool = True) -> Callable:
    """`make_fx(f, ...)(*args)`: trace `f` on `args` at the dispatcher into a GraphModule of ember's ops.

    Args:
        f: the function to trace (tensors in, tensors out; nested lists/tuples/dicts allowed).
        decomposition_table: {OpOverload: function} run in place of those ops (`ember._decomp`).
        tracing_mode: "real" (run the ops) or "fake" (on FakeTensors: nothing is computed).

    Example::

        >>> gm = make_fx(lambda a, b: (a * b).sum(1).relu())(ember.randn(2, 3), ember.randn(2, 3))
        >>> print(gm.code)      # mul = ember.ops.aten.mul.default(a_1, b_1) ...
    """
    if tracing_mode not in ("real", "fake"):
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}" if tracing_mode != "symbolic" else
                             "ember's make_fx traces with concrete shapes: tracing_mode='symbolic' (symbolic "
                             "shapes) is not supported; use 'real' or 'fake'")

    def wrapped(*args):
        return _trace(f, args, decomposition_table, tracing_mode)
    return wrapped


def _trace(f, args, decomposition_table, tracing_mode) -> GraphModule:
    return trace_recorded(f, args, decomposition_table, tracing_mode)[0]


def trace_recorded(f, args, decomposition_table=None, tracing_mode="fake", names=None):
    """`make_fx` that also returns the recorder (which node each tensor ended bound to: an input written in
    place ends bound to the node of its last write) and the values `f` was traced on. `names`: one
    placeholder name per argument (AOT autograd's `primals_1`, `tangents_1`)."""
    rec = _Recorder()
    fake_mode = None
    if tracing_mode == "fake":
        from ..._subclasses.fake_tensor import FakeTensorMode

        fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
        args = map_aggregate(args, lambda a: fake_mode.from_tensor(a) if isinstance(a, Tensor) else a)
    if names is not None:
        for name, a in zip(names, args):
            node = rec.graph.placeholder(name)
            if isinstance(a, Tensor):  # (a Python number is an input too, its value used where it is read)
                rec.bind(a, node)
        return _run_traced(f, args, rec, fake_mode, decomposition_table), rec, args
    names = _placeholder_names(f, len(args))
    for name, a in zip(names, args):
        flat = []
        map_aggregate(a, lambda x: flat.append(x) if isinstance(x, Tensor) else x)
        if len(flat) == 1 and flat[0] is a:
            node = rec.graph.placeholder(f"{name}_1")
            rec.bind(a, node)
        else:  # a structure or a non-tensor: one placeholder per tensor leaf, the rest as constants
            for i, t in enumerate(flat):
                rec.bind(t, rec.graph.placeholder(f"{name}_{i + 1}"))
    return _run_traced(f, args, rec, fake_mode, decomposition_table), rec, args


def _run_traced(f, args, rec, fake_mode, decomposition_table) -> GraphModule:
    mode = ProxyTorchDispatchMode(rec, decomposition_table)
    if fake_mode is not None:
        push_mode(fake_mode)
    push_mode(mode)
    try:
        out = f(*args)
    finally:
        pop_mode(mode)
        if fake_mode is not None:
            pop_mode(fake_mode)
    rec.graph.output(rec.arg(out))
    gm = GraphModule(rec.root, rec.graph)
    return gm


def get_isolated_graphmodule(func: Callable, args: tuple, kwargs: dict, tracing_mode: str = "real",
                             decomposition_table: dict | None = None) -> GraphModule:
    """`make_fx` of `func(*args, **kwargs)` (torch's helper of the same name)."""
    return make_fx(lambda *a: func(*a, **kwargs), decomposition_table, tracing_mode)(*args)

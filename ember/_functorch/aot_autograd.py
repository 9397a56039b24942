"""AOT autograd: trace forward and backward ahead of time into one joint graph, split it, run it as one node.

`aot_function(fn, fw_compiler, bw_compiler)` returns a function that, on its first call (per input
metadata), does the four steps torch's AOTAutograd does:

1. **Joint graph.** `joint(primals, tangents)` runs `fn(*primals)` and then `autograd.grad` of its outputs
   with `tangents` as output gradients. Traced with `make_fx` on fake tensors, it records every forward op
   and every op of ember's own derivative formulas: one graph `(primals, tangents) -> (outputs, grads)`.
   With `decompositions`, composite ops are traced as the primitives they decompose into.
2. **Functionalization.** An in-place op `x.add_(y)` is recorded as `aten.add_`; the graph keeps each
   value's node, so it is rewritten as the out-of-place op (cast back to x's dtype where the write would
   have cast), every later use already pointing at it. An *input* written in place (a buffer updated by
   the function: batch norm's running statistics) is returned as an extra output, and the runtime
   writes it back into the caller's tensor after each call (NOTE [ Input mutations ]).
3. **Partition.** `partition_fn` (`min_cut_rematerialization_partition` by default, or
   `default_partition`) splits the joint graph into a forward graph (outputs and saved values) and a
   backward graph (saved values and tangents to gradients); `fw_compiler` / `bw_compiler` turn each into a
   callable (the identity `nop` keeps the GraphModule: `aot_eager`).
4. **One autograd node.** The compiled pair runs inside an `autograd.Function`: its forward runs the
   forward graph and saves the saved values, its backward runs the backward graph. So a compiled call is
   one node in the caller's autograd graph, and gradients equal eager ones.

When no input requires grad (or grad mode is off), only the forward is traced and compiled
(`inference_compiler`). `aot_module` / `aot_module_simplified` lift a module's parameters and buffers
into primals, as torch's do.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from .._grad_state import state as _grad_state
from .._tensor import Tensor
from ..fx import traceback as fx_traceback
from ..fx.experimental.proxy_tensor import trace_recorded
from ..fx.graph_module import GraphModule
from ..fx.interpreter import Interpreter
from ..ops import InplaceOpOverload, aten, overload_of
from .partitioners import default_partition, min_cut_rematerialization_partition

__all__ = ["aot_function", "aot_module", "aot_module_simplified", "nop", "aot_eager",
           "default_partition", "min_cut_rematerialization_partition"]


def nop(fx_g: GraphModule, example_inputs) -> GraphModule:
    """The identity compiler: the graph runs as its generated Python (`aot_eager`)."""
    return fx_g


# ---- functionalization ----------------------------------------------------------------------------------


def functionalize(gm: GraphModule) -> GraphModule:
    """Rewrite every in-place node as its out-of-place op (see step 2 of the module docstring)."""
    g = gm.graph
    for n in list(g.nodes):
        if n.op == "call_function" and isinstance(n.target, InplaceOpOverload):
            self_val = n.args[0].meta.get("val") if hasattr(n.args[0], "meta") else None
            n.target = overload_of(n.target.op)
            out_val = _out_of_place_val(n)
            if self_val is not None and out_val is not None and out_val.dtype != self_val.dtype:
                with g.inserting_after(n):
                    cast = g.call_function(aten.to.default, (n,), {"dtype": self_val.dtype})
                n.replace_all_uses_with(cast, delete_user_cb=lambda u: u is not cast)
                cast.meta["val"] = self_val
    gm.recompile()
    return gm


def _out_of_place_val(n):
    """The value the out-of-place op gives, from its inputs' metadata (run on fakes: nothing computes)."""
    from .._subclasses.fake_tensor import FakeTensorMode

    vals = [a.meta.get("val") if hasattr(a, "meta") else a for a in n.args]
    if any(isinstance(v, Tensor) and type(v).__name__ != "FakeTensor" for v in vals):
        return None
    mode = next((v.fake_mode for v in vals if type(v).__name__ == "FakeTensor"), None) or FakeTensorMode()
    with mode:
        try:
            return n.target(*vals, **n.kwargs)
        except Exception:  # noqa: BLE001 - no metadata to compare: keep the node as it is
            return None


# NOTE [ Input mutations ]
# The joint function returns, after the outputs and gradients, each primal as the tracer last saw it: the
# tracer binds a tensor written in place to the node of its last write, so that entry is the primal's
# placeholder when nothing wrote it and the written value when something did. Entries that are still the
# placeholder are dropped; the others become forward outputs, and the runtime copies each into the caller's
# tensor after the call (under no_grad, as an optimizer-style update), so the caller sees the write.


# ---- tracing the joint graph ------------------------------------------------------------------------------


def _flat(x) -> list:
    if isinstance(x, (tuple, list)):
        return [t for v in x for t in _flat(v)]
    return [x]


def _differentiable(t) -> bool:
    return isinstance(t, Tensor) and t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)


class _Compiled:
    """What one trace produced: the compiled graphs and how to map their inputs and outputs."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _trace_joint(fn, args, decompositions, partition_fn):
    from .. import autograd

    diff = [i for i, a in enumerate(args) if _differentiable(a)]
    probe = {}

    def joint(*flat):
        with _BackwardMeta() as bm:
            return _joint(bm, *flat)

    def _joint(bm, *flat):
        primals, tangents = flat[:len(args)], flat[len(args):]
        outs = fn(*primals)
        flat_outs = _flat(outs)
        grad_outs = [o for o in flat_outs if _differentiable(o)]
        probe["outs"] = outs
        probe["n_outs"] = len(flat_outs)
        probe["diff_outs"] = [i for i, o in enumerate(flat_outs) if _differentiable(o)]
        if "tangents" not in probe:
            return tuple(flat_outs) + tuple(primals)
        inputs = [primals[i] for i in diff]
        with bm.observing():  # (each backward formula traced under its forward node's stack_trace)
            grads = autograd.grad(grad_outs, inputs, grad_outputs=list(tangents), allow_unused=True) \
                if grad_outs and inputs else [None] * len(inputs)
        return tuple(flat_outs) + tuple(grads) + tuple(primals)

    # a first trace, forward only, says which outputs are differentiable (so how many tangents there are)
    _, _, fakes = trace_recorded(joint, list(args))
    from .. import empty_strided
    from .._meta import like_strides

    tangent_examples = [empty_strided(tuple(o.shape), like_strides(o), dtype=o.dtype, device="meta")
                        for o in _flat(probe["outs"]) if _differentiable(o)]
    probe["tangents"] = True
    names = [f"primals_{i + 1}" for i in range(len(args))] + \
        [f"tangents_{i + 1}" for i in range(len(tangent_examples))]
    gm, _, _ = trace_recorded(joint, list(args) + tangent_examples, decompositions, names=names)
    n_outs, n_grads = probe["n_outs"], len(diff)
    mutated = _drop_unmutated(gm, n_outs + n_grads, len(args))
    functionalize(gm)
    # the joint graph's outputs: forward outputs, mutated inputs' new values, then gradients
    _reorder_outputs(gm, n_outs, n_grads, len(mutated))
    fw, bw = partition_fn(gm, None, num_fwd_outputs=n_outs + len(mutated))
    fw.graph.lint()
    bw.graph.lint()
    return _Compiled(fw_graph=fw, bw_graph=bw, joint=gm, diff=diff, n_outs=n_outs, mutated=mutated,
                     diff_outs=probe["diff_outs"],
                     tangent_orders=[_order(t.stride()) for t in tangent_examples],
                     num_saved=fw.meta_num_saved, structure=probe["outs"], n_args=len(args))


def _drop_unmutated(gm, start: int, n_primals: int) -> list:
    """Keep, among the trailing primal outputs, those written in place; return their argument indices."""
    out = next(n for n in gm.graph.nodes if n.op == "output")
    flat = list(out.args[0])
    tail = flat[start:start + n_primals]
    mutated = [i for i, v in enumerate(tail) if hasattr(v, "op") and v.op != "placeholder"]  # (a number: no)
    out.args = (tuple(flat[:start] + [tail[i] for i in mutated]),)
    gm.recompile()
    return mutated


def _reorder_outputs(gm, n_outs: int, n_grads: int, n_mut: int) -> None:
    out = next(n for n in gm.graph.nodes if n.op == "output")
    flat = list(out.args[0])
    outs, grads, muts = flat[:n_outs], flat[n_outs:n_outs + n_grads], flat[n_outs + n_grads:]
    out.args = (tuple(outs + muts + grads),)
    gm.graph.eliminate_dead_code()
    gm.recompile()


def _trace_inference(fn, args, decompositions):
    probe = {}

    def forward(*primals):
        outs = fn(*primals)
        probe["outs"] = outs
        flat = _flat(outs)
        probe["n_outs"] = len(flat)
        return tuple(flat) + tuple(primals)

    names = [f"arg{i}_1" for i in range(len(args))]
    gm, _, _ = trace_recorded(forward, list(args), decompositions, names=names)
    mutated = _drop_unmutated(gm, probe["n_outs"], len(args))
    functionalize(gm)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return _Compiled(fw_graph=gm, bw_graph=None, n_outs=probe["n_outs"], mutated=mutated,
                     structure=probe["outs"])


# ---- running the compiled graphs ---------------------------------------------------------------------------


def _unflatten(structure, it):
    if isinstance(structure, (tuple, list)):
        items = [_unflatten(s, it) for s in structure]
        return type(structure)(items) if not hasattr(structure, "_fields") else type(structure)(*items)
    return next(it)


def _write_back(args, mutated, values):
    from .. import no_grad

    with no_grad():
        for i, v in zip(mutated, values):
            args[i].copy_(v)


def _make_function(c: _Compiled):
    from .. import zeros
    from ..autograd import Function

    class CompiledFunction(Function):
        @staticmethod
        def forward(ctx, *args):
            res = c.fw(*args)
            k = c.n_outs + len(c.mutated)
            outs, saved = res[:k], res[k:]
            ctx.save_for_backward(*[s for s in saved if isinstance(s, Tensor)])
            ctx.others = [None if isinstance(s, Tensor) else s for s in saved]
            ctx.out_meta = [(tuple(o.shape), o.dtype) if isinstance(o, Tensor) else None for o in outs]
            non_diff = [o for i, o in enumerate(outs) if isinstance(o, Tensor) and i not in c.diff_outs]
            if non_diff:
                ctx.mark_non_differentiable(*non_diff)
            return tuple(outs)

        @staticmethod
        def backward(ctx, *grads):
            it = iter(ctx.saved_tensors)
            saved = [next(it) if o is None else o for o in ctx.others]
            tangents = [g if g is not None else zeros(ctx.out_meta[i][0], dtype=ctx.out_meta[i][1])
                        for i, g in enumerate(grads) if i in c.diff_outs]
            tangents = [_as_traced(t, order) for t, order in zip(tangents, c.tangent_orders)]
            grad_inputs = c.bw(*saved, *tangents)
            full = [None] * c.n_args
            for i, g in zip(c.diff, grad_inputs):
                full[i] = g
            return tuple(full)

    return CompiledFunction


# NOTE [ Tangents' layout ]
# The backward graph is traced with each tangent laid out as its forward output is (what a loss's gradient
# usually is; dense in the output's order where the output overlaps or has gaps, as `empty_like`), and its
# view ops are only valid on that layout: a `view` that was legal on the traced strides can be illegal on
# others. The gradient the engine hands in at run time may be laid out otherwise (a contiguous gradient of
# a transposed output); it is then copied into the traced layout first, as torch's AOT autograd coerces
# runtime tangents to the traced memory format.
def _as_traced(t, order):
    stride = _dense(tuple(t.shape), order)
    if t.stride() == stride:
        return t
    from .. import empty_strided

    return empty_strided(tuple(t.shape), stride, dtype=t.dtype).copy_(t)


def _order(stride) -> tuple:
    """The dims of a dense layout from outermost to innermost (ties: the earlier dim outer)."""
    return tuple(sorted(range(len(stride)), key=lambda d: -stride[d]))


def _dense(shape, order) -> tuple:
    """The strides of a dense tensor of `shape` laid out in dim order `order` (outermost first)."""
    stride, acc = [0] * len(shape), 1
    for d in reversed(order):
        stride[d] = acc
        acc *= max(shape[d], 1)
    return tuple(stride)


class _AOTFunction:
    """The function `aot_function` returns: traces and compiles per input metadata, then runs."""

    def __init__(self, fn, fw_compiler, bw_compiler, partition_fn, decompositions, inference_compiler):
        self.fn = fn
        self.fw_compiler = fw_compiler
        self.bw_compiler = bw_compiler or fw_compiler
        self.inference_compiler = inference_compiler or fw_compiler
        self.partition_fn = partition_fn
        self.decompositions = decompositions
        self.cache: dict = {}
        self.dynamic_dims = {}  # {arg index: dims the caller marks dynamic} (aot_module_simplified)
        self.generalized: list = []  # entries whose graphs compute their sizes (_dynamic.py)
        self.seen: dict = {}  # per input signature, the sizes first traced (automatic dynamic)

    def _trace(self, args, training):
        if training:
            return _trace_joint(self.fn, args, self.decompositions, self.partition_fn)
        return _trace_inference(self.fn, args, self.decompositions)

    def _compile(self, c, training):
        _log_graphs(c, training)
        if training:
            c.fw, c.bw = self.fw_compiler(c.fw_graph, None), self.bw_compiler(c.bw_graph, None)
            c.function = _make_function(c)
        else:
            c.fw = self.inference_compiler(c.fw_graph, None)
        return c

    def _dynamic_entry(self, args, training):
        """The compiled entry for these inputs when sizes are (or just became) dynamic: NOTE [ Dynamic sizes
        through AOT ] in _dynamic.py. None: trace these sizes as they are."""
        from . import _dynamic

        return _dynamic.entry(self, args, training)

    def _key(self, args, training):
        return training, tuple((tuple(a.shape), a.dtype, a.stride(), a.requires_grad) if isinstance(a, Tensor)
                               else (type(a), a) for a in args)

    def __call__(self, *args):
        training = _grad_state.enabled and any(_differentiable(a) for a in args)
        key = self._key(args, training)
        c = self.cache.get(key)
        if c is None:
            c = self._dynamic_entry(args, training) or self._compile(self._trace(args, training), training)
            self.cache[key] = c
        if training:
            res = c.function.apply(*args)
        else:
            res = c.fw(*args)
        outs, new_values = list(res[:c.n_outs]), res[c.n_outs:c.n_outs + len(c.mutated)]
        _write_back(args, c.mutated, new_values)
        return _unflatten(c.structure, iter(outs))


_aot_ids = [0]


def _log_graphs(c, training):
    """TORCH_LOGS=aot_graphs: the forward (or inference) and backward graphs, as torch logs them."""
    from .. import _logging

    aot_id = _aot_ids[0]
    _aot_ids[0] += 1

    def fmt(name, gm):
        return f"TRACED GRAPH\n ===== {name} {aot_id} =====\n {gm.code}"

    _logging.trace("aot_graphs", lambda: fmt("Forward graph", c.fw_graph))
    if training:
        _logging.trace("aot_graphs", lambda: fmt("Backward graph", c.bw_graph))


def aot_function(fn: Callable, fw_compiler: Callable, bw_compiler: Callable | None = None,
                 partition_fn: Callable = default_partition, decompositions: dict | None = None,
                 num_params_buffers: int = 0, keep_inference_input_mutations: bool = False,
                 inference_compiler: Callable | None = None, *, dynamic: bool = False,
                 enable_log: bool = True) -> Callable:
    """Trace `fn`'s forward and backward ahead of time and run them compiled (see the module docstring).

    Args:
        fn: tensors in, tensors (nested in tuples/lists) out.
        fw_compiler, bw_compiler: `compiler(graph_module, example_inputs) -> callable` for each graph
            (bw_compiler defaults to fw_compiler).
        partition_fn: `default_partition` (save everything) or `min_cut_rematerialization_partition`.
        decompositions: an `ember._decomp` table applied while tracing.
        inference_compiler: the compiler of the forward-only graph traced when nothing needs gradients.
    """
    return _AOTFunction(fn, fw_compiler, bw_compiler, partition_fn, decompositions, inference_compiler)


def _lifted(mod, names):
    from ..nn.utils.stateless import _reparametrize

    keep_meta = isinstance(mod, GraphModule) and any(n.meta.get("stack_trace") for n in mod.graph.nodes)

    def fn(*flat):
        params, args = flat[:len(names)], flat[len(names):]
        with _reparametrize(mod, dict(zip(names, params))):
            return _MetaInterpreter(mod).run(*args) if keep_meta else mod(*args)
    return fn


_local = threading.local()


# NOTE [ Stack traces through AOT autograd ]
# torch keeps a captured node's `stack_trace` on every forward and backward node traced from it. Here the
# captured graph runs node by node (`_MetaInterpreter`) under `fx_traceback.set_current_meta`, so the tracer
# copies the trace onto the forward nodes; the autograd nodes each captured node created are noted, and
# while the backward is traced an engine observer (the hook the profiler uses) sets, around each autograd
# node's formula, the trace of the captured node that created it.
class _MetaInterpreter(Interpreter):
    def run_node(self, n):
        st = n.meta.get("stack_trace")
        if not st:
            return super().run_node(n)
        with fx_traceback.set_current_meta(n.meta):
            out = super().run_node(n)
        _BackwardMeta.note(out, st)
        return out


class _BackwardMeta:
    """The autograd nodes each captured node made, and the engine observer of NOTE [ Stack traces through AOT
    autograd ]: `with _BackwardMeta() as bm:` collects for one joint trace (per thread)."""

    def __init__(self):
        self.traces = {}  # id(autograd node) -> (the node, the stack_trace of the captured node that made it)

    def __enter__(self):
        self.prev = getattr(_local, "bm", None)
        _local.bm = self
        return self

    def __exit__(self, *exc):
        _local.bm = self.prev
        self.traces = {}

    @staticmethod
    def note(out, st):
        bm = getattr(_local, "bm", None)
        if bm is None:
            return
        stack = [t.grad_fn for t in _flat(out) if isinstance(t, Tensor) and t.grad_fn is not None]
        while stack:
            node = stack.pop()
            if node is None or id(node) in bm.traces:
                continue
            bm.traces[id(node)] = (node, st)
            stack.extend(nxt for nxt, _ in node.next_functions)

    @contextlib.contextmanager
    def observing(self):
        from ..autograd import engine

        if not self.traces:
            yield
            return
        engine._node_observers.append(self)
        try:
            yield
        finally:
            engine._node_observers.remove(self)

    def __call__(self, node):
        hit = self.traces.get(id(node))
        return _MetaScope({"stack_trace": hit[1]} if hit is not None and hit[0] is node else None)


class _MetaScope:
    def __init__(self, meta):
        self.cm = fx_traceback.set_current_meta(meta)

    def __enter__(self):
        self.cm.__enter__()
        return self

    def __exit__(self, *exc):
        return self.cm.__exit__(*exc)

    def applied(self):  # (the profiler's observers mark the end of the formula here)
        pass


def aot_module(mod, *args, **kwargs):
    """`aot_function` of a Module: its parameters and buffers become the first primals at each call."""
    names = [n for n, _ in mod.named_parameters()] + [n for n, _ in mod.named_buffers()]
    compiled = aot_function(_lifted(mod, names), *args, num_params_buffers=len(names), **kwargs)

    def forward(*inputs):
        state = dict(mod.named_parameters())
        state.update(mod.named_buffers())
        return compiled(*[state[n] for n in names], *inputs)
    return forward


def aot_module_simplified(mod, example_inputs, fw_compiler: Callable, bw_compiler: Callable | None = None,
                          partition_fn: Callable = min_cut_rematerialization_partition,
                          decompositions: dict | None = None, keep_inference_input_mutations: bool = False,
                          inference_compiler: Callable | None = None, cudagraphs=None) -> Callable:
    """AOT autograd of a GraphModule (what a graph capture hands a backend): a callable taking the
    graph's user inputs, its parameters and buffers lifted into primals (torch's signature)."""
    names = [n for n, _ in mod.named_parameters()] + [n for n, _ in mod.named_buffers()]
    compiled = aot_function(_lifted(mod, names), fw_compiler, bw_compiler, partition_fn, decompositions,
                            len(names), keep_inference_input_mutations, inference_compiler)
    # the sizes the capture keeps symbolic (NOTE [ Dynamic sizes through AOT ] in _dynamic.py)
    placeholders = [n for n in mod.graph.nodes if n.op == "placeholder"] if hasattr(mod, "graph") else []
    compiled.dynamic_dims = {len(names) + i: n.meta["dynamic_dims"] for i, n in enumerate(placeholders)
                             if n.meta.get("dynamic_dims")}

    def forward(*runtime_args):
        state = dict(mod.named_parameters())
        state.update(mod.named_buffers())
        return compiled(*[state[n] for n in names], *runtime_args)
    forward.zero_grad = getattr(mod, "zero_grad", None)
    forward.named_parameters = getattr(mod, "named_parameters", None)
    return forward


def aot_eager(gm, example_inputs, **kwargs):
    """The `aot_eager` backend: `aot_module_simplified` with identity compilers (graphs run as Python)."""
    return aot_module_simplified(gm, example_inputs, fw_compiler=nop, bw_compiler=nop, **kwargs)


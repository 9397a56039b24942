"""`torch.jit.trace` / `trace_module` on ember's dispatch-level tracer (`make_fx`), and `freeze`.

Tracing runs the function once on the example inputs, with real values, under `make_fx`'s tracing mode
(below autograd: every op that reaches the dispatcher becomes a node). Parameters and buffers of a traced
module are bound to graph inputs before the run and then turned into `get_attr` nodes (NOTE [ Parameters
stay attributes ]). Python decisions the run takes on tensor values (`if x.sum() > 0`, `.item()`, `len`)
cannot be recorded: the graph holds the branch that was taken, and the trace warns as torch does
(NOTE [ When a trace bakes in a Python value ]). `check_trace` traces again on `check_inputs` and compares
the graphs and the results with the Python function's.
"""

from __future__ import annotations

import contextlib
import difflib
import sys
import warnings
from operator import attrgetter

from .._tensor import Tensor
from ..nn.modules.module import Module
from ._script import (
    RecursiveScriptModule,
    ScriptFunction,
    ScriptModule,
    TopLevelTracedModule,
    TracerWarning,
    TracingCheckError,
    _leaves,
    _Replay,
    _signature,
    _signature_names,
    _state,
)

__all__ = ["trace", "trace_module", "freeze", "optimize_for_inference", "run_frozen_optimizations"]

_DEPRECATED = "`torch.jit.{}` is deprecated. Please switch to `torch.compile` or `torch.export`."


# NOTE [ When a trace bakes in a Python value ]
# A trace sees ops, not Python: `if x.sum() > 0:` calls `Tensor.__bool__` and the branch taken is all the
# graph will ever do. torch warns at each such conversion (a TracerWarning naming the kind of value), and so
# do we: for the length of a trace the conversion methods of Tensor are wrapped to warn. The wrappers live
# only during `trace` (the hot path pays nothing), and warn only when the caller is not ember's own
# library code (ember's kernels convert sizes and scalars internally; torch's do that in C++).
_CONVERSIONS = {
    "__bool__": "a Python boolean", "item": "a Python number", "__int__": "a Python integer",
    "__float__": "a Python float", "tolist": "a Python list", "numpy": "a NumPy array",
    "__index__": "a Python index",
}
_MSG = ("Converting a tensor to {} might cause the trace to be incorrect. We can't record the data flow of "
        "Python values, so this value will be treated as a constant in the future. This means that the trace "
        "might not generalize to other inputs!")
_LEN_MSG = ("Using len to get tensor shape might cause the trace to be incorrect. Recommended usage would be "
            "tensor.shape[0]. Passing a tensor of different shape might lead to errors or silently give "
            "incorrect results.")


def _from_user(depth: int = 2) -> bool:
    name = sys._getframe(depth).f_globals.get("__name__", "")
    return not (name == "ember" or name.startswith("ember.")) or name.startswith("ember.jit")


def _warning_wrapper(orig, message):
    def wrapper(self, *args, **kwargs):
        if _from_user():
            warnings.warn(message, TracerWarning, stacklevel=2)
        return orig(self, *args, **kwargs)
    wrapper.__wrapped__ = orig
    return wrapper


@contextlib.contextmanager
def _tracing():
    saved = {name: Tensor.__dict__[name] for name in (*_CONVERSIONS, "__len__")}
    for name, what in _CONVERSIONS.items():
        setattr(Tensor, name, _warning_wrapper(saved[name], _MSG.format(what)))
    Tensor.__len__ = _warning_wrapper(saved["__len__"], _LEN_MSG)
    _state.tracing = getattr(_state, "tracing", 0) + 1
    try:
        yield
    finally:
        _state.tracing -= 1
        for name, fn in saved.items():
            setattr(Tensor, name, fn)


# --- inputs: tensors in nested tuples/lists/dicts, flattened to the graph's placeholders ---------------------

def _rebuild(template, it):
    if isinstance(template, Tensor):
        return next(it)
    if isinstance(template, (tuple, list)):
        return type(template)(_rebuild(a, it) for a in template)
    if isinstance(template, dict):
        return {k: _rebuild(v, it) for k, v in template.items()}
    return template


def _as_tuple(example_inputs):
    if isinstance(example_inputs, tuple):
        return example_inputs
    return (example_inputs,)


def _has_container(out) -> str | None:
    if isinstance(out, list):
        return "list"
    if isinstance(out, dict):
        return "dict"
    if isinstance(out, tuple):
        for o in out:
            kind = _has_container(o)
            if kind:
                return kind
    return None


# NOTE [ Parameters stay attributes ]
# `make_fx` would turn a parameter the function reads into a `_tensor_constant`: a copy of its value baked
# into the graph. torch's trace keeps `self.weight` a read of the module's attribute instead, so training a
# traced module trains it. We bind each parameter and buffer to a placeholder before the run (the tracer
# then knows it by identity, like an input), and after it replace each such placeholder by a `get_attr` of
# its qualified name. The GraphModule is built over the module's own Parameter objects.

def _record(fn, module, inputs, strict, name):
    from ..fx.experimental.proxy_tensor import trace_recorded
    from ..fx.graph_module import GraphModule, _assign_attr

    state = []
    if module is not None:
        state = list(module.named_parameters()) + list(module.named_buffers())
    leaves = _leaves(inputs, [])
    n_state = len(state)
    names = [f"_state_{i}" for i in range(n_state)] + _signature_names(fn, len(leaves))

    def run(*flat):
        return fn(*_rebuild(inputs, iter(flat[n_state:])))

    with _tracing():
        gm0, _, _ = trace_recorded(run, [t for _, t in state] + leaves, tracing_mode="real", names=names)
    graph = gm0.graph
    out_node = next(n for n in graph.nodes if n.op == "output")
    if strict:
        kind = _has_container(_output_value(out_node))
        if kind:
            warnings.warn(
                f"Encountering a {kind} at the output of the tracer might cause the trace to be incorrect, "
                "this is only valid if the container structure does not change based on the module's inputs. "
                "Consider using a constant container instead (e.g. for `list`, use a `tuple` instead. for "
                "`dict`, use a `NamedTuple` instead). If you absolutely need this and know the side effects, "
                "pass strict=False to trace() to allow this behavior.", TracerWarning, stacklevel=4)
    graph.eliminate_dead_code()  # as torch's trace: ops whose results nothing reads are not replayed
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    first_op = next((n for n in graph.nodes if n.op != "placeholder"), None)
    root = {}
    for (qual, t), ph in zip(state, placeholders[:n_state]):
        root[qual] = t
        if ph.users:
            with graph.inserting_before(first_op):
                attr = graph.get_attr(qual)
            attr.meta.update(ph.meta)
            ph.replace_all_uses_with(attr)
        graph.erase_node(ph)
    for n in graph.nodes:
        if n.op == "get_attr" and n.target not in root:
            root[n.target] = attrgetter(n.target)(gm0)
    gm = GraphModule(root, graph, class_name=name)
    for qual, t in root.items():
        try:
            attrgetter(qual)(gm)
        except AttributeError:
            _assign_attr(t, gm, qual)
    if module is not None:
        gm.train(module.training)
    return gm


def _output_value(out_node):
    from ..fx.node import map_arg

    return map_arg(out_node.args[0], lambda n: n.meta.get("val"))


def _is_random(gm) -> list:
    return [n for n in gm.graph.nodes if n.op == "call_function"
            and "nondeterministic_seeded" in getattr(getattr(n.target, "op", None), "tags", ())]


def _check(fn, module, gm, check_inputs, tolerance, strict, name, call, kind="trace"):
    """torch's `_check_trace`: trace again on each check input; the graph must be the same, and the traced
    function's result must match the Python function's (a TracerWarning otherwise)."""
    from .. import testing

    nondet = _is_random(gm)
    if nondet:
        warnings.warn("Trace had nondeterministic nodes. Did you forget call .eval() on your model? Nodes:\n"
                      + "\n".join(f"\t{n.format_node()}" for n in nondet) + "\nThis may cause errors in "
                      "trace checking. To disable trace checking, pass check_trace=False to torch.jit.trace()",
                      TracerWarning, stacklevel=4)
    for inputs in check_inputs:
        inputs = _as_tuple(inputs)
        traced_out = call(*inputs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TracerWarning)
            py_out = fn(*inputs)
        traced_flat, py_flat = _leaves(traced_out, []), _leaves(py_out, [])
        for i, (a, b) in enumerate(zip(traced_flat, py_flat)):
            try:
                testing.assert_close(a.detach(), b.detach(), rtol=tolerance, atol=None if tolerance is None
                                     else 1e-5, equal_nan=True)
            except AssertionError as e:
                warnings.warn(f"Output nr {i + 1}. of the traced function does not match the corresponding "
                              f"output of the Python function. Detailed error:\n{e}", TracerWarning,
                              stacklevel=4)
                break
        warnings.warn(_DEPRECATED.format(kind), DeprecationWarning, stacklevel=4)  # (torch traces again)
        again = _record(fn, module, inputs, strict, name)
        if again.code != gm.code:
            diff = "\n".join(difflib.ndiff(gm.code.strip().splitlines(), again.code.strip().splitlines()))
            raise TracingCheckError("Graph diff:\n" + "\n".join("\t" + ln for ln in diff.splitlines()), None)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """torch.jit.trace: run `func` on `example_inputs` and return a ScriptFunction / TracedModule that
    replays the recorded ops (see the module docstring).

    Args:
        func: a function or an `nn.Module` (its `forward` is traced; see `trace_module`).
        example_inputs: a tensor or a tuple of arguments (tensors, possibly in tuples, lists and dicts).
        check_trace: trace again on `check_inputs` (default: the example inputs) and compare.
        strict: warn when the output holds a list or dict (a structure the trace fixes).
        example_kwarg_inputs: keyword arguments, instead of `example_inputs`.
    """
    warnings.warn(_DEPRECATED.format("trace"), DeprecationWarning, stacklevel=2)
    if isinstance(func, (ScriptModule, ScriptFunction)):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. Returning the "
                      "object as is.", stacklevel=2)
        return func
    if isinstance(func, Module):
        inputs = example_inputs if example_kwarg_inputs is None else example_kwarg_inputs
        return trace_module(func, {"forward": inputs}, None, check_trace, _wrap_check(check_inputs),
                            check_tolerance, strict, example_inputs_is_kwarg=example_kwarg_inputs is not None)
    inputs = _kw_inputs(func, example_kwarg_inputs) if example_kwarg_inputs is not None else \
        _as_tuple(example_inputs)
    name = getattr(func, "__name__", type(func).__name__).replace("<lambda>", "_lambda")
    gm = _record(func, None, inputs, strict, name)
    result = ScriptFunction(gm, name, func)
    result._replay = _Replay(gm, _signature(_leaves(inputs, [])),
                             lambda args: _record(func, None, args, False, name))
    if check_trace:
        _check(func, None, gm, check_inputs or [inputs], check_tolerance, strict, name, result)
    return result


def _kw_inputs(fn, kwargs):
    names = _signature_names(fn, 10 ** 6)
    return tuple(kwargs[n] for n in names if n in kwargs)


def _wrap_check(check_inputs):
    return None if check_inputs is None else [{"forward": c} for c in check_inputs]


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """torch.jit.trace_module: trace `mod`'s methods named in `inputs` ({"forward": example_inputs, ...});
    the parameters and buffers stay the module's live attributes."""
    warnings.warn(_DEPRECATED.format("trace_method"), DeprecationWarning, stacklevel=2)
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    original_name = type(mod).__name__
    methods = {}
    for method_name, example in inputs.items():
        fn = mod.forward if method_name == "forward" else getattr(mod, method_name)
        args = _kw_inputs(fn, example) if example_inputs_is_kwarg else _as_tuple(example)
        gm = _record(fn, mod, args, strict, original_name)
        methods[method_name] = (fn, gm, args)
    fn, gm, args = methods.get("forward") or next(iter(methods.values()))
    result = TopLevelTracedModule(gm, original_name, args if _store_inputs else None)
    object.__setattr__(result, "_replay", _Replay(gm, _signature(_leaves(args, [])),
                                                  lambda a: _share(result, _record(fn, mod, a, False, original_name))))
    for method_name, (_, other, _) in methods.items():
        if method_name != "forward":
            object.__setattr__(result, method_name, ScriptFunction(_share(result, other), method_name))
    if check_trace:
        for method_name, (fn, other, args) in methods.items():
            checks = [c[method_name] for c in check_inputs] if check_inputs else [args]
            call = result if method_name == "forward" else getattr(result, method_name)
            _check(fn, mod, other, checks, check_tolerance, strict, original_name, call, "trace_method")
    return result


# --- freeze -----------------------------------------------------------------------------------------------

def _share(script_module, gm):
    """Make `gm` read the script module's parameter, buffer and submodule dicts (one state for all graphs)."""
    for key in ("_parameters", "_buffers", "_modules"):
        gm.__dict__[key] = script_module.__dict__[key]
    return gm


def freeze(mod, preserved_attrs=None, optimize_numerics: bool = True):
    """torch.jit.freeze: inline the parameters and attributes of an eval-mode ScriptModule as constants of
    its graph and fold what depends only on them (`w.t()`, a batch norm's scale); the result has no
    parameters and no longer follows changes to the original's."""
    warnings.warn("`torch.jit.freeze` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use torch.jit.script or "
                           "torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    return _freeze(mod, preserved_attrs or [])


def _freeze(mod, preserved):
    from .. import no_grad
    from ..fx.graph_module import GraphModule

    gm = mod._c
    if not isinstance(gm, GraphModule):
        raise RuntimeError("ember can freeze a traced or loaded module (one recorded graph); this module was "
                           "scripted through ember.compile, whose graphs are guarded per input")
    graph = _copy_graph(gm.graph)
    consts, values = {}, {}
    for n in list(graph.nodes):
        if n.op == "get_attr":
            if n.target.split(".")[0] in preserved or n.target in preserved:
                continue
            values[n] = attrgetter(n.target)(gm).detach().clone()  # a copy: frozen means frozen
        elif n.op == "call_function" and n.all_input_nodes and all(a in values for a in n.all_input_nodes):
            from ..fx.node import map_arg

            with no_grad():
                values[n] = n.target(*map_arg(n.args, values.get), **map_arg(n.kwargs, values.get))
    # the folded values that something outside the folded set reads become the new constants
    keep = [n for n in values if any(u not in values for u in n.users) and isinstance(values[n], Tensor)]
    for i, n in enumerate(keep):
        name = f"_frozen_param{i}"
        consts[name] = values[n]
        with graph.inserting_before(n):
            c = graph.get_attr(name)
        c.meta.update(n.meta)
        n.replace_all_uses_with(c)
    for n in reversed(list(graph.nodes)):
        if n in values and not n.users:
            graph.erase_node(n)
    for n in graph.nodes:
        if n.op == "get_attr" and n.target not in consts:
            consts[n.target] = attrgetter(n.target)(gm)
    for attr in preserved:
        consts[attr] = getattr(gm, attr)
    frozen = GraphModule({k: v for k, v in consts.items()}, graph, class_name=type(gm).__name__)
    frozen.train(False)
    for k in list(frozen._buffers):  # folded values are constants of the graph, not buffers (as torch's)
        if k.startswith("_frozen_param"):
            object.__setattr__(frozen, k, frozen._buffers.pop(k))
    out = RecursiveScriptModule(frozen, mod.original_name)
    first = mod._replay.first if isinstance(mod._replay, _Replay) else None
    object.__setattr__(out, "_replay", _Replay(frozen, first))
    object.__setattr__(out, "_frozen", True)
    return out


def _copy_graph(g):
    from ..fx.graph import Graph

    new = Graph()
    out = new.graph_copy(g, {})
    new.output(out)
    return new


def run_frozen_optimizations(mod, optimize_numerics: bool = True, preserved_methods=None):
    """torch.jit.run_frozen_optimizations: the folding `freeze` does is already all ember does."""
    return mod


def optimize_for_inference(mod, other_methods=None):
    """torch.jit.optimize_for_inference: `freeze(mod.eval())` (constant-folded parameters, eval mode)."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please use torch.jit.script "
                           "or torch.jit.trace to script your 'nn.Module'.")
    if getattr(mod, "_frozen", False):
        return mod
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return freeze(mod.eval())

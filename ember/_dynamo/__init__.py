"""`torch._dynamo`: capture of Python functions into graphs by symbolic execution of their bytecode.

Read in this order: variables.py (what capture tracks), symbolic_convert.py and calls.py (the
interpreter), output_graph.py (the graph, its inputs and the state rebuilt at a break), guards.py,
eval_frame.py (the cache, running compiled entries, graph breaks and resumption), backends.py. The public
entry is `ember.compile` (ember/_compile.py) and `optimize` here.
"""

from __future__ import annotations

import functools
import inspect

from . import config
from .backends import list_backends, lookup_backend, register_backend
from .eval_frame import CompileContext, _all_caches, _compile_state, run_frame
from .exc import Unsupported

__all__ = [
    "optimize",
    "explain",
    "reset",
    "mark_dynamic",
    "mark_static",
    "maybe_mark_dynamic",
    "disable",
    "allow_in_graph",
    "is_compiling",
    "list_backends",
    "register_backend",
    "config",
    "Unsupported",
    "OptimizedModule",
    "run",
    "is_dynamo_compiling",
    "assume_constant_result",
    "graph_break",
]


class OptimizedFunction:
    """What `ember.compile(fn)` returns: calls go through the frame cache.

    See NOTE [ Frame interception ] in eval_frame.py.
    """

    def __init__(self, fn, ctx):
        self._torchdynamo_orig_callable = fn
        self._ctx = ctx
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        fn = self._torchdynamo_orig_callable
        if isinstance(fn, type(self.__call__)):  # a bound method: its function with self first
            return run_frame(self._ctx, fn.__func__, (fn.__self__, *args), kwargs)
        return run_frame(self._ctx, fn, args, kwargs)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)


def _module_call(self, *args, **kwargs):
    return self(*args, **kwargs)


def _module_call_impl(self, *args, **kwargs):
    return self._call_impl(*args, **kwargs)


def _optimized_module_cls():
    from ..nn import Module

    class OptimizedModule(Module):
        """`ember.compile(module)`: a Module wrapping the original (`_orig_mod`), calls compiled."""

        def __init__(self, mod, ctx):
            super().__init__()
            self._orig_mod = mod
            self.__dict__["_ctx"] = ctx
            self.__dict__["forward_fn"] = OptimizedFunction(_module_call, ctx)

        def __call__(self, *args, **kwargs):
            return self.__dict__["forward_fn"](self._orig_mod, *args, **kwargs)

        def forward(self, *args, **kwargs):
            return self.__call__(*args, **kwargs)

        def __getattr__(self, name):
            if name == "_orig_mod":
                return self._modules["_orig_mod"]
            return getattr(self._modules["_orig_mod"], name)

    return OptimizedModule


_OM = [None]


def __getattr__(name):
    if name == "OptimizedModule":
        if _OM[0] is None:
            _OM[0] = _optimized_module_cls()
        return _OM[0]
    raise AttributeError(f"module 'torch._dynamo' has no attribute {name!r}")


def optimize(backend="inductor", *, nopython=False, dynamic=None, disable=False):
    """`torch._dynamo.optimize(backend)(fn)`: torch's older spelling of `torch.compile`."""

    def wrap(fn):
        return _compile(fn, backend=backend, fullgraph=nopython, dynamic=dynamic, disable=disable)

    return wrap


def _compile(model, *, backend, fullgraph=False, dynamic=None, disable=False, recompile_limit=None):
    from ..nn import Module

    if disable:
        return model
    name = backend if isinstance(backend, str) else getattr(backend, "__name__", None)
    ctx = CompileContext(lookup_backend(backend), fullgraph=fullgraph, dynamic=dynamic, backend_name=name)
    ctx.recompile_limit = recompile_limit
    if isinstance(model, Module):
        return __getattr__("OptimizedModule")(model, ctx)
    if not callable(model):
        raise RuntimeError("torch.compile: the model must be a function or an nn.Module")
    if inspect.ismethod(model) and model.__func__ is Module._call_impl:  # Module.compile()
        return functools.partial(OptimizedFunction(_module_call_impl, ctx), model.__self__)
    if not (inspect.isfunction(model) or inspect.ismethod(model)):
        call = type(model).__call__
        if inspect.isfunction(call):
            return OptimizedFunction(call.__get__(model), ctx)
        raise RuntimeError(f"torch.compile cannot compile a {type(model).__name__}")
    return OptimizedFunction(model, ctx)


def reset():
    """Forget every compiled entry and what automatic dynamic shapes learned."""
    for ctx in list(_all_caches):
        ctx.reset()
    from .eval_frame import _frame_ids

    _frame_ids.clear()  # (torch numbers frames from 0 again after a reset)


def _indices(t, index):
    return set(index if isinstance(index, (list, tuple)) else [index])


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):  # noqa: A002
    """Mark size(s) `index` of tensor `t` dynamic: compiled code does not specialize on them."""
    t.__dict__["_dynamo_dynamic_indices"] = getattr(t, "_dynamo_dynamic_indices", set()) | _indices(t, index)


maybe_mark_dynamic = mark_dynamic


def mark_static(t, index=None):
    idx = set(range(t.dim())) if index is None else _indices(t, index)
    t.__dict__["_dynamo_static_indices"] = getattr(t, "_dynamo_static_indices", set()) | idx


def disable(fn=None, recursive=True, *, reason=None):
    """`torch._dynamo.disable(fn)`: `fn` always runs eagerly; a call to it inside a compiled region breaks."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def _disabled(*args, **kwargs):
        return fn(*args, **kwargs)

    _disabled._dynamo_disable = True
    return _disabled


def allow_in_graph(fn):
    """Put calls to `fn` in the graph as one node instead of inlining it."""
    fn._dynamo_allow_in_graph = True
    return fn


def is_compiling():
    """True while capture interprets the code (where capture sees this call it folds it to True)."""
    return _compile_state["compiling"]


is_compiling._dynamo_is_compiling = True
is_dynamo_compiling = is_compiling


def assume_constant_result(fn):
    fn._dynamo_allow_in_graph = False
    return fn


@disable
def graph_break():
    """Force a graph break here."""


def run(fn=None):
    return fn


from .explain import ExplainOutput as ExplainOutput  # noqa: E402
from .explain import explain  # noqa: E402

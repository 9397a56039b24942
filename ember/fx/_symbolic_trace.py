"""Symbolic tracing: run a Module's `forward` on `Proxy` inputs and record what it does as a `Graph`.

`symbolic_trace(module)` calls `forward` once with a Proxy per parameter. Operators and Tensor methods on
Proxies record themselves (`proxy.py`); calls to ember's functions, module calls and parameter reads are
caught by patching, for the length of the trace, the places Python looks them up (NOTE [ What tracing
patches ]). A leaf module (by default, ember's own `nn` layers) becomes one `call_module` node; any other
module's `forward` is traced through. Parameters and buffers become `get_attr` nodes.

The result is a `GraphModule` whose code is the straight-line program the call ran: Python control flow
that depended only on non-traced values was decided during the trace and is gone from the graph, and
control flow on a traced value raises `TraceError` (pass such inputs as `concrete_args`).
"""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import operator
import sys
import types
from typing import Any, Callable

from .graph import Graph
from .graph_module import GraphModule
from .node import Node, map_aggregate
from .proxy import Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "has_side_effect"]


def _assert(condition, message: str = "") -> None:
    """`torch._assert`: raise AssertionError(message) unless `condition` holds (graphs keep such checks)."""
    if not condition:
        raise AssertionError(message)


def _assert_is_none(value, msg: str) -> None:
    assert value is None, msg


class _PH:
    """A placeholder for `concrete_args`: that input stays a graph input (torch's `fx.PH`)."""

    def __repr__(self):
        return "PH"


PH = _PH()

# (globals dict, name) of each function `wrap` named: patched while any trace runs
_wrapped: list[tuple[dict, str]] = []


def has_side_effect(fn: Callable) -> Callable:
    """Mark `fn` as having side effects: dead-code elimination keeps its call_function nodes."""
    fn._is_impure = True
    return fn


def wrap(fn_or_name: str | Callable):
    """Called at module scope: calls of the named function (of this module's globals) are recorded as
    one call_function node, not traced through.

        ember.fx.wrap("my_helper")      # or @ember.fx.wrap on the definition
    """
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    if not any(g is frame.f_globals and n == name for g, n in _wrapped):
        _wrapped.append((frame.f_globals, name))
    return fn_or_name


# NOTE [ What tracing patches ]
# torch's Proxy takes part in `__torch_function__`, so `torch.relu(proxy)` reaches the tracer. ember's
# public functions have no such hook (their first step is the op), so tracing patches, for the length of
# one trace, the lookups a model's code goes through and restores them afterwards:
# - the public functions of `ember`, `ember.nn.functional`, `ember.linalg`, `ember.fft` and `ember.special`:
#   each is wrapped so that a call with a Proxy among its arguments becomes a call_function node whose
#   target is the original function (`torch.relu(x)`, `F.relu(x)` look the name up at call time);
# - `Module.__call__`, which becomes `Tracer.call_module` (a node for a leaf module, else its forward
#   traced through), and `Module.__getattr__`, which turns a parameter or buffer read into a get_attr node;
# - the functions named by `wrap`, and the `math` functions (and `autowrap_functions`) found in the
#   traced function's globals, as torch autowraps them.
# A name bound before tracing (`from ember import relu` at import) escapes the first kind; call it through
# its module or `wrap` it.


class _Patcher:
    def __init__(self):
        self._undo: list[tuple[Any, str, Any, bool]] = []

    def patch(self, owner, name: str, new) -> None:
        is_dict = isinstance(owner, dict)
        old = owner.get(name, _MISSING) if is_dict else owner.__dict__.get(name, _MISSING)
        self._undo.append((owner, name, old, is_dict))
        if is_dict:
            owner[name] = new
        else:
            setattr(owner, name, new)

    def restore(self) -> None:
        for owner, name, old, is_dict in reversed(self._undo):
            if is_dict and old is _MISSING:
                del owner[name]
            elif is_dict:
                owner[name] = old
            elif old is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, old)
        self._undo.clear()


_MISSING = object()


def _find_tracer(args, kwargs):
    found = []

    def look(a):
        if isinstance(a, Proxy) and not found:
            found.append(a.tracer)
        return a
    map_aggregate((args, kwargs), look)
    return found[0] if found else None


def _recording(fn: Callable, wrapped: bool = False) -> Callable:
    """`fn`, recording a call_function node when a Proxy is among its arguments."""
    @functools.wraps(fn)
    def recorder(*args, **kwargs):
        tracer = _find_tracer(args, kwargs)
        if tracer is None:
            return fn(*args, **kwargs)
        proxy = tracer.create_proxy("call_function", fn, args, kwargs)
        if wrapped:
            proxy.node.meta["is_wrapped"] = True
        return proxy
    recorder.__fx_original__ = fn
    return recorder


def _public_functions(module) -> list[str]:
    return [k for k, v in list(module.__dict__.items())
            if not k.startswith("__") and isinstance(v, (types.FunctionType, types.BuiltinFunctionType))
            and not getattr(v, "__fx_original__", None)]


class Tracer(TracerBase):
    """Turns a Module or function into a Graph by running it on Proxies (see the module docstring).

    Subclass it to change what is traced: `is_leaf_module` (which modules stay one node), `call_module`,
    `create_arg` (how constants enter the graph), `getattr`.

    Args:
        autowrap_modules: modules whose functions, found in the traced code's globals, are recorded whole
            (default: `math`).
        autowrap_functions: functions recorded whole wherever they are called from the traced globals.
        param_shapes_constant: (accepted for torch's signature; parameter shapes are always concrete here).
    """

    def __init__(self, autowrap_modules: tuple = (math,), autowrap_functions: tuple = (),
                 param_shapes_constant: bool = False):
        self._autowrap_modules = tuple(autowrap_modules)
        self._autowrap_ids = {id(v) for m in autowrap_modules for k, v in m.__dict__.items()
                              if not k.startswith("_") and callable(v)}
        self._autowrap_ids |= {id(f) for f in autowrap_functions}
        self.param_shapes_constant = param_shapes_constant
        self.graph: Graph | None = None
        self.root = None
        self.submodule_paths: dict | None = None
        self.tensor_attrs: dict = {}

    # ---- making nodes ------------------------------------------------------------------------------------
    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None) -> Node:
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs), name, type_expr)
        return proxy_factory_fn(node) if proxy_factory_fn is not None else self.proxy(node)

    def create_arg(self, a: Any):
        """How a value enters the graph: Proxies as their nodes, parameters and buffers as get_attr nodes,
        other tensors as constants held by the root (`_tensor_constant0`), containers element-wise."""
        from .._tensor import Tensor
        from ..nn.modules.module import Module

        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Tensor):
            path = self.tensor_attrs.get(id(a))
            if path is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                path = f"_tensor_constant{i}"
                setattr(self.root, path, a)
                self.tensor_attrs[id(a)] = path
            return self.create_node("get_attr", path, (), {})
        if isinstance(a, Module):
            raise RuntimeError("Unsupported node type: Module passed as an argument")
        if isinstance(a, (tuple, list, dict, slice)):
            return map_aggregate(a, lambda x: x if isinstance(x, (tuple, list, dict, slice))
                                 else self.create_arg(x))
        return a

    # ---- modules -----------------------------------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        """Whether module `m` becomes one call_module node: by default ember's (torch's) own nn layers,
        except the containers."""
        from ..nn.modules.container import Sequential

        mod = type(m).__module__
        return (mod.startswith(("ember.nn", "torch.nn")) and not isinstance(m, Sequential))

    def path_of_module(self, mod) -> str:
        path = self.submodule_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward: Callable, args: tuple, kwargs: dict):
        """A module call during tracing: a call_module node for a leaf, else its forward traced through."""
        path = self.path_of_module(m)
        if not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict):
        """A module attribute read during tracing: a parameter or buffer becomes a get_attr Proxy."""
        from .._tensor import Tensor

        if isinstance(attr_val, Tensor):
            path = self.tensor_attrs.get(id(attr_val))
            if path is not None:
                if path not in parameter_proxy_cache:
                    parameter_proxy_cache[path] = self.create_proxy("get_attr", path, (), {})
                return parameter_proxy_cache[path]
        return attr_val

    # ---- the trace ---------------------------------------------------------------------------------------
    def create_args_for_root(self, fn: Callable, is_module: bool, concrete_args: dict | None) -> list:
        """One placeholder Proxy per parameter of `fn` (after `self`), or the concrete value given."""
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[1 if is_module else 0:]
        concrete_args = dict(concrete_args or {})
        args, kwargs = [], {}
        for p in params:
            if p.name in concrete_args and concrete_args[p.name] is not PH:
                value = concrete_args[p.name]
                self._specialize(p.name, value)
            elif p.kind is p.VAR_POSITIONAL or p.kind is p.VAR_KEYWORD:
                continue
            else:
                value = self.proxy(self.graph.placeholder(p.name, default_value=p.default))
            if p.kind is p.KEYWORD_ONLY:
                kwargs[p.name] = value
            else:
                args.append(value)
        return args, kwargs

    def _specialize(self, name: str, value) -> None:
        """A concrete argument stays an input, checked at run time to have the value the trace assumed."""
        msg = f"{name} has been specialized to have value {value} but got another value"
        if value is None:
            ph = self.graph.placeholder(f"{name}_1", default_value=None)
            self.create_node("call_function", _assert_is_none, (ph, msg), {})
        else:
            ph = self.graph.placeholder(f"{name}_1")
            eq = self.create_node("call_function", operator.eq, (ph, value), {})
            self.create_node("call_function", _assert, (eq, msg), {})

    def trace(self, root, concrete_args: dict | None = None) -> Graph:
        """Trace `root` (a Module or a function) and return its Graph (`self.root` holds the attributes)."""
        from ..nn.modules.module import Module

        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            is_module = True
        else:
            self.root = Module()
            fn = root
            is_module = False
        self.graph = Graph(tracer_cls=type(self))
        self.submodule_paths = {id(m): name for name, m in self.root.named_modules()}
        self.tensor_attrs = {}
        for name, p in self.root.named_parameters():
            self.tensor_attrs.setdefault(id(p), name)
        for name, b in self.root.named_buffers():
            self.tensor_attrs.setdefault(id(b), name)
        args, kwargs = self.create_args_for_root(fn, is_module, concrete_args)
        patcher = _Patcher()
        try:
            self._patch(patcher, fn)
            result = fn(self.root, *args, **kwargs) if is_module else fn(*args, **kwargs)
        finally:
            patcher.restore()
        self.create_node("output", "output", (self.create_arg(result),), {})
        return self.graph

    def _patch(self, patcher: _Patcher, fn: Callable) -> None:
        import ember

        from ..nn.modules.module import Module

        for name, mod in (("ember", ember), ("nn.functional", None), ("linalg", None), ("fft", None),
                          ("special", None)):
            mod = mod or sys.modules.get("ember." + name)
            if mod is None:
                continue
            for k in _public_functions(mod):
                patcher.patch(mod, k, _recording(mod.__dict__[k]))
        tracer = self
        orig_call, orig_getattr = Module.__call__, Module.__getattr__
        cache: dict = {}

        def module_call_wrapper(mod, *args, **kwargs):
            def forward(*a, **k):
                return orig_call(mod, *a, **k)
            return tracer.call_module(mod, forward, args, kwargs)

        def module_getattr_wrapper(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), cache)
        patcher.patch(Module, "__call__", module_call_wrapper)
        patcher.patch(Module, "__getattr__", module_getattr_wrapper)
        fn_globals = getattr(inspect.unwrap(fn), "__globals__", {})
        for g, name in _wrapped:
            if name in g:
                patcher.patch(g, name, _recording(g[name], wrapped=True))
            elif name in builtins.__dict__:
                patcher.patch(g, name, _recording(builtins.__dict__[name], wrapped=True))
        for k, v in list(fn_globals.items()):
            if id(v) in self._autowrap_ids and not getattr(v, "__fx_original__", None):
                patcher.patch(fn_globals, k, _recording(v, wrapped=True))
        for m in self._autowrap_modules:
            for k, v in list(m.__dict__.items()):
                if not k.startswith("_") and callable(v) and not isinstance(v, type):
                    patcher.patch(m, k, _recording(v, wrapped=True))


def symbolic_trace(root, concrete_args: dict | None = None) -> GraphModule:
    """Trace a Module (or function) into a `GraphModule` (see the module docstring).

    Args:
        root: the Module or function to trace.
        concrete_args: inputs fixed to a value (not graph inputs); control flow may depend on them.

    Example::

        >>> gm = ember.fx.symbolic_trace(model)
        >>> print(gm.code)
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    is_function = isinstance(root, (types.FunctionType, types.MethodType))
    name = root.__name__ if is_function else type(root).__name__
    return GraphModule(tracer.root, graph, name)

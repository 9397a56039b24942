"""ScriptModule / ScriptFunction: a recorded graph that replays, and the decorators scripts use.

A `ScriptFunction` holds one `ember.fx.GraphModule` (the graph `torch.jit.trace` or `torch.jit.script`
recorded) and calls it; `.graph` and `.code` are that graph and its generated Python. A
`RecursiveScriptModule` is an `nn.Module` that *shares* the parameter, buffer and submodule dicts of its
GraphModule (NOTE [ A script module shares its graph module's state ]), so the parameters stay live
attributes: an optimizer step, `load_state_dict` or `module.weight.data.fill_()` changes what the next call
computes, as in torch.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any, NamedTuple

from .._tensor import Tensor
from ..nn.modules.module import Module

__all__ = ["ScriptModule", "RecursiveScriptModule", "ScriptFunction", "ScriptMethod", "TracedModule",
           "TopLevelTracedModule", "Attribute", "annotate", "ignore", "unused", "export", "is_scripting",
           "is_tracing", "Error", "TracerWarning", "TracingCheckError", "Final"]


class TracerWarning(Warning):
    """torch.jit.TracerWarning: a trace baked in a Python value (a branch on a tensor, `.item()`, ...)."""

    @staticmethod
    def ignore_lib_warnings():
        import warnings

        warnings.filterwarnings("ignore", category=TracerWarning, module="ember.(?!jit)")


class Error(RuntimeError):
    """torch.jit.Error (torch's JITException): an error raised from inside a scripted function."""


class TracingCheckError(Exception):
    """torch.jit.TracingCheckError: `check_trace` found that a retrace recorded another graph."""

    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n"
            self.message += "\n".join("\t" + ln for ln in graph_diff_error.splitlines()) + "\n"
        if tensor_compare_error is not None:
            self.message += ("ERROR: Tensor-valued Constant nodes differed in value across invocations. This "
                             "often indicates that the tracer has encountered untraceable code.\n")
            self.message += "\n".join("\t" + ln for ln in tensor_compare_error.splitlines()) + "\n"
        super().__init__(self.message)


# --- state the decorators and predicates read --------------------------------------------------------------

_state = threading.local()


def is_tracing() -> bool:
    """True while `torch.jit.trace` runs the function it records (torch.jit.is_tracing)."""
    return getattr(_state, "tracing", 0) > 0


def is_scripting() -> bool:
    """False in Python (torch.jit.is_scripting): ember runs scripted code as Python, captured by
    `ember.compile`, so there is no TorchScript interpreter for which this would be True."""
    return False


def _set_attr(fn, name, value):
    setattr(fn, name, value)
    return fn


def ignore(drop=False, **kwargs):
    """`@torch.jit.ignore` (or `@torch.jit.ignore(drop=True)`): script leaves the function as a Python call.
    ember's capture runs such a call in Python (a graph break) instead of capturing it."""
    import warnings

    if callable(drop):
        return _set_attr(drop, "_torchscript_modifier", "ignore")
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}", FutureWarning, stacklevel=2)
        drop = drop_on_export
    elif drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function call on "
                      "compilation. Use torch.jit.unused now. {}", FutureWarning, stacklevel=2)

    def decorator(fn):
        return _set_attr(fn, "_torchscript_modifier", "unused" if drop else "ignore")
    return decorator


def unused(fn):
    """`@torch.jit.unused`: script replaces the body with a raise; the Python function still runs eagerly."""
    if isinstance(fn, property):
        _set_attr(fn.fget, "_torchscript_modifier", "unused")
        return fn
    return _set_attr(fn, "_torchscript_modifier", "unused")


def export(fn):
    """`@torch.jit.export`: a method script compiles too (besides `forward`); ember keeps it as a method."""
    return _set_attr(fn, "_torchscript_modifier", "export")


def annotate(the_type, the_value):
    """torch.jit.annotate: a type hint for the TorchScript compiler; in Python it returns the value."""
    return the_value


class Attribute(NamedTuple):
    """torch.jit.Attribute(value, type): declares a module attribute's type for the TorchScript compiler;
    in Python (as in torch's eager mode) the named tuple itself."""

    value: Any
    type: Any


class _FinalType:
    def __getitem__(self, item):
        return item


Final = _FinalType()


# NOTE [ A script module shares its graph module's state ]
# torch's TracedModule copies the module's attributes into C++ slots that alias the same tensors. Here the
# GraphModule that holds the recorded graph already owns the module's parameters and buffers (the same
# Parameter objects: the graph reads them through get_attr nodes, never as baked constants). The script
# module takes the GraphModule's `_parameters`, `_buffers` and `_modules` dicts as its own, so `state_dict`,
# `parameters()`, `.to()`, `train()`/`eval()` and attribute assignment on either act on one state, and the
# generated forward (which reads `self.fc.weight`) runs against that state on every call.


class ScriptModule(Module):
    """torch.jit.ScriptModule: the base class of scripted and traced modules."""

    @property
    def graph(self):
        return self._c.graph

    @property
    def inlined_graph(self):
        return self._c.graph

    @property
    def code(self) -> str:
        return self._c.code

    @property
    def code_with_constants(self):
        return self._c.code, {}

    def save(self, f, **kwargs):
        from ._serialization import save

        return save(self, f, **kwargs)

    def _replicate_for_data_parallel(self):
        return self


class RecursiveScriptModule(ScriptModule):
    """A module whose `forward` is a recorded graph (what trace, script and load return for a Module)."""

    def __init__(self, gm, original_name: str, example_inputs=None):
        super().__init__()
        object.__setattr__(self, "_c", gm)
        for key in ("_parameters", "_buffers", "_modules"):
            object.__setattr__(self, key, gm.__dict__[key])
        object.__setattr__(self, "original_name", original_name)
        self.training = gm.training
        object.__setattr__(self, "_example_inputs", example_inputs)
        object.__setattr__(self, "_replay", _Replay(gm))

    def forward(self, *args):
        return self._replay(*args)

    def train(self, mode: bool = True):
        super().train(mode)
        self._c.training = mode
        return self

    def extra_repr(self):
        return f"original_name={self.original_name}"

    def _get_name(self):
        return self.original_name


class TracedModule(RecursiveScriptModule):
    """torch.jit.TracedModule: what `torch.jit.trace(module, ...)` returns (through TopLevelTracedModule)."""


class TopLevelTracedModule(TracedModule):
    """torch.jit.TopLevelTracedModule."""


class ScriptMethod:
    """torch.ScriptMethod: a scripted method bound to its module."""

    def __init__(self, module, name):
        self.owner, self.name = module, name

    def __call__(self, *args, **kwargs):
        return getattr(self.owner._c, self.name)(*args, **kwargs)


class ScriptFunction:
    """torch.jit.ScriptFunction: a traced or scripted function; calling it replays its graph."""

    def __init__(self, gm, name: str, fn=None):
        self._c, self.name, self._fn = gm, name, fn
        self.__name__ = self.__qualname__ = name
        self._replay = _Replay(gm)

    @property
    def graph(self):
        return self._graph_module().graph

    @property
    def code(self) -> str:
        return self._graph_module().code

    @property
    def inlined_graph(self):
        return self.graph

    def _graph_module(self):
        return self._c

    def __call__(self, *args):
        return self._replay(*args)

    def save(self, f, **kwargs):
        from ._serialization import save

        return save(self, f, **kwargs)

    def __repr__(self):
        return f"<ember.jit.ScriptFunction object {self.name}>"


# NOTE [ A trace per input shape ]
# torch's tracer records sizes as values computed from the inputs (`aten::size`), so a trace made on a batch
# of 2 runs a batch of 3. ember's dispatch-level tracer records concrete sizes (`view(x, (2, 75))`). So a
# traced object keeps one graph per input signature (shapes and dtypes of the tensor leaves): a call with a
# new signature traces the Python function again on the new inputs (warnings are not repeated) and keeps
# that graph too. The graph of the example inputs stays `.graph`. Where torch's trace would have baked a
# *size* read in Python (`len(x)`, with its TracerWarning) into the first graph, the new graph reads the new
# size instead; value-dependent decisions are taken again on the new inputs as well. An object without its
# Python function (loaded from an archive, or frozen) runs its one graph and refuses another signature with
# an error naming the traced shapes, never a wrong result.

class _Replay:
    """Calls a traced graph on a call's flattened tensor arguments, keeping a graph per input signature."""

    def __init__(self, gm, key=None, retrace=None):
        self.graphs = {key: gm}
        self.first, self.retrace = key, retrace

    def __call__(self, *args):
        leaves = _leaves(args, [])
        if self.first is None:
            return self.graphs[None](*leaves)
        key = _signature(leaves)
        gm = self.graphs.get(key)
        if gm is None:
            if self.retrace is None:
                raise RuntimeError(f"this graph was traced for inputs {_show(self.first)} and cannot run "
                                   f"{_show(key)}: it holds sizes of the traced inputs and no Python function "
                                   "to trace again")
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                gm = self.graphs[key] = self.retrace(args)
        return gm(*leaves)


def _signature(leaves) -> tuple:
    return tuple((tuple(t.shape), t.dtype) for t in leaves)


def _show(key) -> str:
    return ", ".join(f"{list(shape)} {dtype}" for shape, dtype in key)


def _leaves(args, out: list) -> list:
    """The tensors in nested tuples/lists/dicts, in order: a graph's placeholders for a call's arguments."""
    if isinstance(args, Tensor):
        out.append(args)
    elif isinstance(args, (tuple, list)):
        for a in args:
            _leaves(a, out)
    elif isinstance(args, dict):
        for a in args.values():
            _leaves(a, out)
    return out



def _signature_names(fn, n: int) -> list[str]:
    try:
        ps = [p.name for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        ps = []
    return (ps + [f"input_{i}" for i in range(len(ps), n)])[:n]

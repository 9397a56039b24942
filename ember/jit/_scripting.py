"""`torch.jit.script` on ember's bytecode capture (`ember.compile`).

torch compiles a function's source into TorchScript, a statically typed subset of Python with its own
interpreter, so that `if x.sum() > 0:` stays a branch of the graph. ember has no second language: a scripted
function or module is captured by `ember.compile` (backend "eager") on each call's input types, and the
graphs it records are what `.graph` / `.code` show (NOTE [ Script keeps tensor control flow live ]).
"""

from __future__ import annotations

import warnings

from ..nn.modules.module import Module
from ._script import RecursiveScriptModule, ScriptFunction, ScriptModule

__all__ = ["script", "script_if_tracing"]


# NOTE [ Script keeps tensor control flow live ]
# TorchScript keeps a branch on a tensor's value as an `prim::If` in its graph. ember's capture cannot put a
# branch in a graph; it graph-breaks there: the graph before the branch runs, Python decides the branch on
# the real value, and capture resumes after it. So a scripted function is never specialized to the branch
# its first call took (unlike a trace), and results equal eager for every input. The price: such code is
# several graphs, and `.graph` shows the first one captured (`.graphs` lists all). `fullgraph` is off for the
# same reason: `@torch.jit.ignore`d calls, which TorchScript leaves to Python, must run in Python too.


class _Recorder:
    """A backend that keeps every graph capture hands it, then runs it eagerly (backend "eager")."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward


def _not_run_yet(name):
    return RuntimeError(f"ember records '{name}' on its first call (capture needs the inputs' types): call it "
                        "once before reading .graph or .code")


class _ScriptedFunction(ScriptFunction):
    """What `torch.jit.script(fn)` returns: `fn` under `ember.compile`, with the graphs it recorded."""

    def __init__(self, fn):
        from .._compile import compile as _compile

        self._recorder = _Recorder()
        super().__init__(_compile(fn, backend=self._recorder), getattr(fn, "__name__", "fn"), fn)

    @property
    def graphs(self):
        return [gm.graph for gm in self._recorder.graphs]

    def _graph_module(self):
        if not self._recorder.graphs:
            raise _not_run_yet(self.name)
        return self._recorder.graphs[0]

    def __call__(self, *args, **kwargs):
        return self._c(*args, **kwargs)

    def save(self, f, **kwargs):
        raise RuntimeError("ember.jit.save writes traced functions and modules (one graph); a scripted function "
                           "is guarded Python capture with no single graph to write: trace it instead")


class _ScriptedModule(RecursiveScriptModule):
    """What `torch.jit.script(module)` returns: shares the module's state; `forward` (and `@export`ed
    methods) run under `ember.compile`; other attributes are the original module's."""

    def __init__(self, module):
        from .._compile import compile as _compile

        ScriptModule.__init__(self)
        for key in ("_parameters", "_buffers", "_modules"):
            object.__setattr__(self, key, module.__dict__[key])
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "original_name", type(module).__name__)
        self.training = module.training
        recorder = _Recorder()
        object.__setattr__(self, "_recorder", recorder)
        object.__setattr__(self, "_forward", _compile(module, backend=recorder))
        for name in dir(type(module)):
            fn = getattr(type(module), name, None)
            if getattr(fn, "_torchscript_modifier", None) == "export":
                object.__setattr__(self, name, _compile(getattr(module, name), backend=recorder))

    @property
    def _c(self):
        if not self._recorder.graphs:
            raise _not_run_yet("forward")
        return self._recorder.graphs[0]

    @property
    def graphs(self):
        return [gm.graph for gm in self._recorder.graphs]

    def forward(self, *args, **kwargs):
        return self._forward(*args, **kwargs)

    def train(self, mode: bool = True):
        Module.train(self, mode)
        self._module.training = mode
        return self

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_module"], name)

    def save(self, f, **kwargs):
        raise RuntimeError("ember.jit.save writes traced functions and modules (one graph); a scripted module "
                           "is guarded Python capture with no single graph to write: trace it instead")


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """torch.jit.script: `obj` (a function or an nn.Module) captured by `ember.compile` on each call.

    Already scripted or traced objects are returned as they are. See NOTE [ Script keeps tensor control
    flow live ] for how this differs from TorchScript.
    """
    warnings.warn("`torch.jit.script` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning, stacklevel=2)
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if isinstance(obj, Module):
        return _ScriptedModule(obj)
    if isinstance(obj, type):
        raise RuntimeError("ember does not script classes (TorchScript classes need the TorchScript compiler); "
                           "use the class in Python")
    if not callable(obj):
        raise RuntimeError(f"ember cannot script a {type(obj).__name__}: expected a function or an nn.Module")
    return _ScriptedFunction(obj)


def script_if_tracing(fn):
    """torch.jit.script_if_tracing: in torch, `fn` is scripted when a trace calls it, so its control flow
    survives the trace. ember's trace records ops only (a branch inside `fn` is baked in, with a
    TracerWarning where a tensor decides it), so this returns `fn` itself."""
    return fn

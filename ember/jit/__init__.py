"""ember.jit: torch.jit's API over ember's graph capture.

- `trace` / `trace_module` record the ops one run executes (`make_fx`, real values) into an `ember.fx`
  graph; parameters stay the module's live attributes; Python decisions on tensor values warn with torch's
  `TracerWarning` (`_trace.py`).
- `script` runs a function or module under `ember.compile` (bytecode capture), so control flow on tensor
  values stays live instead of being baked in (`_scripting.py`).
- `save` / `load` use ember's own zip archive; torch's TorchScript archives cannot be read (they hold code
  for torch's C++ interpreter) (`_serialization.py`).
- `freeze` / `optimize_for_inference` fold parameters into the graph's constants (`_trace.py`).

See docs/architecture.md, "torch.jit".
"""

from ._script import Attribute as Attribute
from ._script import Error as Error
from ._script import Final as Final
from ._script import RecursiveScriptModule as RecursiveScriptModule
from ._script import ScriptFunction as ScriptFunction
from ._script import ScriptMethod as ScriptMethod
from ._script import ScriptModule as ScriptModule
from ._script import TopLevelTracedModule as TopLevelTracedModule
from ._script import TracedModule as TracedModule
from ._script import TracerWarning as TracerWarning
from ._script import TracingCheckError as TracingCheckError
from ._script import annotate as annotate
from ._script import export as export
from ._script import ignore as ignore
from ._script import is_scripting as is_scripting
from ._script import is_tracing as is_tracing
from ._script import unused as unused
from ._scripting import script as script
from ._scripting import script_if_tracing as script_if_tracing
from ._serialization import load as load
from ._serialization import save as save
from ._trace import freeze as freeze
from ._trace import optimize_for_inference as optimize_for_inference
from ._trace import run_frozen_optimizations as run_frozen_optimizations
from ._trace import trace as trace
from ._trace import trace_module as trace_module

__all__ = ["Attribute", "Error", "Final", "RecursiveScriptModule", "ScriptFunction", "ScriptMethod",
           "ScriptModule", "TopLevelTracedModule", "TracedModule", "TracerWarning", "TracingCheckError",
           "annotate", "export", "freeze", "ignore", "is_scripting", "is_tracing", "load",
           "optimize_for_inference", "run_frozen_optimizations", "save", "script", "script_if_tracing", "trace",
           "trace_module", "unused"]

"""ember.fx: torch.fx's graph IR and symbolic tracer.

`Graph` and `Node` (the IR), `GraphModule` (a Module running a graph's generated Python), `Interpreter` /
`Transformer` (walk a graph node by node), `symbolic_trace` / `Tracer` / `Proxy` / `wrap` (make a graph by
running a Module on Proxies). Graphs made at the dispatcher (`ember.fx.experimental.proxy_tensor.make_fx`)
and by AOT autograd are the same IR with `ember.ops.aten` targets. See docs/architecture.md, "Compiler:
graphs, fake tensors, AOT".
"""

from ._symbolic_trace import PH as PH
from ._symbolic_trace import Tracer as Tracer
from ._symbolic_trace import has_side_effect as has_side_effect
from ._symbolic_trace import symbolic_trace as symbolic_trace
from ._symbolic_trace import wrap as wrap
from .graph import Graph as Graph
from .graph_module import GraphModule as GraphModule
from .interpreter import Interpreter as Interpreter
from .interpreter import Transformer as Transformer
from .node import Node as Node
from .node import map_arg as map_arg
from .proxy import Proxy as Proxy
from .subgraph_rewriter import replace_pattern as replace_pattern

__all__ = ["replace_pattern", "has_side_effect", "Graph", "GraphModule", "Interpreter", "Transformer", "Node",
           "map_arg", "Proxy", "PH", "Tracer", "symbolic_trace", "wrap"]

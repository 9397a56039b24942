"""`Interpreter` and `Transformer`: run a GraphModule's graph node by node, one method per node kind.

`Interpreter(gm).run(*args)` evaluates the graph in Python: each node's arguments are looked up in an
environment of values computed so far, and the method named after the node's kind (`placeholder`,
`get_attr`, `call_function`, `call_method`, `call_module`, `output`) computes its value. Overriding one of
them changes what a node does (shape propagation, profiling, running on other values). Values are dropped
after their last use, as the generated code does.

`Transformer` is an Interpreter whose values are `Proxy`s of a new graph: running it copies the graph,
each overridden method able to emit something else in a node's place (`transform()` returns the new
GraphModule).
"""

from __future__ import annotations

from typing import Any

from .graph import Graph
from .graph_module import GraphModule
from .node import Node, map_aggregate, map_arg

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs a GraphModule's graph node by node (see the module docstring).

    Args:
        module: the GraphModule (or Module with a `.graph`) to run.
        garbage_collect_values: drop each value after its last use.
        graph: a graph to run instead of `module.graph` (targets are still looked up on `module`).
    """

    def __init__(self, module, garbage_collect_values: bool = True, graph: Graph | None = None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.user_to_last_uses: dict[Node, list] = {}
        if garbage_collect_values:
            seen: set = set()
            for node in reversed(list(self.graph.nodes)):
                for n in node.all_input_nodes:
                    if n not in seen:
                        seen.add(n)
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env: dict | None = None, enable_io_processing: bool = True) -> Any:
        """Evaluate the graph on `args` (one per placeholder; `*args` placeholders take the rest)."""
        self.env = dict(initial_env) if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback and not getattr(e, "_fx_noted", False):
                    msg = f"While executing {node.format_node()}"
                    if hasattr(e, "add_note"):
                        e.add_note(msg)
                    e._fx_noted = True
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    self.env.pop(dead, None)
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n: Node) -> Any:
        """Compute node `n`'s value: fetch its arguments, call the method named after its kind."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # ---- one method per node kind ----------------------------------------------------------------------
    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Any:
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed "
                               "in!") from None

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)

    def call_function(self, target, args: tuple, kwargs: dict) -> Any:
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args: tuple, kwargs: dict) -> Any:
        return args[0]

    # ---- helpers ------------------------------------------------------------------------------------
    def fetch_attr(self, target: str) -> Any:
        """`self.module.<target>` for a dotted path, with torch's error for a missing attribute."""
        obj = self.module
        parts = target.split(".")
        for i, atom in enumerate(parts):
            if not hasattr(obj, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(parts[:i + 1])}")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple:
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n: Node):
        def load(a):
            if a not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {a}! Run Graph.lint() to diagnose "
                                   "such issues")
            return self.env[a]
        return map_arg(args, load)


class Transformer(Interpreter):
    """An Interpreter that builds a new graph: each method returns a `Proxy` in the new graph, so
    overriding one replaces what a node becomes (`transform()` gives the new GraphModule)."""

    def __init__(self, module):
        super().__init__(module, garbage_collect_values=False)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: str, args: tuple, kwargs: dict):
        from .proxy import Proxy

        g = self.new_graph
        n = g.placeholder(target, default_value=args[0]) if args else g.placeholder(target)
        return Proxy(n, self.tracer)

    def get_attr(self, target: str, args: tuple, kwargs: dict):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict):
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def call_function(self, target, args: tuple, kwargs: dict):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict):
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def run_node(self, n: Node):
        out = super().run_node(n)
        from .proxy import Proxy

        if isinstance(out, Proxy) and n.op != "placeholder":
            out.node.meta = dict(n.meta)
        return out

    def transform(self) -> GraphModule:
        """Run the transformation and return the GraphModule of the new graph."""
        from .proxy import Proxy

        result = self._run_all()
        self.new_graph.output(map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a))
        return GraphModule(self.module, self.new_graph)

    def _run_all(self):
        self.env = {}
        for node in self.graph.nodes:
            if node.op == "output":
                args, _ = self.fetch_args_kwargs_from_env(node)
                return args[0]
            self.env[node] = self.run_node(node)
        return None


class _TransformerTracer:
    """The small part of a Tracer a Transformer needs: make nodes in the new graph from proxied args."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.root = None

    def create_arg(self, a):
        from .proxy import Proxy

        return map_aggregate(a, lambda x: x.node if isinstance(x, Proxy) else x)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        from .proxy import Proxy

        node = self.graph.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs), name,
                                      type_expr)
        return Proxy(node, self)

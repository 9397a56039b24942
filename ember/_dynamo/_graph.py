"""The graph capture records into: torch.fx's `Graph`/`Node`/`GraphModule` API, the subset capture uses.

NOTE [ Capture's graph before ember.fx ]
Capture is written against torch.fx's API (`graph.placeholder`, `graph.call_function`, `graph.call_method`,
`graph.output`, `node.meta["example_value"]`, `GraphModule(root, graph)`, `.code`, `print_readable`).
`ember.fx` (engineer X's area) provides the full IR; when it is importable, `output_graph.py` uses it and
this file is unused. Until then this file is that subset, so capture, its tests and the backends that take
`(gm, example_inputs)` work on their own. Only names that exist in torch.fx are used here, so swapping in
`ember.fx` changes no caller.
"""

from __future__ import annotations

import operator


class Node:
    def __init__(self, graph, name, op, target, args, kwargs):
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self.args, self.kwargs = tuple(args), dict(kwargs)
        self.meta = {}
        self.users = {}

    def __repr__(self):
        return self.name


def _target_name(target):
    if isinstance(target, str):
        return target
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    if mod in ("_operator", "operator"):
        return f"operator.{name}"
    mod = mod.replace("ember._ops.", "ember.").replace("ember.nn.functional.", "ember.nn.functional.")
    return f"{mod}.{name}" if mod else name


class Graph:
    def __init__(self):
        self.nodes = []
        self._names = {}

    def _unique(self, base):
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "node"
        if base[0].isdigit():
            base = "_" + base
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def create_node(self, op, target, args=(), kwargs=None, name=None):
        if name is None:
            name = target if isinstance(target, str) else getattr(target, "__name__", "node")
        node = Node(self, self._unique(name), op, target, args, kwargs or {})
        for a in _flatten((node.args, node.kwargs)):
            if isinstance(a, Node):
                a.users[node] = None
        self.nodes.append(node)
        return node

    def placeholder(self, name):
        return self.create_node("placeholder", name, name=name)

    def call_function(self, target, args=(), kwargs=None):
        return self.create_node("call_function", target, args, kwargs)

    def call_method(self, name, args=(), kwargs=None):
        return self.create_node("call_method", name, args, kwargs)

    def output(self, result):
        return self.create_node("output", "output", (result,), name="output")

    def eliminate_dead_code(self):
        """Drops nodes nothing uses (ops are pure here except in-place ones, which are kept)."""
        changed = True
        while changed:
            changed = False
            for node in reversed(self.nodes):
                if node.op in ("placeholder", "output") or node.users:
                    continue
                if node.op == "call_method" and str(node.target).endswith("_") or node.meta.get("impure"):
                    continue
                self.nodes.remove(node)
                for a in _flatten((node.args, node.kwargs)):
                    if isinstance(a, Node):
                        a.users.pop(node, None)
                changed = True

    def python_code(self, root_module="self"):
        globals_, lines, ph = {}, [], []

        def fmt(a):
            if isinstance(a, Node):
                return a.name
            if isinstance(a, tuple):
                return "(" + "".join(fmt(x) + ", " for x in a) + ")"
            if isinstance(a, list):
                return "[" + ", ".join(fmt(x) for x in a) + "]"
            if isinstance(a, dict):
                return "{" + ", ".join(f"{k!r}: {fmt(v)}" for k, v in a.items()) + "}"
            if isinstance(a, slice):
                return f"slice({fmt(a.start)}, {fmt(a.stop)}, {fmt(a.step)})"
            if a is None or isinstance(a, (bool, int, float, str)):
                return repr(a) if not (isinstance(a, float) and a != a or a in (float("inf"), -float("inf"))) \
                    else f"float({str(a)!r})"
            key = f"_c{len(globals_)}"
            globals_[key] = a
            return key

        for node in self.nodes:
            if node.op == "placeholder":
                ph.append(node.name)
                continue
            if node.op == "output":
                lines.append(f"return {fmt(node.args[0])}")
                continue
            args = ", ".join([fmt(a) for a in node.args] + [f"{k} = {fmt(v)}" for k, v in node.kwargs.items()])
            if node.op == "call_method":
                self_, rest = node.args[0], node.args[1:]
                args = ", ".join([fmt(a) for a in rest] + [f"{k} = {fmt(v)}" for k, v in node.kwargs.items()])
                lines.append(f"{node.name} = {fmt(self_)}.{node.target}({args})")
                continue
            fn = _target_name(node.target)
            key = "".join(c if c.isalnum() else "_" for c in fn)
            while key in globals_ and globals_[key] is not node.target:
                key += "_"
            globals_[key] = node.target
            lines.append(f"{node.name} = {key}({args});  # {fn}" if key != fn else f"{node.name} = {key}({args})")
        body = "\n".join("    " + ln for ln in lines) or "    pass"
        code = f"def forward(self, {''.join(p + ', ' for p in ph)}):\n{body}\n"
        return code, globals_

    def print_tabular(self):
        for n in self.nodes:
            print(f"{n.op:<14} {n.name:<20} {_target_name(n.target):<40} {n.args} {n.kwargs}")


def _flatten(x):
    if isinstance(x, (tuple, list)):
        for v in x:
            yield from _flatten(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _flatten(v)
    elif isinstance(x, slice):
        yield from _flatten((x.start, x.stop, x.step))
    else:
        yield x


def _module_base():
    from ..nn import Module

    return Module


class GraphModule:  # replaced by a Module subclass on first use (nn loads lazily)
    pass


def make_graph_module(root, graph, name="GraphModule"):
    """`GraphModule(root, graph)`: a Module whose forward is the graph's generated Python code."""
    Module = _module_base()
    global GraphModule
    if GraphModule.__bases__ == (object,):
        class GraphModule(Module):  # noqa: F811
            def __init__(self, root, graph, class_name="GraphModule"):
                super().__init__()
                self.graph = graph
                self.recompile()

            def recompile(self):
                src, globs = self.graph.python_code()
                globs = dict(globs, operator=operator)
                exec(compile(src, f"<eval_with_key>.{id(self)}", "exec"), globs)
                self._code = src
                self._forward = globs["forward"].__get__(self)

            @property
            def code(self):
                return self._code

            def forward(self, *args):
                return self._forward(*args)

            def print_readable(self, print_output=True):
                text = f"class {type(self).__name__}(ember.nn.Module):\n" + "\n".join(
                    "    " + ln for ln in self._code.splitlines())
                if print_output:
                    print(text)
                return text

        globals()["GraphModule"] = GraphModule
    return GraphModule(root, graph, name)

"""`GraphModule`: an `nn.Module` whose `forward` is the Python code its `Graph` prints as.

It holds the graph, the submodules and attributes the graph's `call_module` / `get_attr` nodes name
(copied from the root it was made from), and a `forward` compiled from `graph.python_code()`. After
changing the graph, `recompile()` makes the code again. The code is registered with `linecache`, so a
traceback through a GraphModule shows the generated lines.
"""

from __future__ import annotations

import linecache

from ..nn.modules.module import Module
from .graph import Graph

__all__ = ["GraphModule"]

_count = [0]


def _exec_forward(src: str, globals_: dict):
    """Compile the generated `forward` under a fake file name that linecache can show."""
    _count[0] += 1
    key = f"<eval_with_key>.{_count[0]}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    g = dict(globals_)
    exec(compile(src, key, "exec"), g)
    return g["forward"]


def _copy_attr(src: Module, dst: Module, target: str) -> None:
    """Copy `src.<target>` (a dotted path) onto `dst`, making empty Modules for the missing prefixes."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(src, item)
        t = getattr(dst, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(dst, item, t)
        src, dst = f, t
    orig = getattr(src, field)
    from .._tensor import Tensor
    from ..nn.parameter import Parameter

    if isinstance(orig, Tensor) and not isinstance(orig, Parameter) and field in getattr(src, "_buffers", {}):
        dst.register_buffer(field, orig)
    else:
        setattr(dst, field, orig)


def _assign_attr(obj, dst: Module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(dst, item, None)
        if t is None:
            t = Module()
            setattr(dst, item, t)
        dst = t
    from .._tensor import Tensor
    from ..nn.parameter import Parameter

    if isinstance(obj, Tensor) and not isinstance(obj, Parameter):
        dst.register_buffer(field, obj)
    else:
        setattr(dst, field, obj)


class GraphModule(Module):
    """A Module made from a root (Module or dict of attributes) and a Graph; `forward` runs the graph.

    Args:
        root: where the graph's `get_attr` and `call_module` targets are found (a Module, or a dict from
            dotted names to objects).
        graph: the graph; it becomes `self.graph` and its code `self.code`.
        class_name: the name the module prints under (`type(gm).__name__`).
    """

    def __new__(cls, *args, **kwargs):
        # Each instance gets its own class, so that `forward` can be set on the class by `recompile`.
        for base in cls.__mro__:
            if base.__dict__.get("_is_graph_module_impl"):
                cls = base.__bases__[0]
                break
        impl = type("GraphModuleImpl", (cls,), {"_is_graph_module_impl": True})
        return super().__new__(impl)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        self.__class__.__qualname__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that target was "
                                           "not provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph

    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        object.__setattr__(self, "_graph", g)
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of `forward`, generated from the graph."""
        return self._code

    def recompile(self):
        """Generate `forward` again from `self.graph` (call it after changing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        object.__setattr__(self, "_code", python_code.src)
        type(self).forward = _exec_forward(python_code.src, python_code.globals)
        return python_code

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False, **kwargs) -> str:
        """The module as a class with its generated `forward`, printed (and returned)."""
        from .. import _naming

        body = self._code.strip("\n").rstrip()
        lines = [f"class {type(self).__name__}({_naming.prefix}.nn.Module):"]
        lines += ["    " + ln if ln else ln for ln in body.splitlines()]
        for name, sub in self.named_children():
            if isinstance(sub, GraphModule):
                inner = sub.print_readable(print_output=False).splitlines()
                inner[0] = inner[0].replace(f"class {type(sub).__name__}", f"class {name}", 1)
                lines += [""] + ["    " + ln for ln in inner]
        out = "\n".join(lines) + "\n"
        if print_output:
            print(out)
        return out

    def __str__(self):
        return (super().__str__() + "\n\n\n" + self._code.strip("\n").rstrip() + "\n    \n"
                "# To see more debug info, please use `graph_module.print_readable()`")

    def __copy__(self):
        return GraphModule(self, self._graph, type(self).__name__)

    def __deepcopy__(self, memo):
        import copy

        fake = Module()
        fake.__dict__ = copy.deepcopy(self.__dict__, memo)
        return GraphModule(fake, fake.__dict__["_graph"], type(self).__name__)

    def __reduce__(self):
        return (_rebuild, (self.__dict__, self._code, type(self).__name__))


def _rebuild(state, code, class_name):
    m = Module()
    m.__dict__.update(state)
    return GraphModule(m, state["_graph"], class_name)


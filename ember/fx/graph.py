"""`Graph`: the fx IR, a list of `Node`s, and the Python code it prints as.

A graph is a straight-line program: its nodes, in order, are the placeholders (inputs), the operations,
and one `output`. It knows nothing of how it was made (symbolic tracing, dispatch-level tracing, a
bytecode capture) and nothing of how it runs: `GraphModule` turns it into Python source (`python_code`)
and compiles that, `Interpreter` walks it node by node.

Names: each node gets a unique Python identifier derived from its target (`relu`, `add_1`, `sum_1`: a
builtin's name is never shadowed, NOTE [ Node names ]). The generated code frees each value after its
last use (`add = lin + p;  lin = p = None`), as torch's does, so a long graph's intermediates die early.
"""

from __future__ import annotations

import builtins
import inspect
import keyword
import operator
import re
from contextlib import contextmanager
from typing import Any, Callable

from .node import Node, _format_arg, map_arg

__all__ = ["Graph", "PythonCode", "magic_methods", "reflectable_magic_methods"]

#: operators printed as Python syntax, as torch's code generator prints them
magic_methods = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}", "ge": "{} >= {}",
    "pos": "+{}", "neg": "-{}", "invert": "~{}", "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}",
    "floordiv": "{} // {}", "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}", "xor": "{} ^ {}",
    "getitem": "{}[{}]", "matmul": "{} @ {}"}
reflectable_magic_methods = {k: v for k, v in magic_methods.items()
                             if k not in ("eq", "ne", "lt", "gt", "le", "ge", "pos", "neg", "invert")}

# NOTE [ Node names ]
# A node's name is a valid identifier made from its target (`self.lin` -> `lin`, `ember.relu` -> `relu`,
# `aten.mul.Tensor` -> `mul`). A name already taken gets the next free `_<n>` suffix (`add`, `add_1`,
# `add_2`); a name that would shadow a Python builtin or keyword starts at `_1` (`sum_1`, `getattr_1`), so
# the generated code can still call the builtin. This is torch's scheme, so graphs print alike.


class _Namespace:
    def __init__(self):
        self._used: set[str] = set()
        self._base_count: dict[str, int] = {}
        self._obj_names: dict[int, str] = {}

    def create_name(self, candidate: str, obj: Any = None) -> str:
        if obj is not None and id(obj) in self._obj_names:
            return self._obj_names[id(obj)]
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        m = re.match(r"(.*)_(\d+)$", candidate)
        base, num = (m.group(1), int(m.group(2))) if m else (candidate, None)
        name = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count.get(base, 0)
        while name in self._used or _illegal(name):
            num += 1
            name = f"{base}_{num}"
        self._base_count[base] = num
        self._used.add(name)
        if obj is not None:
            self._obj_names[id(obj)] = name
        return name

    def associate_name_with_obj(self, name: str, obj: Any) -> None:
        self._obj_names[id(obj)] = name


def _illegal(name: str) -> bool:
    return keyword.iskeyword(name) or name in builtins.__dict__


def _snake_case(s: str) -> str:
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def _public_module_path(fn) -> str | None:
    """'ember.relu' when `fn` is reachable as a public name of ember (or of a namespace below it)."""
    import ember

    name = getattr(fn, "__name__", None)
    if not isinstance(name, str):
        return None
    for prefix, ns in _namespaces(ember):
        if ns is not None and ns.__dict__.get(name) is fn:
            return f"{prefix}.{name}"
    if name in ember._LAZY_ATTRS and getattr(ember, name) is fn:
        return f"ember.{name}"
    if getattr(fn, "__module__", None) == "ember.fx._symbolic_trace":
        return f"ember.fx._symbolic_trace.{name}"
    return None


def _namespaces(ember):
    import sys

    yield "ember", ember
    for sub in ("nn.functional", "linalg", "fft", "special"):
        yield "ember." + sub, sys.modules.get("ember." + sub)


def _qualified_name(fn) -> str:
    """A target's printed name: `operator.add`, `builtins.getattr`, `ember.relu`, `ember.ops.aten.mul...`."""
    from ..ops import OpOverload

    if isinstance(fn, OpOverload):
        return "ember.ops.aten." + fn.__name__
    if getattr(fn, "__module__", None) == "_operator":
        return "operator." + fn.__name__
    if fn in builtins.__dict__.values() and getattr(fn, "__name__", None) in builtins.__dict__:
        return "builtins." + fn.__name__
    public = _public_module_path(fn)
    if public is not None:
        return public
    return f"{getattr(fn, '__module__', None) or '<unknown>'}.{getattr(fn, '__qualname__', repr(fn))}"


class PythonCode:
    """Generated code: `src` (the body of `forward`), `globals` (what its names refer to)."""

    def __init__(self, src: str, globals: dict):
        self.src = src
        self.globals = globals


class Graph:
    """A list of `Node`s: placeholders, operations, one output (see the module docstring)."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._len = 0
        self._namespace = _Namespace()
        self._insert = self._root.prepend
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls

    # ---- building ---------------------------------------------------------------------------------------
    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    def create_node(self, op: str, target, args: tuple | None = None, kwargs: dict | None = None,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """Make a node and insert it at the current insertion point (the end unless moved)."""
        candidate = name if name is not None else self._target_to_str(target)
        name = self._namespace.create_name(candidate)
        n = Node(self, name, op, target, args or (), kwargs or {}, type_expr)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name: str, type_expr: Any = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args=None, kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr: Any = None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node nothing uses any more."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    @contextmanager
    def inserting_before(self, n: Node | None = None):
        """New nodes go before `n` (before the first node if None) while the context is open."""
        old = self._insert
        self._insert = (n if n is not None else self._root._next).prepend
        try:
            yield
        finally:
            self._insert = old

    @contextmanager
    def inserting_after(self, n: Node | None = None):
        """New nodes go after `n` (in order) while the context is open; at the start if None."""
        old = self._insert
        anchor = [n if n is not None else self._root]

        def insert(x):
            anchor[0].append(x)
            anchor[0] = x
        self._insert = insert
        try:
            yield
        finally:
            self._insert = old

    def node_copy(self, node: Node, arg_transform: Callable = lambda x: x) -> Node:
        """Copy `node` (from any graph) into this one, mapping its argument nodes with `arg_transform`."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        name = node.name if node.op != "output" else None
        new = self.create_node(node.op, node.target, args, kwargs, name, node.type)
        new.meta = dict(node.meta)
        return new

    def graph_copy(self, g: Graph, val_map: dict, return_output_node: bool = False):
        """Copy every node of `g` but its output into this graph; return the mapped output value."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                out = map_arg(node.args[0], lambda n: val_map[n])
                return (out, node) if return_output_node else out
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def find_nodes(self, *, op: str, target=None) -> list:
        return [n for n in self.nodes if n.op == op and (target is None or n.target is target
                                                         or n.target == target)]

    def _target_to_str(self, target) -> str:
        from ..ops import OpOverload

        if isinstance(target, str):
            if target.startswith("__") and target.endswith("__"):
                target = target[2:-2]
            return _snake_case(target)
        if isinstance(target, OpOverload):
            return target.__name__.split(".")[0]
        return _snake_case(getattr(target, "__name__", "fn"))

    # ---- passes -------------------------------------------------------------------------------------------
    def eliminate_dead_code(self, is_impure_node: Callable | None = None) -> bool:
        """Erase nodes nothing uses and that have no effect (walking from the end); True if any went."""
        changed = False
        impure = is_impure_node or (lambda n: n.is_impure())
        for node in reversed(list(self.nodes)):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> bool:
        """Check the graph is well formed: arguments defined before use, one output at the end, targets
        that exist on the owning module, unique names, users in step with arguments."""
        seen: set = set()
        names: set = set()
        nodes = list(self.nodes)
        for node in nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for arg in node.all_input_nodes:
                if arg not in seen:
                    if arg.graph is not self:
                        raise RuntimeError(
                            f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but was used "
                            "as an argument! If you are copying nodes from another graph, make sure to use "
                            "``arg_transform`` on node_copy() to remap values")
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' was used before it has been defined! Please "
                        "check that Nodes in the graph are topologically ordered")
                if node not in arg.users:
                    raise RuntimeError(f"Node '{node}' uses '{arg}' but is not among its users")
            seen.add(node)
            if self.owning_module is not None and node.op in ("get_attr", "call_module"):
                mod = self.owning_module
                for i, atom in enumerate(node.target.split(".")):
                    if not hasattr(mod, atom):
                        seen_q = ".".join(node.target.split(".")[:i])
                        raise RuntimeError(
                            f"Node {node} target {node.target} references nonexistent attribute {atom} of "
                            f"{seen_q}")
                    mod = getattr(mod, atom)
        outputs = [n for n in nodes if n.op == "output"]
        if len(outputs) > 1 or (outputs and nodes[-1] is not outputs[0]):
            raise RuntimeError("Graph must have exactly one output node, and it must be the last node")
        return True

    # ---- printing -----------------------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = ["graph():"]
        for n in self.nodes:
            lines.append("    " + n.format_node())
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """Print the nodes as a table: opcode, name, target, args, kwargs (torch prints it with tabulate)."""
        rows = [[n.op, n.name, n._pretty_print_target(n.target), _format_arg(n.args), _format_arg(n.kwargs)]
                for n in self.nodes]
        header = ["opcode", "name", "target", "args", "kwargs"]
        widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(5)]
        line = "  ".join("-" * w for w in widths)
        out = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(), line]
        out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        print("\n".join(out))

    def python_code(self, root_module: str = "self") -> PythonCode:
        """The source of `forward(self, <placeholders>)` computing this graph, and the globals it needs."""
        return _CodeGen(self, root_module).generate()


class _NodeList:
    """The nodes of a graph in order; iterating is safe while the current node is erased."""

    def __init__(self, graph: Graph):
        self._graph = graph

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = root._next
        while cur is not root:
            nxt = cur._next
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        root = self._graph._root
        cur = root._prev
        while cur is not root:
            prv = cur._prev
            if not cur._erased:
                yield cur
            cur = prv


# ---- code generation ----------------------------------------------------------------------------------


class _CodeGen:
    """Writes a graph as Python: one statement per node, values freed after their last use."""

    def __init__(self, graph: Graph, root: str):
        self.graph, self.root = graph, root
        self.globals: dict[str, Any] = {"inf": float("inf"), "nan": float("nan"), "NoneType": type(None)}
        self.ns = _Namespace()
        self.wrapped: dict[str, None] = {}
        for n in graph.nodes:
            self.ns.create_name(n.name)

    def add_global(self, obj) -> str:
        """The name the code uses for `obj`: a dotted public path (importing its root), or a fresh global."""
        import ember

        from .. import _naming

        q = _qualified_name(obj)
        if q.startswith(("operator.", "builtins.")):
            mod = q.split(".")[0]
            self.globals[mod] = operator if mod == "operator" else builtins
            return q.split(".", 1)[1] if mod == "builtins" else q
        if q.startswith("ember.") and "<" not in q:  # (a local function or an instance: a global of its own)
            self.globals[_naming.prefix] = ember
            path = _naming.prefix + q[len("ember"):]
            head, _, last = path.rpartition(".")
            return f'getattr({head}, "{last}")' if keyword.iskeyword(last) else path  # (`random_.from`)
        name = self.ns.create_name(getattr(obj, "__name__", "fn"), obj)
        self.globals[name] = obj
        return name

    def repr_arg(self, a) -> str:
        from .. import _dtypes, _naming

        if isinstance(a, Node):
            return a.name
        if isinstance(a, tuple):
            inner = ", ".join(self.repr_arg(e) for e in a)
            if hasattr(a, "_fields"):
                return f"{self.add_global(type(a))}({inner})"
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return "[" + ", ".join(self.repr_arg(e) for e in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {self.repr_arg(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({self.repr_arg(a.start)}, {self.repr_arg(a.stop)}, {self.repr_arg(a.step)})"
        if isinstance(a, _dtypes.dtype):
            import ember

            self.globals[_naming.prefix] = ember
            return f"{_naming.prefix}.{a.name}"
        if isinstance(a, float) and (a != a or a in (float("inf"), float("-inf"))):
            return repr(a)
        if a is Ellipsis:
            return "Ellipsis"
        if type(a) in (int, float, bool, str, complex, bytes) or a is None:
            return repr(a)
        if type(a).__name__ == "device" and type(a).__module__.startswith("ember"):
            import ember

            self.globals[_naming.prefix] = ember
            return f"{_naming.prefix}.device({str(a)!r})"
        if inspect.isclass(a) or callable(a):
            return self.add_global(a)
        name = self.ns.create_name(type(a).__name__.lower() + "_const", a)
        self.globals[name] = a
        return name

    def call_args(self, args, kwargs) -> str:
        parts = [self.repr_arg(a) for a in args] + [f"{k} = {self.repr_arg(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def statement(self, n: Node) -> str | None:
        if n.op == "placeholder":
            return None
        if n.op == "get_attr":
            return f"{n.name} = {_attr_path(self.root, n.target)}"
        if n.op == "call_module":
            return f"{n.name} = {_attr_path(self.root, n.target)}({self.call_args(n.args, n.kwargs)})"
        if n.op == "call_method":
            obj, *rest = n.args
            return f"{n.name} = {self.repr_arg(obj)}.{n.target}({self.call_args(rest, n.kwargs)})"
        if n.op == "output":
            return f"return {self.repr_arg(n.args[0])}"
        t = n.target
        if getattr(t, "__module__", None) == "_operator" and t.__name__ in magic_methods and not n.kwargs:
            return f"{n.name} = " + magic_methods[t.__name__].format(*(self.repr_arg(a) for a in n.args))
        if t is getattr and len(n.args) == 2 and isinstance(n.args[1], str) and n.args[1].isidentifier() \
                and not n.kwargs:
            return f"{n.name} = {self.repr_arg(n.args[0])}.{n.args[1]}"
        if n.meta.get("is_wrapped"):  # a `wrap`ped function: a global named after its module and name
            name = self.ns.create_name(_qualified_name(t).replace(".", "_"), t)
            self.globals[name] = t
            self.wrapped.setdefault(name)
            return f"{n.name} = {name}({self.call_args(n.args, n.kwargs)})"
        return f"{n.name} = {self.add_global(t)}({self.call_args(n.args, n.kwargs)})"

    def generate(self) -> PythonCode:
        nodes = list(self.graph.nodes)
        last_use: dict[Node, Node] = {}
        for n in nodes:
            for a in n.all_input_nodes:
                last_use[a] = n
        frees: dict[Node, list] = {}
        for value, user in last_use.items():
            if user.op != "output":
                frees.setdefault(user, []).append(value.name)
        params, body = [self.root], []
        for n in nodes:
            if n.op == "placeholder":
                default = f" = {self.repr_arg(n.args[0])}" if n.args else ""
                params.append(f"{n.target}{default}" if n.target.startswith("*") else f"{n.name}{default}")
                continue
            stmt = self.statement(n)
            dead = frees.get(n, [])
            if not n.users and n.op != "output":
                dead = dead + [n.name]
            if dead:
                stmt += ";  " + " = ".join(dead) + " = None"
            body.append(stmt)
        if not body or not body[-1].startswith("return"):
            body.append("return None")
        wraps = ""
        if self.wrapped:
            import ember

            self.globals[_naming_prefix()] = ember
            wraps = "\n".join(f'{_naming_prefix()}.fx._symbolic_trace.wrap("{w}")' for w in self.wrapped)
        head = f"\n{wraps}\n\ndef forward({', '.join(params)}):\n"
        src = head + "".join(f"    {s}\n" for s in body) + "    "
        return PythonCode(src, self.globals)


def _naming_prefix() -> str:
    from .. import _naming

    return _naming.prefix


def _attr_path(root: str, target: str) -> str:
    out = root
    for atom in target.split("."):
        out = f"{out}.{atom}" if atom.isidentifier() else f'getattr({out}, "{atom}")'
    return out

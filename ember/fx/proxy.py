"""`Proxy`: a stand-in value that records what is done to it as nodes of a graph.

During symbolic tracing the traced function receives Proxies instead of tensors. Every operation on one
adds a node and returns a new Proxy for its result: `x + y` an `operator.add` call_function node,
`x.view(-1)` a call_method node (through `Attribute`), `x.shape` a `getattr` node. What a Proxy cannot
stand for is a *value*: `bool(p)` (an `if` on a traced value) and iteration of unknown length raise
`TraceError`, since the graph is one straight line whatever the data.
"""

from __future__ import annotations

import dis
import inspect
import operator
from bisect import bisect_left

from .graph import magic_methods, reflectable_magic_methods
from .node import Node

__all__ = ["Proxy", "Attribute", "TraceError", "TracerBase"]


class TraceError(ValueError):
    pass


class TracerBase:
    """What a Proxy needs of its tracer: `create_proxy` and `create_arg`."""

    graph = None

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        raise NotImplementedError("a tracer must implement create_proxy")

    def to_bool(self, obj: Proxy) -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy):
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop or as a "
            "*args or **kwargs function argument. See the torch.fx docs on pytorch.org for a more detailed "
            "explanation of what types of control flow can be traced, and check out the Proxy docstring for "
            "help troubleshooting Proxy iteration errors")

    def keys(self, obj: Proxy):
        return Attribute(obj, "keys")()


class Proxy:
    """A traced value: each operation on it becomes a node of `tracer.graph` (see the module docstring)."""

    def __init__(self, node: Node, tracer: TracerBase | None = None):
        self.node = node
        self.tracer = tracer

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # `a, b = proxy` is fine: the unpacking says how many values come out (torch reads the bytecode too)
        frame = inspect.currentframe().f_back
        insts = list(dis.get_instructions(frame.f_code))
        i = bisect_left([x.offset for x in insts], frame.f_lasti)
        if i < len(insts) and insts[i].opname == "UNPACK_SEQUENCE":
            return (self[j] for j in range(insts[i].argval))
        return self.tracer.iter(self)

    def __bool__(self):
        return self.tracer.to_bool(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to "
                           "be recorded, please call torch.fx.wrap('len') at module scope")

    def keys(self):
        return self.tracer.keys(self)

    def __deepcopy__(self, memo):
        raise TraceError("Proxy objects cannot be deep-copied while tracing")


class Attribute(Proxy):
    """`proxy.name`: a getattr node made only if the attribute is used as a value, a call_method node if
    it is called."""

    def __init__(self, root: Proxy, attr: str):
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._node = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _make_magic(name: str):
    target = getattr(operator, name)

    def impl(self, *rest):
        return self.tracer.create_proxy("call_function", target, (self,) + rest, {})
    impl.__name__ = f"__{name.rstrip('_')}__"
    return impl


def _make_reflected(name: str):
    target = getattr(operator, name)

    def impl(self, other):
        return self.tracer.create_proxy("call_function", target, (other, self), {})
    impl.__name__ = f"__r{name.rstrip('_')}__"
    return impl


for _name in magic_methods:
    if _name == "div":
        continue
    setattr(Proxy, f"__{_name.rstrip('_')}__", _make_magic(_name))
for _name in reflectable_magic_methods:
    if _name in ("div", "getitem"):
        continue
    setattr(Proxy, f"__r{_name.rstrip('_')}__", _make_reflected(_name))
Proxy.__abs__ = lambda self: self.tracer.create_proxy("call_function", operator.abs, (self,), {})
Proxy.__hash__ = object.__hash__

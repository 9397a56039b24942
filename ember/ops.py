"""`ember.ops.aten`: every registered op as an `OpOverload`, the identity a graph node's target has.

torch names each ATen op `torch.ops.aten.<name>.<overload>` (`aten.mul.Tensor`, `aten.sum.dim_IntList`,
`aten.relu.default`); a graph traced at the dispatcher (`make_fx`, AOT autograd) holds these objects as its
`call_function` targets, so its code reads `torch.ops.aten.mul.Tensor(a, b)`. Here each op of ember's one
registry (`ember._dispatch.registry`) gets one such object, made on first access and then always the same:
`ember.ops.aten.sum.dim_IntList is ember.ops.aten.sum.dim_IntList`. An op declared without an overload
name is `<name>.default`, as in torch.

NOTE [ How an OpOverload is called ]
An ember op call is `(op, inputs, params)`: inputs are what autograd and the tracer see as edges (tensors,
and Python numbers that take part in type promotion), params are static (dims, flags, dtypes). An
OpOverload keeps the two apart by position and keyword: `aten.sum.dim_IntList(x, dims=(1,), keepdim=False,
dtype=None)` passes the inputs positionally and the params by the names of the kernel's parameters
(`OpDef.signature`). Graph nodes store their calls the same way (args = inputs, kwargs = params), so a
printed graph states which argument is which, and replaying a node is the call it recorded.
"""

from __future__ import annotations

from ._dispatch import HIGHER_ORDER, dispatch, dispatch_higher_order, registry

__all__ = ["aten", "OpOverload", "OpOverloadPacket"]


class OpOverload:
    """One registered op, callable as `op(*inputs, **params)` (NOTE [ How an OpOverload is called ])."""

    def __init__(self, op):
        self._op = op
        self._overloadname = op.overload or "default"
        self.__name__ = f"{op.name}.{self._overloadname}"
        self.__qualname__ = self.__name__
        self.__module__ = "ember.ops.aten"

    @property
    def op(self):
        """The registry entry (`OpDef`): kernel, derivative, meta rule, tags."""
        return self._op

    @property
    def tags(self):
        return self._op.tags

    def name(self):
        return f"aten::{self._op.qualname}"

    def overloadpacket(self):
        return getattr(aten, self._op.name)

    def __call__(self, *inputs, **params):
        op = self._op
        if params:
            names = op.signature(len(inputs), len(params))[1]
            params = tuple(params[n] for n in names) if set(names) == set(params) else tuple(params.values())
        else:
            params = ()
        if op.kind == HIGHER_ORDER:
            return dispatch_higher_order(op, inputs, params)
        return dispatch(op, inputs, params)

    def __repr__(self):
        return f"aten.{self.__name__}"

    def __reduce__(self):
        return _overload, (self._op.qualname,)


def _overload(qualname):
    op = registry[qualname]
    return getattr(getattr(aten, op.name), op.overload or "default")


class OpOverloadPacket:
    """All overloads of one op name: `aten.sum.default`, `aten.sum.dim_IntList`."""

    def __init__(self, name):
        self._name = name
        self.__name__ = name

    def overloads(self):
        return [(registry[q].overload or "default") for q in registry
                if q == self._name or q.startswith(self._name + ".")]

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        qual = self._name if overload == "default" else f"{self._name}.{overload}"
        op = registry.get(qual)
        if op is None:
            raise AttributeError(f"The underlying op of 'aten.{self._name}' has no overload name '{overload}'")
        o = OpOverload(op)
        setattr(self, overload, o)
        return o

    def __call__(self, *inputs, **params):
        return self.default(*inputs, **params)

    def __repr__(self):
        return f"aten.{self._name}"


class _Namespace:
    """`ember.ops.aten`: attribute access by op name gives that name's `OpOverloadPacket`."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name not in registry and not any(q.startswith(name + ".") for q in registry):
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{name}'")
        packet = OpOverloadPacket(name)
        setattr(self, name, packet)
        return packet


aten = _Namespace("aten")


def overload_of(op) -> OpOverload:
    """The `OpOverload` of registry entry `op`."""
    return getattr(getattr(aten, op.name), op.overload or "default")

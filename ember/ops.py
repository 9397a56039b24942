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

from ._dispatch import HIGHER_ORDER, dispatch, dispatch_higher_order, dispatch_inplace, registry

__all__ = ["aten", "OpOverload", "OpOverloadPacket", "InplaceOpOverload", "overload_of",
           "inplace_overload_of"]


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

    def _param_names(self, n_inputs, n_params):
        """`op.signature(...)[1]`, cached per call shape: it reads the kernel's signature with `inspect`
        (~30 us), and compiled graphs call their fallback ops through these objects on every step."""
        cache = self.__dict__.setdefault("_names", {})
        names = cache.get((n_inputs, n_params))
        if names is None:
            names = cache[(n_inputs, n_params)] = self._op.signature(n_inputs, n_params)[1]
        return names

    def __call__(self, *inputs, **params):
        op = self._op
        if params:
            names = self._param_names(len(inputs), len(params))
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


class InplaceOpOverload(OpOverload):
    """`x.op_(...)` as a graph node's target (`aten.add_.default`): calling it writes into its first input.

    ember declares most in-place ops as their out-of-place op written back (`dispatch_inplace`), so the
    in-place identity is made from the out-of-place op rather than registered separately."""

    def __init__(self, op):
        super().__init__(op)
        name = op.name if op.name.endswith("_") else op.name + "_"
        self.__name__ = self.__qualname__ = f"{name}.{self._overloadname}"

    def __call__(self, *inputs, **params):
        op = self._op
        params = tuple(params[n] for n in self._param_names(len(inputs), len(params))) if params else ()
        return dispatch_inplace(op, inputs[0], inputs, params)

    def __reduce__(self):
        return inplace_overload_of_name, (self._op.qualname,)


_inplace: dict = {}


def inplace_overload_of(op) -> InplaceOpOverload:
    """The in-place identity of registry entry `op` (one object per op)."""
    o = _inplace.get(op.qualname)
    if o is None:
        o = _inplace[op.qualname] = InplaceOpOverload(op)
    return o


def inplace_overload_of_name(qualname):
    return inplace_overload_of(registry[qualname])


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
            raise AttributeError(
                f"The underlying op of 'aten.{self._name}' has no overload name '{overload}'")
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
        if _declared(name):
            packet = OpOverloadPacket(name)
        elif name.endswith("_") and _declared(name[:-1]):  # `add_`: the in-place form of `add`
            packet = _InplacePacket(name[:-1])
        else:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{name}'")
        setattr(self, name, packet)
        return packet


def _declared(name):
    return name in registry or any(q.startswith(name + ".") for q in registry)


class _InplacePacket(OpOverloadPacket):
    """`aten.add_`: the in-place forms of an op's overloads (`InplaceOpOverload`)."""

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        qual = self._name if overload == "default" else f"{self._name}.{overload}"
        if qual not in registry:
            raise AttributeError(
                f"The underlying op of 'aten.{self._name}_' has no overload name '{overload}'")
        o = inplace_overload_of(registry[qual])
        setattr(self, overload, o)
        return o

    def __repr__(self):
        return f"aten.{self._name}_"


aten = _Namespace("aten")


def overload_of(op) -> OpOverload:
    """The `OpOverload` of registry entry `op`."""
    return getattr(getattr(aten, op.name), op.overload or "default")

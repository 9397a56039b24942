"""ember._decomp: the one table of decompositions of composite ops into primitives (torch._decomp).

A decomposition is a function written in ember ops that computes what one registered op computes; tracing
with a table (`make_fx(f, decomposition_table=...)`, AOT autograd's `decompositions=`) runs the function
in place of the op, so the graph holds the primitives instead. Each function takes the op's call as a
graph node states it (NOTE [ How an OpOverload is called ]): the tensor inputs positionally, the params by
the kernel's names. Where torch's `torch/_decomp/decompositions.py` has a decomposition for the same op,
ours is written as torch's is, so the traced graphs read alike.

    from ember._decomp import core_aten_decompositions, get_decompositions
    make_fx(f, decomposition_table=get_decompositions([aten.silu, aten.addmm]))(x)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["decomposition_table", "register_decomposition", "get_decompositions", "core_aten_decompositions"]

#: every decomposition, keyed by the op's `ember.ops.aten` OpOverload
decomposition_table: dict = {}


def register_decomposition(ops) -> Callable:
    """Decorator: `fn` decomposes `ops` (an OpOverload, an OpOverloadPacket for all its overloads, or a
    list of them)."""
    def deco(fn):
        for o in _overloads(ops):
            if o in decomposition_table:
                raise RuntimeError(f"duplicate registrations for {o}")
            decomposition_table[o] = fn
        return fn
    return deco


def _overloads(ops) -> list:
    from ..ops import OpOverload, OpOverloadPacket

    if isinstance(ops, OpOverload):
        return [ops]
    if isinstance(ops, OpOverloadPacket):
        return [getattr(ops, n) for n in ops.overloads()]
    return [o for op in ops for o in _overloads(op)]


def get_decompositions(aten_ops: Iterable) -> dict:
    """The table's entries for `aten_ops` (OpOverloads or packets); ops without one are left out."""
    _load()
    return {o: decomposition_table[o] for o in _overloads(list(aten_ops)) if o in decomposition_table}


def core_aten_decompositions() -> dict:
    """Every decomposition of the table (torch's core ATen set: what a backend that takes primitives
    needs decomposed)."""
    not_core = _load().NOT_CORE
    return {o: fn for o, fn in decomposition_table.items() if o.op.name not in not_core}


def _load():
    from . import decompositions  # registers the table's entries on import

    return decompositions

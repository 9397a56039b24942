"""Where the generated wrapper gets each kernel buffer: fresh, a dead buffer's memory, or a static slot.

`plan(lo, steps, params, static, reuse)` runs the memory planner of fx_passes/memory_plan.py over the
scheduled steps (kernels, fallbacks, eager views) and answers the wrapper generator (compile_fx.py):
`alloc(buf)` is the line that binds a kernel's output buffer, `ptr(name)` the expression of its address,
`threads(numel)` the thread-count argument, and `globals` what those lines refer to.

NOTE [ Which buffers are planned ]
Only the buffers kernels write (Pointwise and Reduction nodes) that are neither graph outputs nor reachable
from one: a fallback's result may alias its arguments (an eager op may return a view of its input, or the
input itself), and an eager view aliases its source, so a read of either counts as a read of every planned
buffer it may alias (`_may_alias` says which fallbacks may), and whatever an output may alias is never
planned. Inputs, fallback results and outputs are allocated as before. Two buffers share memory only when
their lifetimes do not overlap and they have the same byte extent and dtype; a kernel never gets the memory
of a buffer it reads.

NOTE [ The static plan ]
mode="reduce-overhead" (option `triton.cudagraphs`), the CPU analogue of CUDA graphs: the planned buffers'
slots are allocated once, when the graph compiles, and every call runs in them; their addresses and each
kernel's thread count are constants of the generated wrapper (a ctypes address read costs ~2.75 us per
buffer per call, BENCHMARKING.md), so a call does no allocation for intermediates and no address lookups
for them. What a call returns is never in the static slots: torch's CUDA graphs return outputs in the
graph's pool, overwritten by the next replay and detected only when accessed, which ember cannot detect
without a check on every tensor access; on a CPU torch's reduce-overhead runs without CUDA graphs and its
outputs stay valid, which is what ember gives. The thread count is fixed when the graph compiles, as torch's
generated C++ fixes it. A static plan is not reentrant: two threads calling one compiled graph at once
would share its slots (torch's CUDA graphs have the same limit).
"""

from __future__ import annotations

import threading

import numpy as np

from .fx_passes.memory_plan import plan_buffers
from .ir import EagerView, Fallback

__all__ = ["BufferPlan", "plan", "last_report"]

_last = threading.local()


def last_report() -> str:
    """The memory plan report of the last graph this thread compiled (for `trace.enabled`)."""
    mp = getattr(_last, "memory", None)
    return mp.report() if mp is not None else "no buffers planned"


def _extent(buf):
    """Bytes `_empty` allocates for `buf` (its strided extent)."""
    it = np.dtype(buf.dtype).itemsize
    if not all(buf.shape):
        return 0
    return (1 + sum((s - 1) * st for s, st in zip(buf.shape, buf.strides))) * it


def _as_layout(base, shape, strides, dtype):
    """A view of the raw bytes `base` as an array of `shape`/`strides` (elements) and `dtype`."""
    d = np.dtype(dtype)
    return np.ndarray(shape, d, buffer=base, strides=tuple(st * d.itemsize for st in strides))


def _buf_args(a, out):
    if isinstance(a, tuple) and len(a) == 2 and a[0] in ("buf", "const"):
        if a[0] == "buf":
            out.append(a[1])
    elif isinstance(a, (list, tuple)):
        for x in a:
            _buf_args(x, out)
    return out


def _may_alias(node) -> bool:
    """Whether a fallback's results may share memory with its arguments: views and shape ops (`reshape`,
    `contiguous`, `expand` return their input or a view of it when they can), in-place ops, and any callable
    that is not a registered op; compute ops (matmul, convolution, norms, reductions) return new tensors."""
    op = getattr(node.target, "op", None)
    if op is None or not hasattr(op, "kind"):
        return True
    return op.kind in ("view", "shape") or "inplace" in op.tags or op.name.endswith("_")


class BufferPlan:
    def __init__(self, static: bool):
        self.static = static
        self.globals: dict = {}
        self.source_of: dict = {}  # planned buffer -> (slot, bytes, first user) or its static array's name
        self.memory = None          # the MemoryPlan (bytes before/after, live peak)
        self._ptrs: dict = {}
        self.forced: dict = {}      # kernel -> the thread count max-autotune chose

    def alloc(self, b) -> str:
        """The wrapper line binding kernel buffer `b` (a fresh array, a view of a slot's bytes, or a static
        array)."""
        src = self.source_of.get(b.name)
        if src is None:
            return f"{b.name} = _empty({b.shape!r}, {b.strides!r}, {b.dtype!r})"
        if self.static:
            return f"{b.name} = {src}"
        slot, nbytes, first = src
        new = f"_sb{slot} = np.empty({nbytes}, np.uint8); " if first else ""
        return f"{new}{b.name} = _as_layout(_sb{slot}, {b.shape!r}, {b.strides!r}, {b.dtype!r})"

    def ptr(self, name: str) -> str:
        return self._ptrs.get(name, f"{name}.ctypes.data")

    def threads(self, numel: int, kernel: str = "") -> str:
        if kernel in self.forced:  # (max-autotune's choice)
            return str(self.forced[kernel])
        if self.static:
            from .threads import threads_for
            return str(threads_for(numel))
        return f"_threads({numel})"


def plan(lo, steps, params, static=False, reuse=True) -> BufferPlan:
    """The buffer plan of a lowered, scheduled graph (NOTE [ Which buffers are planned ])."""
    from .scheduler import Kernel

    bp = BufferPlan(static)
    bp.forced = getattr(lo, "forced_threads", None) or {}
    _last.memory = None
    if not reuse and not static:
        return bp
    written = {m.buffer.name: m.buffer for s in steps if isinstance(s, Kernel) for m in s.members}
    alias: dict = {}  # non-planned buffer -> buffers it may alias

    def roots(name, seen=None):
        if name in written:
            return {name}
        seen = seen or set()
        if name in seen:
            return set()
        seen.add(name)
        out = set()
        for a in alias.get(name, ()):
            out |= roots(a, seen)
        return out

    rows = []
    for s in steps:
        if isinstance(s, Kernel):
            writes = [m.buffer.name for m in s.members]
            reads = [p for p in params[s.name] if p not in writes]
            rows.append((writes, reads))
        elif isinstance(s, Fallback):
            ins = _buf_args(list(s.args) + list(s.kwargs.values()), [])
            if _may_alias(s.node):
                for o in s.outputs:
                    if o is not None:
                        alias[o] = set(ins)
            rows.append(([], ins))
        elif isinstance(s, EagerView):
            alias[s.output] = {s.source}
            rows.append(([], [s.source]))
    kept = set()
    for kind, v in lo.outputs:
        if kind == "buf":
            kept |= roots(v)
        elif kind == "tuple":  # (a multi-output node saved whole, e.g. for the backward)
            for name in v:
                if name is not None:
                    kept |= roots(name)
    steps_rows = []
    for writes, reads in rows:
        w = [(b, _extent(written[b]), written[b].dtype) for b in writes if b not in kept]
        r = sorted({x for name in reads for x in roots(name)})
        steps_rows.append((w, r))
    mp = plan_buffers(steps_rows, keep=kept)
    bp.memory = _last.memory = mp
    if static:
        for i, (nbytes, _) in enumerate(mp.slots):
            bp.globals[f"_slot{i}"] = np.empty(max(nbytes, 1), np.uint8)
        for b, i in mp.slot_of.items():
            buf = written[b]
            arr = _as_layout(bp.globals[f"_slot{i}"], buf.shape, buf.strides, buf.dtype)
            bp.globals[f"_S_{b}"] = arr
            bp.source_of[b] = f"_S_{b}"
            bp._ptrs[b] = str(arr.ctypes.data)
        return bp
    users: dict = {}
    for i in mp.slot_of.values():
        users[i] = users.get(i, 0) + 1
    seen = set()
    for b, i in mp.slot_of.items():  # (dict order is allocation order, the wrapper's order)
        if users[i] > 1:  # a slot nobody else takes stays a plain `_empty`
            bp.source_of[b] = (i, max(mp.slots[i][0], 1), i not in seen)
            seen.add(i)
    bp.globals["_as_layout"] = _as_layout
    return bp

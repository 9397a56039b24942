"""Memory planning: buffers whose lifetimes do not overlap share one allocation.

`plan_buffers(steps, keep)` is the planner, independent of what a step is: `steps` is the scheduled order
of kernels, each `(writes, reads)` with `writes` a list of `(buffer, nbytes, dtype)` it allocates and
`reads` the buffers it reads. A buffer lives from the step that writes it to the last step that reads it;
after that step its slot is free, and the next buffer of the same byte size and dtype takes it (torch's
inductor reuses a freed buffer of the same size the same way, `AllocateLine.plan` / `FreeIfNotReusedLine`).
Buffers in `keep` (graph outputs) are never freed. `plan_graph(gm)` builds the steps from an FX graph's
nodes (a node is a kernel; a view extends its base's life instead of allocating), which is what the
static plan of mode="reduce-overhead" preallocates; the code generator's scheduler hands its kernels to
`plan_buffers` the same way.

NOTE [ Peak bytes before and after ]
`MemoryPlan.bytes_before` is the static arena without reuse, one allocation per buffer (what a plan that
preallocates every intermediate holds); `bytes_after` the arena with reuse (sum of slot sizes);
`live_peak` the most bytes live at one step, the floor any reuse scheme can reach. Same-size reuse (rather
than best-fit splitting of larger slots) keeps each slot's strides and dtype fixed, so a preallocated
ndarray can be handed to a kernel's `out=` as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class MemoryPlan:
    slot_of: dict = field(default_factory=dict)    # buffer -> slot index
    slots: list = field(default_factory=list)      # slot index -> (nbytes, dtype)
    bytes_before: int = 0
    bytes_after: int = 0
    live_peak: int = 0
    frees: dict = field(default_factory=dict)      # step index -> buffers whose last use it is

    def report(self) -> str:
        saved = 1 - self.bytes_after / self.bytes_before if self.bytes_before else 0.0
        return (f"memory plan: {len(self.slot_of)} buffers in {len(self.slots)} slots; "
                f"{self.bytes_before} bytes without reuse, {self.bytes_after} with ({saved:.0%} less); "
                f"live peak {self.live_peak}")


def plan_buffers(steps, keep=()) -> MemoryPlan:
    """Assign each written buffer a slot, reusing the slots of dead buffers of equal size and dtype."""
    keep = set(keep)
    last = {}
    for i, (writes, reads) in enumerate(steps):
        for b, _, _ in writes:
            last.setdefault(b, i)
        for b in reads:
            last[b] = i
    plan = MemoryPlan()
    free: dict = {}  # (nbytes, dtype) -> [slot]
    live = 0
    sizes = {}
    for i, (writes, reads) in enumerate(steps):
        for b, nbytes, dtype in writes:
            if b in plan.slot_of:
                continue
            sizes[b] = nbytes
            plan.bytes_before += nbytes
            pool = free.get((nbytes, dtype))
            if pool:
                plan.slot_of[b] = pool.pop()
            else:
                plan.slot_of[b] = len(plan.slots)
                plan.slots.append((nbytes, dtype))
                plan.bytes_after += nbytes
            live += nbytes
        plan.live_peak = max(plan.live_peak, live)
        dead = [b for b in dict.fromkeys([w[0] for w in writes] + list(reads))
                if b in plan.slot_of and last.get(b) == i and b not in keep]
        for b in dead:
            free.setdefault(plan.slots[plan.slot_of[b]], []).append(plan.slot_of[b])
            live -= sizes[b]
        if dead:
            plan.frees[i] = dead
    return plan


def _base(node, base_of):
    return base_of.get(node, node)


def plan_graph(gm) -> MemoryPlan:
    """The plan of `gm`'s intermediates (nodes with a recorded tensor value, views sharing their base's
    buffer); graph outputs are kept. Also kept as `gm._memory_plan`."""
    from ._util import is_view, output_node, val

    base_of: dict = {}
    steps = []
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        reads = [_base(n, base_of) for n in node.all_input_nodes]
        v = val(node)
        if is_view(node) and node.args and hasattr(node.args[0], "op"):
            base_of[node] = _base(node.args[0], base_of)
            steps.append(([], reads))
            continue
        writes = []
        if v is not None:
            writes.append((node, v.numel() * v.element_size(), v.dtype))
        steps.append((writes, reads))
    outputs = {_base(n, base_of) for n in output_node(gm.graph).all_input_nodes}
    plan = plan_buffers(steps, keep=outputs)
    gm._memory_plan = plan
    return plan

"""FX graph passes of the compiler: each a function `gm -> gm` that any backend can run on a GraphModule
from make_fx, AOT autograd or the capture (ops as `ember.ops.aten` OpOverloads).

    dead_code_elimination            dce.py              unused, effect-free nodes
    common_subexpression_elimination cse.py              repeated effect-free calls
    constant_fold                    constant_folding.py get_attr-only subgraphs, torch's limits
    algebraic_simplification         simplify.py         x*1, x+0, x.t().t(), view chains, no-op copies
    fuse_mm_bias                     patterns.py         mm + bias -> addmm (bmm -> baddbmm)
    plan_graph / plan_buffers        memory_plan.py      buffer reuse by liveness (not a rewrite)

`run_passes(gm)` applies the rewrites in the order the code generator wants them: folding first (it
exposes identities), simplification and the mm+bias pattern, then CSE (simplification makes more calls
equal) and a final DCE.
"""

from __future__ import annotations

from .constant_folding import constant_fold
from .cse import common_subexpression_elimination
from .dce import dead_code_elimination
from .memory_plan import MemoryPlan, plan_buffers, plan_graph
from .patterns import fuse_mm_bias
from .simplify import algebraic_simplification

__all__ = ["dead_code_elimination", "common_subexpression_elimination", "constant_fold",
           "algebraic_simplification", "fuse_mm_bias", "plan_graph", "plan_buffers", "MemoryPlan",
           "run_passes", "PASSES"]

PASSES = (constant_fold, algebraic_simplification, fuse_mm_bias, common_subexpression_elimination,
          dead_code_elimination)


def run_passes(gm, passes=PASSES):
    """Apply `passes` (each `gm -> gm`) in order; returns the rewritten `gm`."""
    for p in passes:
        gm = p(gm)
    return gm


def for_options(gm):
    """The passes the current compile options ask for (NOTE [ The options ember acts on ]): folding and
    simplification under `use_joint_graph_passes`, the mm+bias rewrite under `pattern_matcher`, CSE and DCE
    under `use_dce` (mode="lite" turns all off, as torch's does)."""
    from .. import options

    chosen = []
    if options.get("use_joint_graph_passes"):
        chosen += [constant_fold, algebraic_simplification]
    if options.get("pattern_matcher"):
        chosen.append(fuse_mm_bias)
    if options.get("use_dce"):
        chosen += [common_subexpression_elimination, dead_code_elimination]
    return run_passes(gm, chosen)

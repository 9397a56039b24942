"""ember's code generator (torch's TorchInductor, for the CPU): FX graphs to fused C kernels.

`compile_fx(gm, example_inputs)` compiles a graph of ember's ops (what AOT autograd hands a compiler) into a
callable; the `inductor` backend of `ember.compile` (its default) runs AOT autograd with it as the forward
and backward compiler. The pipeline, one module each: lowering.py (graph to the loop-level IR of ir.py,
ops with no lowering kept as calls into ember's eager kernels), scheduler.py (fusion into kernels),
codegen_c.py (C with OpenMP, built and cached by ember/_native) and codegen_numpy.py (NumPy, when no C
compiler is present), compile_fx.py (the generated wrapper that runs the steps). docs/architecture.md,
"Compiler: how a graph becomes C", walks through it.

Environment: EMBER_INDUCTOR_BACKEND=numpy uses the NumPy code generator even where a compiler exists.
"""

from .compile_fx import compile_fx, compile_fx_inner
from .options import list_mode_options, list_options  # (engineer H: modes and options)

__all__ = ["compile_fx", "compile_fx_inner", "list_mode_options", "list_options"]

"""Threads of the generated C kernels: ember's own pool (ember/_native/threadpool.c) and when to use it.

A generated kernel splits its outer loop with `em_parallel(body, ctx, n, nt, chunk)` (codegen_c.py), which
calls the pool's `em_parallel_for` through a pointer each generated library is given once it is loaded
(`attach`); a library not attached (no pool: its build failed) runs every loop on the calling thread.
Why a pool of our own and not OpenMP: NOTE [ A pool of our own ] in threadpool.c.

NOTE [ When a generated kernel uses threads ]
A kernel's loop goes to `threads_for(n)` threads: one below PARALLEL_SIZE elements of work, else the
runtime's thread count (`ember.set_num_threads`). A parallel loop costs its caller about 2-10 us (waking a
sleeping worker, the atomic chunk counter), and after it a worker spins up to 50 us on a core another pool
(OpenBLAS) may want; a copy or an add over 256K float32 elements takes 50-150 us alone, so the threshold is
256K elements, where the second thread saves more than it costs. `n` is the kernel's element count weighted
by its per-element work (`work`): a chain of transcendental functions over 32K elements is worth
splitting where a copy of them is not.
"""

from __future__ import annotations

import ctypes

__all__ = ["PARALLEL_SIZE", "threads_for", "work", "attach", "pool_address", "loops_run"]

PARALLEL_SIZE = 1 << 18
_state = {"address": None}

# the per-element cost of an op relative to a load or an add (a libm-style function is a polynomial and a
# range reduction: ~10-30 arithmetic instructions)
_COSTLY = frozenset({"exp", "log", "sin", "cos", "tanh", "erf", "log1p", "expm1", "sigmoid", "pow_scalar",
                     "gelu", "gelu_grad", "gelu_tanh", "gelu_tanh_grad"})
_COST = 8


def pool_address():
    """The address of the pool's `em_parallel_for`, or 0 when it cannot be built (loops then run serially)."""
    if _state["address"] is None:
        from .. import _native
        fn = _native.function("threadpool", "em_parallel_for_address", argtypes=[], restype=ctypes.c_void_p)
        _state["address"] = (fn() or 0) if fn is not None else 0
    return _state["address"]


def loops_run() -> int:
    """How many kernel loops the pool has split across threads in this process (0 without a pool)."""
    if not pool_address():
        return 0
    from .. import _native
    return _native.function("threadpool", "em_pool_loops", argtypes=[], restype=ctypes.c_int64)()


def attach(lib) -> None:
    """Give a loaded generated library the pool (its `em_set_pool`)."""
    addr = pool_address()
    if addr:
        f = lib.em_set_pool
        f.argtypes, f.restype = [ctypes.c_void_p], None
        f(addr)


def work(kernel) -> int:
    """A kernel's elements weighted by their cost: per member, its loop's elements times (1 + 8 per costly
    op of its expression) (NOTE [ When a generated kernel uses threads ])."""
    from .ir import Op, Pointwise, walk
    from .scheduler import member_exprs

    total = 0
    for m in kernel.members:
        e = member_exprs(m, len(kernel.outer))[0]
        n = 1
        for s_ in (m.buffer.shape if isinstance(m, Pointwise) else m.outer + m.reduced):
            n *= s_
        total += n * (1 + _COST * sum(isinstance(x, Op) and x.name in _COSTLY for x in walk(e)))
    return total


def threads_for(n: int) -> int:
    """Threads for a kernel loop over `n` weighted elements
    (NOTE [ When a generated kernel uses threads ])."""
    if n < PARALLEL_SIZE:
        return 1
    from .. import _runtime
    return _runtime.get_num_threads()

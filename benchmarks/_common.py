"""Shared benchmark plumbing: one thread, interleaved A B B A rounds, medians, ratios.

The method, and why: docs/benchmarking.md.
"""

import gc
import os
import statistics
import time

# one thread (EMBER_BENCH_THREADS=N for a figure at N threads, where a benchmark reports one)
THREADS = int(os.environ.get("EMBER_BENCH_THREADS", "1"))
for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_v] = str(THREADS)

import ember  # noqa: E402, I001 - first, as `import ember as torch` scripts do (NOTE [ One spinning pool ])
import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(THREADS)


def blas_core():
    """The kernels NumPy's OpenBLAS runs ("SkylakeX", "Haswell", ...), or "?" for another BLAS.

    NOTE [ OpenBLAS kernels in benchmarks ]
    OpenBLAS picks its kernels for the CPU when NumPy loads it, unless OPENBLAS_CORETYPE names a core. This
    project's machines set OPENBLAS_CORETYPE=Haswell (and OPENBLAS_L2_SIZE) for older OpenBLAS builds that
    fail on their AVX-512 CPUs; NumPy 2's OpenBLAS picks the AVX-512 "SkylakeX" kernels there by itself, as it
    does on a user's machine, and its float32 GEMMs are 2-16x faster with them. Benchmarks are run with both
    variables unset in that command (`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/...`),
    and every table's header says which kernels ran; tests and CI leave them as they are.
    """
    import ctypes
    import glob

    for path in glob.glob(os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs", "*openblas*")):
        fn = getattr(ctypes.CDLL(path), "gotoblas_corename", None)
        if fn is not None:
            fn.restype = ctypes.c_char_p
            return fn().decode()
    return "?"


def timeit(fn, number):
    t = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t) / number


def compare(ember_fn, torch_fn, number=100, rounds=7, warmup=3):
    """Median seconds per call of each, timed in interleaved rounds; returns (ember_s, torch_s)."""
    for _ in range(warmup):
        ember_fn()
        torch_fn()
    e, t = [], []
    for r in range(rounds):
        gc.collect()
        order = (ember_fn, torch_fn) if r % 2 == 0 else (torch_fn, ember_fn)
        for f in order:
            (e if f is ember_fn else t).append(timeit(f, number))
    return statistics.median(e), statistics.median(t)


def row(name, e, t, unit="us", scale=1e6):
    print(f"{name:<48} {e * scale:>10.2f} {t * scale:>10.2f} {unit:<3} {e / t:>6.2f}x", flush=True)


def header(title):
    print(f"\n{title} (OpenBLAS kernels: {blas_core()})\n{'workload':<48} {'ember':>10} {'torch':>10}     {'ratio':>6}")


__all__ = ["np", "torch", "ember", "compare", "row", "header", "blas_core"]

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
    print(f"\n{title}\n{'workload':<48} {'ember':>10} {'torch':>10}     {'ratio':>6}")


__all__ = ["np", "torch", "ember", "compare", "row", "header"]

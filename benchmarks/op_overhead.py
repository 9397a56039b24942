"""Per-op overhead of the dispatcher and Tensor construction, ember vs torch, plus import time.

Run: python benchmarks/op_overhead.py
"""

import os
import subprocess
import sys

from _common import compare, ember, header, np, row, torch


def chain(lib, x, n=1000):
    def run():
        y = x
        for _ in range(n // 4):
            y = y + x
            y = y * x
            y = y - x
            y = y / 1.5
        return y
    return run


def import_time(module):
    """Median import time in fresh processes, with bytecode cached as any installed package has it.

    (Some environments set PYTHONDONTWRITEBYTECODE; torch's installed .pyc files exist regardless, so
    ember gets its cache too: the first, warm-up run writes it.)
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    run = lambda: float(subprocess.check_output([sys.executable, "-c", code], env=env))  # noqa: E731
    run()
    times = [run() for _ in range(7)]
    return sorted(times)[len(times) // 2]


def main():
    a = np.random.default_rng(0).standard_normal(8).astype(np.float32)
    ex, tx = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    header("tiny tensors (8 float32), no grad: 1000-op chain of + * - /")
    e, t = compare(chain(ember, ex), chain(torch, tx), number=5)
    row("per op", e / 1000, t / 1000)
    for name, fe, ft in [
        ("x + y", lambda: ex + ex, lambda: tx + tx),
        ("x * 2.0", lambda: ex * 2.0, lambda: tx * 2.0),
        ("x.exp()", lambda: ex.exp(), lambda: tx.exp()),
        ("x.sum()", lambda: ex.sum(), lambda: tx.sum()),
        ("x.view(2, 4)", lambda: ex.view(2, 4), lambda: tx.view(2, 4)),
        ("x[1:5]", lambda: ex[1:5], lambda: tx[1:5]),
        ("ember.tensor([1., 2.])", lambda: ember.tensor([1.0, 2.0]), lambda: torch.tensor([1.0, 2.0])),
        ("zeros(8)", lambda: ember.zeros(8), lambda: torch.zeros(8)),
    ]:
        e, t = compare(fe, ft, number=2000)
        row(name, e, t)

    big = np.random.default_rng(1).standard_normal(1_000_000).astype(np.float32)
    eb, tb = ember.from_numpy(big.copy()), torch.from_numpy(big.copy())
    header("1M-element float32 ops, no grad")
    for name, fe, ft in [
        ("x + y", lambda: eb + eb, lambda: tb + tb),
        ("x * 2.0", lambda: eb * 2.0, lambda: tb * 2.0),
        ("x.exp()", lambda: eb.exp(), lambda: tb.exp()),
        ("x.sum()", lambda: eb.sum(), lambda: tb.sum()),
        ("x.max()", lambda: eb.max(), lambda: tb.max()),
        ("x.view(1000, 1000).t().contiguous()", lambda: eb.view(1000, 1000).t().contiguous(),
         lambda: tb.view(1000, 1000).t().contiguous()),
    ]:
        e, t = compare(fe, ft, number=20)
        row(name, e, t)

    header("import time (median of 5 fresh processes)")
    row("import ember / import torch", import_time("ember"), import_time("torch"), unit="ms", scale=1e3)


if __name__ == "__main__":
    main()

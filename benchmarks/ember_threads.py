"""ember alone (no torch in the process): the model train steps at 1 thread and at the default thread count.

In the interleaved benchmarks ember's kernels share torch's OpenMP runtime (docs/benchmarking.md), so their
multi-thread rows do not show ember as a user runs it. This script imports no torch: it builds the same
models (randomly initialised) and reports, per model, the median step time at each thread count, measured
in alternating rounds in one process, and the machine's load. Run: python benchmarks/ember_threads.py
"""

import os
import statistics
import sys
import time
import types

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_v] = "1"

import numpy as np  # noqa: E402

import ember  # noqa: E402

# models.py and native.py import the interleaving helpers from _common, which imports torch: give them the
# names they use without it (only the model builders and workload specs are used here)
sys.modules["_common"] = types.SimpleNamespace(np=np, ember=ember, torch=None, compare=None, header=None, row=None)
import models  # noqa: E402
import native  # noqa: E402


def main():
    counts = sorted({1, ember._runtime._physical_cores()})
    print(f"ember alone, train step medians (ms) at {counts} threads; load {os.getloadavg()[0]:.2f}")
    for name, build, make_batch, loss_fn, opt, lr in models.WORKLOADS + [native.LSTM_H128]:
        x_np, y_np = make_batch(np.random.default_rng(0))
        model = build(ember)
        optimizer = getattr(ember.optim, opt)(model.parameters(), lr=lr, **({"momentum": 0.9} if opt == "SGD" else {}))
        x, y = ember.from_numpy(x_np), ember.from_numpy(y_np)

        def step():
            optimizer.zero_grad()
            loss = loss_fn(ember, model(x), y)
            loss.backward()
            optimizer.step()
            return loss.item()
        times = {n: [] for n in counts}
        for _ in range(3):
            for n in counts:
                ember.set_num_threads(n)
                for _ in range(2):
                    step()
                for _ in range(5):
                    t = time.perf_counter()
                    step()
                    times[n].append(time.perf_counter() - t)
        cells = "  ".join(f"{n} thr {statistics.median(times[n]) * 1e3:8.2f}" for n in counts)
        print(f"{name:<52} {cells}   load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()

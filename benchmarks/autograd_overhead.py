"""Autograd recording overhead: forward + backward of a chain of tiny elementwise ops, ember vs torch.

A chain of N ops on an 8-element float32 tensor that requires grad (cycling mul, add, tanh, sub), then
`.sum().backward()`. Reported: microseconds per op (forward and backward together, then each alone) for
each library, and the ratios ember/torch. One thread, interleaved rounds (A B B A), medians.

Usage: python benchmarks/autograd_overhead.py [--ops 1000] [--rounds 7]
"""

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402

torch.set_num_threads(1)


def chain(lib, x0, n):
    """n tiny ops with requires_grad, then backward; returns (total, forward, backward) seconds."""
    x = lib.from_numpy(x0.copy()).requires_grad_()
    c = lib.from_numpy(np.full(8, 0.5, np.float32))
    t0 = time.perf_counter()
    y = x
    for _ in range(n // 4):
        y = y * c
        y = y + x
        y = y.tanh()
        y = y - c
    loss = y.sum()
    t1 = time.perf_counter()
    loss.backward()
    t2 = time.perf_counter()
    return t2 - t0, t1 - t0, t2 - t1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    x0 = np.random.default_rng(0).standard_normal(8).astype(np.float32)
    n = args.ops // 4 * 4
    times = {"ember": [], "torch": []}
    for lib in (ember, torch):
        chain(lib, x0, n)  # warm up
    for r in range(args.rounds):
        order = (ember, torch, torch, ember) if r % 2 == 0 else (torch, ember, ember, torch)
        for lib in order:
            times[lib.__name__].append(chain(lib, x0, n))
    def per_op(lib, part):
        return statistics.median(r[part] for r in times[lib]) / n * 1e6

    print(f"chain of {n} ops (8-element float32, requires_grad), median of {2 * args.rounds} runs, us/op")
    print(f"  {'':20s} {'ember':>8s} {'torch':>8s} {'ratio':>8s}")
    for part, name in enumerate(("forward+backward", "forward", "backward")):
        e, t = per_op("ember", part), per_op("torch", part)
        print(f"  {name:20s} {e:8.2f} {t:8.2f} {e / t:7.2f}x")


if __name__ == "__main__":
    main()

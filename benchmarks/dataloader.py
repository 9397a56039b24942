"""DataLoader throughput, ember vs torch, for num_workers 0, 1, 2.

Two datasets feed both loaders the same NumPy samples:
- "cpu-heavy": __getitem__ does about 1 ms of NumPy work and returns a small sample, so throughput is
  bounded by the workers' compute: it should scale with num_workers up to the number of free cores;
- "large samples": __getitem__ is cheap and returns a 3x128x128 float32 image, so throughput is bounded
  by collation and the transport of batches from the workers (shared memory in both libraries).

Each configuration uses persistent workers and one warm-up epoch, then times whole epochs; ember and
torch alternate (A B B A) and the median epoch time gives samples/s. One thread per process.

Usage: python benchmarks/dataloader.py [--rounds N] [--samples N]
"""

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.utils.data  # noqa: E402

import ember  # noqa: E402
import ember.utils.data  # noqa: E402

torch.set_num_threads(1)


class CpuHeavy:
    """~1 ms of NumPy per sample (a few small matrix products and tanh), then 64 floats and a label."""

    def __init__(self, n, size=64, steps=8):
        self.n, self.size, self.steps = n, size, steps

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        a = np.random.default_rng(i).standard_normal((self.size, self.size))
        for _ in range(self.steps):
            a = np.tanh(a @ a.T * 0.02)
        return a[0].astype(np.float32), i % 10


class LargeSamples:
    """A cheap 3x128x128 float32 image per sample."""

    def __init__(self, n):
        self.n = n
        self.image = np.ones((3, 128, 128), np.float32)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.image * i, i


def _epoch_time(loader):
    start = time.perf_counter()
    for _ in loader:
        pass
    return time.perf_counter() - start


def _measure(dataset, num_workers, rounds, batch_size=16):
    """Median epoch seconds for ember and torch, alternating A B B A."""
    kwargs = dict(batch_size=batch_size, num_workers=num_workers, persistent_workers=num_workers > 0)
    loaders = {"ember": ember.utils.data.DataLoader(dataset, **kwargs),
               "torch": torch.utils.data.DataLoader(dataset, **kwargs)}
    for loader in loaders.values():
        _epoch_time(loader)  # warm-up: starts the persistent workers
    times = {"ember": [], "torch": []}
    for r in range(rounds):
        order = ("ember", "torch") if r % 2 == 0 else ("torch", "ember")
        for name in order:
            times[name].append(_epoch_time(loaders[name]))
    del loaders
    return {name: statistics.median(ts) for name, ts in times.items()}


def _per_sample_ms(dataset, k=50):
    start = time.perf_counter()
    for i in range(k):
        dataset[i]
    return (time.perf_counter() - start) / k * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--samples", type=int, default=384)
    args = parser.parse_args()
    print(f"cores available: {len(os.sched_getaffinity(0))}, rounds: {args.rounds}, samples/epoch: {args.samples}")
    for title, dataset in (("cpu-heavy", CpuHeavy(args.samples)), ("large samples", LargeSamples(args.samples))):
        print(f"\n{title} ({_per_sample_ms(dataset):.2f} ms per __getitem__), batch_size 16")
        print(f"{'workers':>7} {'ember samples/s':>16} {'torch samples/s':>16} {'ember/torch':>12} "
              f"{'ember scaling':>14} {'torch scaling':>14}")
        base = None
        for nw in (0, 1, 2):
            t = _measure(dataset, nw, args.rounds)
            rate = {k: args.samples / v for k, v in t.items()}
            base = base or rate
            print(f"{nw:>7} {rate['ember']:>16.0f} {rate['torch']:>16.0f} {rate['ember'] / rate['torch']:>12.2f} "
                  f"{rate['ember'] / base['ember']:>13.2f}x {rate['torch'] / base['torch']:>13.2f}x")


if __name__ == "__main__":
    main()

"""Soak runs (issue 25): long training with memory sampled, to show nothing grows per step.

    python -m tests.soak                      # every run, 10,000 steps each, a sample every 500
    python -m tests.soak --steps 2000 mlp     # one run, shorter

Runs: the benchmarks' MLP (784-512-256-10, batch 128, SGD with momentum) and small GPT (2 layers, d128,
seq 64, batch 4, Adam), and a DataLoader with two workers, non-persistent (a new epoch, so new workers,
every 50 batches) and persistent. Each sample records the process's resident memory (RSS, from
/proc/self/statm, the number a user watches) and the number of live ember Tensors (`gc.get_objects`: exact,
where RSS has allocator noise). A run passes when, after the first sample (the warm-up: caches, lazily built
kernels, the optimizer's state), the tensor count never changes and RSS grows by less than `--tolerance-mb`
(default 8 MB) between the first and the last sample. After the DataLoader runs no worker process and no
/dev/shm segment of this process may be left.

`EMBER_SOAK=1 pytest tests/test_leaks.py` runs this from the suite (tests/test_leaks.py); the default suite
does not, since the four runs take several minutes. The README's reliability section has the figures.
"""

import argparse
import gc
import multiprocessing
import os
import sys
import time

import numpy as np

import ember

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE / 2**20


def live_tensors():
    return sum(1 for o in gc.get_objects() if issubclass(type(o), ember.Tensor))  # (type: no lazy __class__)


def _train_run(build, batch, opt_name, lr):
    from models import ce

    ember.manual_seed(0)
    model = build(ember)
    opt = getattr(ember.optim, opt_name)(model.parameters(), lr=lr, **({"momentum": 0.9} if opt_name == "SGD" else {}))
    x, y = (ember.from_numpy(a) for a in batch(np.random.default_rng(0)))

    def step():
        opt.zero_grad()
        loss = ce(ember, model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def mlp_run():
    from models import mlp

    return _train_run(mlp, lambda r: (r.standard_normal((128, 784)).astype(np.float32), r.integers(0, 10, 128)),
                      "SGD", 0.01)


def gpt_run():
    from models import small_gpt

    return _train_run(small_gpt, lambda r: (r.integers(0, 1000, (4, 64)), r.integers(0, 1000, (4, 64))), "Adam", 1e-3)


def _loader_run(persistent):
    ds = ember.utils.data.TensorDataset(ember.randn(200, 3, 32, 32), ember.arange(200))
    loader = ember.utils.data.DataLoader(ds, batch_size=4, shuffle=True, num_workers=2,
                                         persistent_workers=persistent)
    it = iter(loader)

    def step():
        nonlocal it
        try:
            batch = next(it)
        except StopIteration:  # a new epoch: new workers unless persistent
            it = iter(loader)
            batch = next(it)
        return float(batch[0].sum())

    def close():
        nonlocal it
        it = None
    step.close = close
    return step


RUNS = {
    "mlp": mlp_run,
    "gpt": gpt_run,
    "dataloader": lambda: _loader_run(False),
    "dataloader_persistent": lambda: _loader_run(True),
}


def soak(name, steps, every, tolerance_mb, out=print):
    step = RUNS[name]()
    samples, start = [], time.time()
    for i in range(1, steps + 1):
        step()
        if i % every == 0:
            gc.collect()  # (nothing to collect in ember's steps, tests/test_leaks.py; the count must be exact)
            samples.append((i, rss_mb(), live_tensors()))
            out(f"{name:22s} step {i:6d}  RSS {samples[-1][1]:8.1f} MB  live tensors {samples[-1][2]:6d}  "
                f"({time.time() - start:6.1f} s)")
    if hasattr(step, "close"):
        step.close()
    del step
    gc.collect()
    growth = samples[-1][1] - samples[0][1]
    counts = {c for _, _, c in samples}
    problems = []
    if growth >= tolerance_mb:
        problems.append(f"RSS grew {growth:.1f} MB from step {samples[0][0]} to {samples[-1][0]}")
    if len(counts) > 1:
        problems.append(f"live tensor count changed: {[c for _, _, c in samples]}")
    if name.startswith("dataloader"):
        deadline = time.time() + 10
        while multiprocessing.active_children() and time.time() < deadline:
            time.sleep(0.05)
        if multiprocessing.active_children():
            problems.append(f"worker processes left: {multiprocessing.active_children()}")
        segs = [f for f in os.listdir("/dev/shm") if f.startswith(f"ember_dl_{os.getpid()}_")]
        if segs:
            problems.append(f"shared memory segments left: {segs}")
    max_rss = max(r for _, r, _ in samples)
    out(f"{name}: {steps} steps, RSS {samples[0][1]:.1f} -> {samples[-1][1]:.1f} MB (growth {growth:+.1f} MB, "
        f"peak {max_rss:.1f}), live tensors {sorted(counts)}: {'; '.join(problems) or 'ok'}")
    return problems


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="*", metavar="RUN", help=f"some of {', '.join(RUNS)} (default: all)")
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--every", type=int, default=500)
    p.add_argument("--tolerance-mb", type=float, default=8.0)
    args = p.parse_args(argv)
    unknown = [r for r in args.runs if r not in RUNS]
    if unknown:
        p.error(f"unknown runs {unknown}; choose from {', '.join(RUNS)}")
    failed = {}
    for name in args.runs or list(RUNS):
        problems = soak(name, args.steps, args.every, args.tolerance_mb)
        if problems:
            failed[name] = problems
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

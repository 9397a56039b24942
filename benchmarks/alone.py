"""Each library alone in its own process: model train steps at 1 thread and at the default thread count.

In the interleaved benchmarks (models.py, native.py) ember and torch share one process, and ember's kernels then
run on torch's OpenMP runtime (NOTE [ Passive OpenMP threads ] in ember/_native/__init__.py), so their
multi-thread rows are not what a user running ember sees. Here every measurement is a fresh process that
imports one library only; ember's and torch's processes alternate (ember, torch, torch, ember, ...), each
times the steps at every thread count in alternating rounds, and the table gives the median over processes
of each library's median step time, with the ratio ember/torch. Beside wall time it prints the step's CPU time
(every thread of the process): where it is far above the wall time x threads, idle threads spin; on a loaded
machine compare CPU times, not wall times. The workloads: the MNIST example's network (examples/mnist), the
model steps of models.py, the CIFAR CNN and issue 18's LSTM of native.py.

Run: python benchmarks/alone.py [--quick] [models...]   (models: mnist mlp lenet lstm gpt cifar lstm128)
"""

import json
import os
import statistics
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["mnist", "mlp", "lenet", "lstm", "gpt", "cifar", "lstm128"]


def mnist_net(L):
    """examples/mnist's Net."""
    nn, F = L.nn, L.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 5, padding=2)
            self.conv2 = nn.Conv2d(16, 32, 5, padding=2)
            self.dropout = nn.Dropout(0.25)
            self.fc1 = nn.Linear(32 * 7 * 7, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = self.dropout(L.flatten(x, 1))
            x = self.dropout(F.relu(self.fc1(x)))
            return self.fc2(x)
    return Net()


def _specs(np):
    # models.py and native.py import the in-process helpers from _common, which imports both libraries:
    # give them the names they use without it (only their model builders and batches are used here)
    sys.modules["_common"] = types.SimpleNamespace(np=np, ember=None, torch=None, compare=None, header=None,
                                                   row=None)
    sys.path.insert(0, HERE)
    import models
    import native

    mnist = ("mnist", mnist_net, lambda r: (r.standard_normal((64, 1, 28, 28)).astype(np.float32),
                                            r.integers(0, 10, 64)), models.ce, "Adam", 1e-3)
    cifar = ("cifar", native.cifar_cnn, lambda r: (r.standard_normal((64, 3, 32, 32)).astype(np.float32),
                                                   r.integers(0, 10, 64)), models.ce, "SGD", 0.01)
    return dict(zip(NAMES, [mnist] + models.WORKLOADS + [cifar, native.LSTM_H128]))


def child(lib, name, counts, steps):
    """Time `name`'s train step with `lib` alone at each thread count; print the medians as JSON."""
    import numpy as np

    L = __import__(lib)
    _, build, make_batch, loss_fn, opt, lr = _specs(np)[name]
    x_np, y_np = make_batch(np.random.default_rng(0))
    model = build(L)
    optimizer = getattr(L.optim, opt)(model.parameters(), lr=lr, **({"momentum": 0.9} if opt == "SGD" else {}))
    x, y = L.from_numpy(x_np), L.from_numpy(y_np)

    def step():
        optimizer.zero_grad()
        loss = loss_fn(L, model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()
    times = {n: ([], []) for n in counts}
    for r in range(3):
        for n in counts if r % 2 == 0 else counts[::-1]:
            L.set_num_threads(n)
            for _ in range(2):
                step()
            for _ in range(steps):
                w, c = time.perf_counter(), time.process_time()
                step()
                times[n][0].append(time.perf_counter() - w)
                times[n][1].append(time.process_time() - c)
    print(json.dumps({n: [statistics.median(v) for v in times[n]] for n in counts}))


def main():
    quick = "--quick" in sys.argv
    names = [a for a in sys.argv[1:] if not a.startswith("-")] or NAMES
    sys.path.insert(0, HERE)
    import ember  # (only to read the default thread count, as torch's: physical cores)

    default = ember._runtime._physical_cores()
    counts = sorted({1, default})
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                           "OPENBLAS_NUM_THREADS")}
    root = os.path.dirname(HERE)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    procs = 2 if quick else 4
    print(f"each library alone, train step medians (ms) at {counts} threads, {procs} processes each; "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'workload':<10}" + "".join(f" | {n} thr: ember   torch  ratio  (cpu ember  torch)" for n in counts))
    for name in names:
        res = {"ember": [], "torch": []}
        for p in range(procs):
            for lib in ("ember", "torch") if p % 2 == 0 else ("torch", "ember"):
                out = subprocess.run([sys.executable, __file__, "--child", lib, name, ",".join(map(str, counts)),
                                      str(3 if quick else 5)], capture_output=True, text=True, env=env)
                if out.returncode:
                    raise RuntimeError(out.stderr[-2000:])
                res[lib].append(json.loads(out.stdout.strip().splitlines()[-1]))
        cells = ""
        for n in counts:
            (ew, ec), (tw, tc) = ([statistics.median(r[str(n)][i] for r in res[lib]) * 1e3 for i in (0, 1)]
                                  for lib in ("ember", "torch"))
            cells += f" | {ew:12.2f} {tw:7.2f} {ew / tw:5.2f}x  ({ec:8.2f} {tc:6.2f})"
        print(f"{name:<10}{cells}   load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], [int(c) for c in sys.argv[4].split(",")], int(sys.argv[5]))
    else:
        main()

"""Per op, at 1 and 2 threads, each library alone: the ops of the MLP and LeNet train steps at their shapes.

The thread policy (NOTE [ BLAS threads by size ] in ember/_native/blas.py, NOTE [ What a parallel kernel costs ]
in ember/_native/__init__.py, NOTE [ Convolution threads by size ] in ember/_native/conv.py) decides per op
shape whether a second thread is used; this prints, for each op of the two steps, ember's median time at 1
and 2 threads beside torch's, so a 2-thread row slower than its 1-thread row, or far from torch's 2-thread
time, is visible. Each library runs alone in its own process (no torch in ember's, NOTE [ Passive OpenMP
threads ]); a call follows 30 us of Python work, as ops in a step do, and the thread counts alternate in
rounds. Run: python benchmarks/thread_policy.py   (benchmark commands unset OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE: docs/benchmarking.md)
"""

import json
import os
import statistics
import subprocess
import sys
import time


def cases(L, np):
    F = L.nn.functional
    rng = np.random.default_rng(0)

    def t(*shape):
        return L.from_numpy(rng.standard_normal(shape).astype(np.float32))

    x1, w1, b1, x2, w2, b2, g2, g1 = t(128, 784), t(512, 784), t(512), t(128, 512), t(256, 512), t(256), \
        t(128, 256), t(128, 512)
    r1, r2, p = t(128, 512), t(64, 6, 24, 24), t(64, 6, 24, 24)
    xc1, wc1, xc2, wc2 = t(64, 1, 28, 28), t(6, 1, 5, 5), t(64, 6, 12, 12), t(16, 6, 5, 5)
    params = [L.nn.Parameter(t(512, 784)), L.nn.Parameter(t(256, 512))]
    for q in params:
        q.grad = L.ones_like(q)
    sgd = L.optim.SGD(params, lr=0.01, momentum=0.9)
    return {
        "MLP linear 128x784 -> 512": lambda: F.linear(x1, w1, b1),
        "MLP linear 128x512 -> 256": lambda: F.linear(x2, w2, b2),
        "MLP grad input 128x256 @ 256x512": lambda: g2 @ w2,
        "MLP grad weight 256x128 @ 128x512": lambda: g2.t() @ x2,
        "MLP grad weight 512x128 @ 128x784": lambda: g1.t() @ x1,
        "MLP relu 65536": lambda: F.relu(r1),
        "MLP SGD momentum, 401K + 131K": sgd.step,
        "LeNet conv1 forward (5.5M MACs)": lambda: F.conv2d(xc1, wc1),
        "LeNet conv2 forward (9.8M MACs)": lambda: F.conv2d(xc2, wc2),
        "LeNet relu 221184": lambda: F.relu(r2),
        "LeNet max_pool2d 221184": lambda: F.max_pool2d(p, 2),
    }


def child(lib, rounds):
    import numpy as np
    L = __import__(lib)
    ops = cases(L, np)
    times = {(name, n): [] for name in ops for n in (1, 2)}
    for r in range(rounds):
        for n in (1, 2) if r % 2 == 0 else (2, 1):
            L.set_num_threads(n)
            for name, f in ops.items():
                f()
                for _ in range(30):
                    end = time.perf_counter() + 30e-6
                    while time.perf_counter() < end:  # (the Python work between two ops of a step)
                        pass
                    start = time.perf_counter()
                    f()
                    times[(name, n)].append(time.perf_counter() - start)
    print(json.dumps({f"{name}|{n}": statistics.median(v) for (name, n), v in times.items()}))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                           "OPENBLAS_NUM_THREADS")}
    env["PYTHONPATH"] = os.path.dirname(here) + os.pathsep + env.get("PYTHONPATH", "")
    res = {}
    for lib in ("ember", "torch"):
        out = subprocess.run([sys.executable, __file__, "--child", lib, "6"], capture_output=True, text=True,
                             env=env)
        if out.returncode:
            raise RuntimeError(out.stderr[-2000:])
        res[lib] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"each library alone, median us per call at 1 / 2 threads; load {os.getloadavg()[0]:.1f}")
    print(f"{'op':<36} {'ember 1':>8} {'ember 2':>8} {'torch 1':>8} {'torch 2':>8}  ember 2 / torch 2")
    for key in res["ember"]:
        name, n = key.split("|")
        if n == "1":
            e1, e2, t1, t2 = (res[lib][f"{name}|{k}"] * 1e6 for lib in ("ember", "torch") for k in (1, 2))
            print(f"{name:<36} {e1:8.0f} {e2:8.0f} {t1:8.0f} {t2:8.0f}  {e2 / t2:5.2f}x")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]))
    else:
        main()

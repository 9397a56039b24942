"""all_reduce on 2 ranks with each library alone: ember's ranks from its launcher, torch's from torchrun.

`benchmarks/distributed.py` runs both libraries in the same spawned ranks, interleaved; there torch's gloo threads
and ember's MPI share each process, and a large ember all_reduce took twice its time alone (64 MB: 50 ms in the
shared ranks, 24 ms alone). This is what a user running one library sees: each library's job is its own pair of
processes, ember's and torch's jobs alternate (ember, torch, torch, ember), every job times float32 SUM
all_reduces of each size (median of 9 after 2 warm-up calls, a barrier before each), and the table gives the
median over jobs per library and the ratio ember / torch (below 1: ember faster).
Run: python benchmarks/distributed_alone.py
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

SIZES = [1 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]

_RANK = r"""
import json, sys, time
import numpy as np
lib = __import__(sys.argv[1])
dist = lib.distributed
dist.init_process_group("gloo")
out = {}
for n in %s:
    t = lib.from_numpy(np.ones(n // 4, np.float32))
    ts = []
    for i in range(11):
        dist.barrier()
        s = time.perf_counter()
        dist.all_reduce(t)
        ts.append(time.perf_counter() - s)
    out[n] = sorted(ts[2:])[4]
if dist.get_rank() == 0:
    print("RESULT " + json.dumps(out))
dist.destroy_process_group()
""" % SIZES


def _job(lib, script):
    launcher = [sys.executable, "-m", "ember.distributed.run"] if lib == "ember" else ["torchrun"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run(launcher + ["--nproc-per-node", "2", script, lib], capture_output=True, text=True,
                         env=env, timeout=600).stdout
    line = next(ln for ln in out.splitlines() if "RESULT " in ln)
    return {int(k): v for k, v in json.loads(line.split("RESULT ", 1)[1]).items()}


def main():
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(_RANK)
    runs = {"ember": [], "torch": []}
    for lib in ("ember", "torch", "torch", "ember"):
        runs[lib].append(_job(lib, f.name))
    os.unlink(f.name)
    print("all_reduce float32 SUM, 2 ranks, each library alone (median per call over jobs)")
    print(f"{'size':>8} {'ember':>10} {'torch':>10} {'ember/torch':>12}")
    for n in SIZES:
        e = statistics.median(r[n] for r in runs["ember"])
        t = statistics.median(r[n] for r in runs["torch"])
        size = f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"
        print(f"{size:>8} {e * 1e3:8.2f}ms {t * 1e3:8.2f}ms {e / t:12.2f}")


if __name__ == "__main__":
    main()

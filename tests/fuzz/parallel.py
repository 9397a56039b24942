"""Long fuzz runs in worker processes: `python -m tests.fuzz --cases 100000 --jobs 2`.

The parent splits the case numbers into `jobs` contiguous shards, one worker process each (each is `python -m
tests.fuzz.parallel SEED START STOP [OP]`). A worker draws and runs its cases exactly as `core.fuzz` does
(a case depends only on (seed, number), so a sharded run finds what a serial one finds) and writes one line
per case: `S k` before it starts, and a JSON record after it ends.

NOTE [ Crashes and hangs in long runs ]
A drawn case can kill its process (the oracle itself can: torch hands a NaN matrix to MKL's eigenvalue
routine, which segfaults) or block inside C code where the in-process alarm cannot interrupt it (a
degree of 2**31 makes torch's polynomial recurrences loop for minutes). In a single process either ends
the run. Here the parent sees it: a worker that exits mid-shard or is silent for `STALL` seconds is
killed, the case it had started is reported as a "crash" or "hang" mismatch, and a new worker takes the
rest of the shard. The per-case times the workers report give the run's profile (`--profile`).
"""

import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict

import numpy as np

STALL = 120.0  # seconds without a line from a worker: a hang


def worker(seed, start, stop, op_filter=None):
    from . import core
    pool = core.ops(op_filter)
    out = sys.stdout
    core.warm_up()
    core.torch.manual_seed(0)
    for k in range(start, stop):
        out.write(f"S {k}\n")
        out.flush()
        t = time.perf_counter()
        case = core.draw(np.random.default_rng([seed, k]), pool)
        found = core.run(case)
        rec = {"k": k, "t": round(time.perf_counter() - t, 4), "op": case.op}
        if found is not None:
            rec["kind"], rec["msg"] = found
        out.write(json.dumps(rec) + "\n")
    out.flush()


class _Shard:
    def __init__(self, seed, start, stop, op_filter):
        self.start, self.stop, self.current = start, stop, None
        cmd = [sys.executable, "-m", "tests.fuzz.parallel", str(seed), str(start), str(stop)]
        if op_filter:
            cmd.append(op_filter)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self.proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.fd = self.proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buf, self.seen = b"", time.monotonic()

    def lines(self):
        """The complete lines the worker has written since the last call."""
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            self.seen = time.monotonic()
            self.buf += chunk
        *done, self.buf = self.buf.split(b"\n")
        return [d.decode() for d in done]


def fuzz_parallel(n, seed=0, op_filter=None, jobs=2, minimize=False, log=None):
    """`core.fuzz` over `jobs` worker processes; the Result also carries `times` (per case) and
    `crashed` (case numbers that killed or stalled a worker)."""
    from . import core, known
    size = -(-n // jobs)  # one shard per job: a worker's start-up (imports, torch.optim's first step) is
    todo = [(a, min(a + size, n)) for a in range(0, n, size)]  # seconds, paid once per process
    todo.reverse()
    running, records, crashed = [], {}, {}
    started = time.monotonic()
    while todo or running:
        while todo and len(running) < jobs:
            running.append(_Shard(seed, *todo.pop(), op_filter))
        time.sleep(0.05)
        for sh in list(running):
            for line in sh.lines():
                if line.startswith("S "):
                    sh.current = int(line[2:])
                elif line.startswith("{"):
                    rec = json.loads(line)
                    records[rec["k"]] = rec
                    sh.current = None
            ended = sh.proc.poll() is not None
            stalled = not ended and time.monotonic() - sh.seen > STALL
            if not ended and not stalled:
                continue
            if stalled:
                sh.proc.kill()
                sh.proc.wait()
            for line in sh.lines():  # what it wrote before it ended
                if line.startswith("{"):
                    rec = json.loads(line)
                    records[rec["k"]] = rec
                    sh.current = None if rec["k"] == sh.current else sh.current
            running.remove(sh)
            if sh.current is not None:  # it died or stalled inside a case
                k = sh.current
                crashed[k] = "hang" if stalled else f"crash (exit status {sh.proc.returncode})"
                records[k] = {"k": k, "t": STALL if stalled else 0.0, "op": "?", "kind": crashed[k].split()[0],
                              "msg": crashed[k]}
                if k + 1 < sh.stop:
                    todo.append((k + 1, sh.stop))
            elif sh.proc.returncode != 0:
                raise RuntimeError(f"fuzz worker for cases {sh.start}..{sh.stop} failed before a case")
        if log:
            log(len(records), n, time.monotonic() - started)
    result = core.Result(cases=len(records))
    pool = core.ops(op_filter)
    for k in sorted(records):
        rec = records[k]
        if "kind" not in rec:
            continue
        case = core.draw(np.random.default_rng([seed, k]), pool)
        reason = known.reason(case.op, rec["kind"], rec["msg"])
        if minimize and reason is None and k not in crashed:
            case = core.shrink(case, rec["kind"])
        result.mismatches.append(core.Mismatch(case, rec["kind"], rec["msg"], reason, k))
    result.times = [(rec["t"], k, rec["op"]) for k, rec in records.items()]
    result.wall = time.monotonic() - started
    return result


def profile(result, top=15):
    """The slowest cases and the ops that took the most time in total."""
    times = sorted(result.times, reverse=True)
    by_op = defaultdict(float)
    for t, _, op in times:
        by_op[op] += t
    total = sum(t for t, _, _ in times)
    lines = [f"wall {result.wall:.0f} s, {total:.0f} s in cases ({1000 * total / max(1, len(times)):.2f} ms a case)",
             "slowest cases:"]
    lines += [f"  {t:8.2f} s  case {k}  {op}" for t, k, op in times[:top]]
    lines.append("ops by total time:")
    lines += [f"  {t:8.2f} s  {op}" for op, t in Counter(by_op).most_common(top)]
    return "\n".join(lines)


if __name__ == "__main__":
    a = sys.argv[1:]
    worker(int(a[0]), int(a[1]), int(a[2]), a[3] if len(a) > 3 else None)

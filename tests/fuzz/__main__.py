"""`python -m tests.fuzz --cases N --seed S [--op REGEX] [--all] [--jobs J] [--profile]`: a longer fuzz run
with reproducers; `--jobs` runs it in J worker processes (tests/fuzz/parallel.py), which also survives a case
that crashes or stalls its process."""

import argparse
import json
import os
import sys
import time

from tests.fuzz.core import fuzz, summary


def _progress(every=60.0):
    """A `log` for fuzz_parallel: cases done, rate and time left on stderr, at most once a minute."""
    last = [time.monotonic()]

    def log(done, n, wall):
        if time.monotonic() - last[0] >= every:
            last[0] = time.monotonic()
            rate = done / max(wall, 1e-9)
            print(f"{done}/{n} cases, {rate:.1f}/s, {(n - done) / max(rate, 1e-9) / 60:.0f} min left",
                  file=sys.stderr, flush=True)
    return log


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    p.add_argument("--cases", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--op", default=None, help="only ops whose id matches this regular expression")
    p.add_argument("--all", action="store_true", help="print known (listed) mismatches too")
    p.add_argument("--reproducers", type=int, default=50, help="at most this many reproducers printed")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (0: one per CPU)")
    p.add_argument("--profile", action="store_true", help="print the slowest cases and ops (with --jobs)")
    p.add_argument("--json", default=None, help="write every mismatch (op, kind, message, listed) to this file")
    a = p.parse_args(argv)
    if a.jobs != 1 or a.profile:
        from tests.fuzz.parallel import fuzz_parallel, profile
        result = fuzz_parallel(a.cases, a.seed, op_filter=a.op, jobs=a.jobs or os.cpu_count(), minimize=True,
                               log=_progress())
    else:
        result = fuzz(a.cases, a.seed, op_filter=a.op, minimize=True)
    print(summary(result, show_known=a.all, max_repro=a.reproducers))
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"k": m.k, "op": m.case.op, "kind": m.kind, "message": m.message, "what": m.case.what,
                        "listed": m.known is not None} for m in result.mismatches], f, indent=0)
    if a.profile:
        print(profile(result))
    return 1 if result.unexplained else 0


if __name__ == "__main__":
    sys.exit(main())

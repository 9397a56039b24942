"""`python -m tests.fuzz --cases N --seed S [--op REGEX] [--all]`: a longer fuzz run with reproducers."""

import argparse
import sys

from tests.fuzz.core import fuzz, summary


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    p.add_argument("--cases", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--op", default=None, help="only ops whose id matches this regular expression")
    p.add_argument("--all", action="store_true", help="print known (listed) mismatches too")
    p.add_argument("--reproducers", type=int, default=50, help="at most this many reproducers printed")
    a = p.parse_args(argv)
    result = fuzz(a.cases, a.seed, op_filter=a.op, minimize=True)
    print(summary(result, show_known=a.all, max_repro=a.reproducers))
    return 1 if result.unexplained else 0


if __name__ == "__main__":
    sys.exit(main())

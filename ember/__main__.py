"""The `ember` command: `ember run script.py [args...]` runs an unchanged PyTorch script on ember.

Inside the script `import torch`, `import torch.nn as nn`, `from torch.utils.data import DataLoader`
and friends resolve to ember's modules (NOTE [ The torch alias ]).
"""

import argparse
import runpy
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ember", description="ember: PyTorch's API on NumPy")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a PyTorch script with `torch` resolving to ember")
    run.add_argument("script", help="path of the Python script")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    run.add_argument("-m", dest="as_module", action="store_true", help="run SCRIPT as a module (like python -m)")
    ns = parser.parse_args(argv)
    if ns.command == "run":
        from ._torch_alias import install

        install()
        sys.argv = [ns.script] + ns.args
        if ns.as_module:
            runpy.run_module(ns.script, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(ns.script)))
            runpy.run_path(ns.script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())

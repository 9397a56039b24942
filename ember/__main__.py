"""The `ember` command: `ember run script.py [args...]` runs an unchanged PyTorch script on ember;
`ember run --nproc-per-node N [torchrun options] script.py` runs it on N ranks (ember.distributed.run).

Inside the script `import torch`, `import torch.nn as nn`, `from torch.utils.data import DataLoader`
and friends resolve to ember's modules (NOTE [ The torch alias ]).
"""

import argparse
import runpy
import sys

_LAUNCHER_FLAGS = ("--nproc-per-node", "--nproc_per_node", "--nnodes", "--standalone", "--max-restarts",
                   "--max_restarts", "--node-rank", "--node_rank", "--master-addr", "--master_addr",
                   "--master-port", "--master_port", "--rdzv-backend", "--rdzv_backend", "--rdzv-endpoint",
                   "--rdzv_endpoint", "--rdzv-id", "--rdzv_id", "--tee", "--log-dir", "--log_dir", "--hosts")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) > 1 and argv[0] == "run" and argv[1].split("=")[0] in _LAUNCHER_FLAGS:
        # `ember run --nproc-per-node N script.py`: the launcher, each rank with `torch` resolving to ember
        from .distributed.run import main as launch

        return launch(argv[1:], alias=True)
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

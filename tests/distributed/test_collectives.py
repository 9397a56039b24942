"""ember.distributed's collectives against torch's gloo, in real multi-process jobs of 2 and 4 ranks.

One job per world size runs every case of `_collectives_job.py` (all collectives and reductions over
dtypes, async work handles, point-to-point, object collectives, groups and subgroups, torch's errors,
background progress of an async op) in ember and torch from the same NumPy inputs. The ranks are started
with `ember.multiprocessing.spawn`, the pattern of scripts that start their own ranks, so ember's ranks
are joined into one MPI world through its PMI server (NOTE [ Joining processes that mpiexec did not
start ] in ember/distributed/_pmi.py).
"""

import json
import os
import socket
import sys

import pytest

pytest.importorskip("mpi4py")

sys.path.insert(0, os.path.dirname(__file__))


def _ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@pytest.mark.parametrize("world", [2, 4])
def test_collectives_match_gloo(world, tmp_path):
    import _collectives_job

    import ember.multiprocessing as mp

    mp.spawn(_collectives_job.run, args=(world, _ports(2), str(tmp_path)), nprocs=world)
    for r in range(world):
        result = json.loads((tmp_path / f"rank{r}.json").read_text())
        assert result["failed"] == [], "\n".join(result["failed"])
        assert result["checks"] >= 50


# torch.distributed's public names that ember defines in other modules (GradBucket is DDP's): each must be
# there in a fresh `import ember.distributed`, before anything imports DDP, as in torch.
EXPORTS = ["GradBucket", "ProcessGroup", "Work", "ReduceOp", "Backend", "P2POp", "GroupMember", "Store",
           "TCPStore", "FileStore", "HashStore", "PrefixStore", "DistBackendError"]


def test_exports_in_a_fresh_process():
    import subprocess

    code = ("import sys, ember.distributed as e, torch.distributed as t\n"
            "assert 'ember.nn.parallel.distributed' not in sys.modules\n"
            f"print([n for n in {EXPORTS!r} if not hasattr(t, n) or not hasattr(e, n)])")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"

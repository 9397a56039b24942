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

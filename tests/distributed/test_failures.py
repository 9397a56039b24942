"""torch.distributed's errors when something is missing, in ember and torch (gloo).

- No process group: every entry point raises torch's exception and message (in this process).
- init methods file:// and tcp://, and the backends a CPU-only torch has or lacks (`_single_job.py`, one
  process of world_size 1 per library): "nccl" fails with torch's error, "mpi" runs in ember (on MPI, as
  "gloo" does) where torch's wheels have no MPI.
- A rank that does not come (a real 2-rank job, `_failures_job.py`): a collective past its group's timeout
  raises gloo's "Timed out waiting ...ms for recv operation to complete" and breaks the group ("Application
  timeout caused pair closure" for the next op), and `monitored_barrier` names the missing rank, in the
  group's timeout (NOTE [ Collective timeouts ] in ember/distributed/_c10d.py).
"""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
from compare import assert_same_error

pytest.importorskip("mpi4py")

sys.path.insert(0, os.path.dirname(__file__))

UNINITIALIZED = [
    lambda lib, x: lib.distributed.all_reduce(x),
    lambda lib, x: lib.distributed.all_reduce(x, async_op=True),
    lambda lib, x: lib.distributed.broadcast(x, 0),
    lambda lib, x: lib.distributed.all_gather([x], x),
    lambda lib, x: lib.distributed.barrier(),
    lambda lib, x: lib.distributed.monitored_barrier(),
    lambda lib, x: lib.distributed.send(x, 1),
    lambda lib, x: lib.distributed.get_rank(),
    lambda lib, x: lib.distributed.get_world_size(),
    lambda lib, x: lib.distributed.new_group([0]),
    lambda lib, x: lib.distributed.destroy_process_group(),
    lambda lib, x: lib.distributed.all_gather_object([None], 1),
    lambda lib, x: lib.distributed.broadcast_object_list([1], 0),
]


@pytest.mark.parametrize("fn", UNINITIALIZED)
def test_no_process_group(fn):
    assert_same_error(fn, np.ones(3, np.float32))


def _ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def test_timeouts_and_monitored_barrier(tmp_path):
    import _failures_job

    import ember.multiprocessing as mp

    mp.spawn(_failures_job.run, args=(2, _ports(2), str(tmp_path)), nprocs=2)
    rows = json.loads((tmp_path / "rank0.json").read_text())
    torch_rows = [r[1:4] for r in rows if r[0] == "torch"]
    ember_rows = [r[1:4] for r in rows if r[0] == "ember"]
    assert [r[0] for r in torch_rows] == ["all_reduce timeout", "next op on the group", "monitored_barrier"]
    assert ember_rows == torch_rows
    seconds = {r[1]: r[4] for r in rows if r[0] == "ember"}
    assert 1.0 <= seconds["all_reduce timeout"] < 10 and 1.0 <= seconds["monitored_barrier"] < 10
    assert json.loads((tmp_path / "rank1.json").read_text()) == []


def test_init_methods_and_backends():
    job = os.path.join(os.path.dirname(__file__), "_single_job.py")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = {}
    for lib in ("torch", "ember"):
        res = subprocess.run([sys.executable, job, lib, str(_ports(1)[0])], capture_output=True, text=True,
                             env=env, timeout=300)
        assert res.returncode == 0, res.stderr
        out[lib] = json.loads(res.stdout.strip().splitlines()[-1])
    t, e = out["torch"], out["ember"]
    assert t["gloo file://"] == ["ok", ["gloo", 0, 1, True, [1.0, 2.0, 3.0, 4.0]]]
    assert e["gloo file://"] == t["gloo file://"] and e["gloo tcp://"] == t["gloo tcp://"]
    assert e["nccl"] == t["nccl"] == ["RuntimeError", "Distributed package doesn't have NCCL built in"]
    assert e["initialized after nccl"] is t["initialized after nccl"] is False
    assert t["mpi"][0] == "RuntimeError" and e["mpi"] == ["ok", ["mpi", 0, 1, True, [1.0, 2.0, 3.0, 4.0]]]

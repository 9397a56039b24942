"""DistributedDataParallel, comm hooks, SyncBatchNorm, ZeRO, join and checkpointing on 2 real ranks, held to
torch's DDP over gloo (and to single-process training on the full batch) in the same processes.

One job runs every check (tests/distributed/ddp_worker.py, started as torchrun starts ranks: RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT in the environment); each check is then one test case here.
DataParallel, which needs no process group, is checked in this process.
"""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
from compare import check

WORKER = os.path.join(os.path.dirname(__file__), "ddp_worker.py")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp")
    base = dict(os.environ, WORLD_SIZE="2", LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                MASTER_PORT=str(_free_port()), Q_TORCH_PORT=str(_free_port()), OMP_NUM_THREADS="1",
                OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
                PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, WORKER, str(out)], env=dict(base, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in range(2)]
    logs = []
    try:
        for p in procs:
            logs.append(p.communicate(timeout=300)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for r, p in enumerate(procs):
        assert p.returncode == 0, f"rank {r} failed:\n{logs[r][-4000:]}"
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(2)]


# the names of the worker's checks, in its order (the test ids); the job must report exactly these
CHECKS = [
    *[f"ddp {n} == {ref}" for n in ("default", "gradient_as_bucket_view", "small buckets",
                                     "find_unused_parameters", "static_graph") for ref in ("full batch", "torch ddp")],
    "ddp no_sync == torch ddp", "ddp buffers (BatchNorm) == torch ddp",
    *[f"ddp broadcast_buffers={f}: running stats minus the other rank's == torch ddp" for f in (False, True)],
    "ddp find_unused, branch used every other step == torch", "ddp unused parameter, find_unused == full batch",
    *[f"hook {n} == torch" for n in ("allreduce_hook", "fp16_compress_hook", "powerSGD rank 1",
                                     "powerSGD rank 2, no warm start", "powerSGD rank 2, batched", "top-k user hook",
                                     "quantization user hook")],
    "hook allreduce_hook == no hook", "error: register_comm_hook twice", "error: bf16 hook without CUDA",
    "error: module without trainable parameters", "error: unused parameter without find_unused_parameters",
    "state_dict keys", "repr",
    *[f"SyncBatchNorm step {s} {w}" for s in (0, 1) for w in ("output == BatchNorm on the full batch", "input grad")],
    "SyncBatchNorm weight/bias grads summed over ranks", "SyncBatchNorm running stats", "convert_sync_batchnorm type",
    *[f"ZeRO {c} {w}" for c in ("SGD", "Adam") for w in (f"== plain {c}", "bucket view == plain", "== torch ZeRO")],
    "ZeRO consolidated state_dict == torch's", "ZeRO state_dict groups / error off the consolidating rank",
    *[f"join uneven inputs divide_by_initial_world_size={d} == torch" for d in (True, False)],
    "first bucket launched before the last gradient", "buckets after rebuild",
    "rank-0 checkpoint loaded on every rank == rank 0's weights",
    "dcp save/load of get_state_dict, resumed training == uninterrupted",
    "dcp save/load of get_state_dict, resumed training == torch", "dcp non-tensor value restored", "dcp files",
]


def test_job_reports_every_check(job):
    for results in job:
        assert [r["name"] for r in results] == CHECKS


@pytest.mark.parametrize("rank", [0, 1])
@pytest.mark.parametrize("name", CHECKS)
def test_ddp_check(job, rank, name):
    entry = {r["name"]: r for r in job[rank]}[name]
    if "diff" in entry:
        assert entry["diff"] <= entry["tol"], entry
    else:
        assert entry["ember"] == entry["torch"]


# ---- DataParallel: on a CPU-only machine torch's runs the module as it is ------------------------------------

DATA_PARALLEL = [
    lambda lib, x: lib.nn.DataParallel(lib.nn.Linear(4, 3))(x),
    lambda lib, x: lib.nn.DataParallel(lib.nn.Linear(4, 3), device_ids=[0], dim=1)(x).sum(),
    lambda lib, x: sorted(lib.nn.DataParallel(lib.nn.Linear(4, 3)).state_dict()),
    lambda lib, x: lib.nn.DataParallel(lib.nn.Linear(4, 3)).device_ids,
    lambda lib, x: repr(lib.nn.DataParallel(lib.nn.Linear(4, 3))),
]


@pytest.mark.parametrize("fn", DATA_PARALLEL)
def test_data_parallel(fn):
    import torch

    import ember

    ember.manual_seed(0)
    torch.manual_seed(0)
    check(fn, np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32))

"""The launcher (`ember run --nproc-per-node N`, `python -m ember.distributed.run`) in real jobs.

- the ranks' environment is torchrun's (same variables, same values but for ports, ids and paths: real
  torchrun runs the same script as the oracle), output lines prefixed `[default<i>]:` with `--tee 3`;
- a rank that raises (under `@record`) or is killed ends the job in seconds: no rank is left running,
  and the report names the failed rank with its exit code and traceback;
- `--max-restarts` restarts the whole job, which resumes from its last checkpoint (seed 000 §4.2);
- two launcher runs with `--nnodes 2 --node-rank 0/1` make one job of two "nodes" (their MPI worlds joined).
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("mpi4py")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(args, tmp_path, timeout=120):
    # --standalone: a free port, so jobs of tests run in parallel do not meet
    return subprocess.run([sys.executable, "-m", "ember", "run", "--standalone"] + args, cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=timeout)


ENV_SCRIPT = """
import json, os, sys
import torch
keys = sorted(k for k in os.environ if k.startswith(("TORCHELASTIC", "RANK", "LOCAL_", "WORLD_SIZE",
              "GROUP_", "ROLE_", "MASTER_", "OMP_NUM", "TORCH_NCCL")))
with open(sys.argv[1] + os.environ["LOCAL_RANK"] + ".json", "w") as fh:
    json.dump({k: os.environ[k] for k in keys}, fh)
print("hello from", os.environ["RANK"], flush=True)
"""

VARYING = {"MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_ERROR_FILE"}


def _env_rows(tmp_path, tag):
    return {r: json.loads((tmp_path / f"{tag}{r}.json").read_text()) for r in (0, 1)}


def test_rank_environment_is_torchruns(tmp_path):
    (tmp_path / "env.py").write_text(ENV_SCRIPT)
    mine = _launch(["--nproc-per-node", "2", "--tee", "3", "env.py", "ember"], tmp_path)
    assert mine.returncode == 0, mine.stderr
    theirs = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                             "2", "env.py", "torch"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env={k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"})
    assert theirs.returncode == 0, theirs.stderr
    e, t = _env_rows(tmp_path, "ember"), _env_rows(tmp_path, "torch")
    assert sorted(mine.stdout.splitlines()) == ["[default0]:hello from 0", "[default1]:hello from 1"]
    for r in (0, 1):
        assert sorted(e[r]) == sorted(t[r])
        assert {k: v for k, v in e[r].items() if k not in VARYING} == \
               {k: v for k, v in t[r].items() if k not in VARYING}
        assert e[r]["TORCHELASTIC_ERROR_FILE"].endswith(f"attempt_0/{r}/error.json")


FAIL_SCRIPT = """
import os, signal, sys, time
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

@record
def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    with open(f"pid{rank}", "w") as fh:
        fh.write(str(os.getpid()))
    x = torch.ones(2)
    dist.all_reduce(x)
    dist.barrier()
    if rank == 1:
        if sys.argv[1] == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise ValueError("rank 1 gives up")
    time.sleep(120)

main()
"""


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.parametrize("how", ["raise", "kill"])
def test_failed_rank_ends_the_job(tmp_path, how):
    (tmp_path / "fail.py").write_text(FAIL_SCRIPT)
    t0 = time.monotonic()
    res = _launch(["--nproc-per-node", "2", "fail.py", how], tmp_path, timeout=100)
    elapsed = time.monotonic() - t0
    assert res.returncode == 1
    assert elapsed < 100  # rank 0 sleeps 120 s: it was stopped
    for r in (0, 1):
        assert not _alive(int((tmp_path / f"pid{r}").read_text()))
    err = res.stderr
    assert "ChildFailedError" in err and "fail.py FAILED" in err
    assert "rank      : 1 (local_rank: 1)" in err
    if how == "raise":
        assert "exitcode  : 1" in err and "ValueError: rank 1 gives up" in err and "error.json" in err
    else:
        assert "exitcode  : -9" in err and "Signal 9 (SIGKILL) received by PID" in err


SLEEP_SCRIPT = """
import os, time
import torch.distributed as dist

dist.init_process_group("gloo")
with open(f"pid{dist.get_rank()}", "w") as fh:
    fh.write(str(os.getpid()))
time.sleep(120)
"""


def _descendants(root):
    """The pids under `root` (children's children too), from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().split(")")[-1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [root]
    while stack:
        for c in children.get(stack.pop(), []):
            out.append(c)
            stack.append(c)
    return out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_stopped_launcher_leaves_no_process(tmp_path, sig):
    """SIGTERM (or SIGKILL) to the launcher: mpiexec, its proxy and every rank end too, within seconds."""
    (tmp_path / "sleep.py").write_text(SLEEP_SCRIPT)
    with open(tmp_path / "out.txt", "w") as out:  # (not pipes: the job's processes would hold them open)
        launcher = subprocess.Popen([sys.executable, "-m", "ember", "run", "--standalone", "--nproc-per-node",
                                     "2", "sleep.py"], cwd=tmp_path, env=_env(), stdout=out, stderr=out)
    job = []
    try:
        deadline = time.monotonic() + 90
        while not all((tmp_path / f"pid{r}").exists() for r in (0, 1)) and time.monotonic() < deadline:
            time.sleep(0.1)
        job = _descendants(launcher.pid)
        ranks = [int((tmp_path / f"pid{r}").read_text()) for r in (0, 1)]
        assert set(ranks) <= set(job) and len(job) >= 4  # mpiexec, its proxy, the two ranks
        t0 = time.monotonic()
        launcher.send_signal(sig)
        code = launcher.wait(timeout=30)
        while any(_alive(p) for p in job) and time.monotonic() - t0 < 20:
            time.sleep(0.1)
        assert [p for p in job if _alive(p)] == []
        if sig == signal.SIGTERM:
            assert code == 128 + signal.SIGTERM
            assert "SignalException" in (tmp_path / "out.txt").read_text()
    finally:  # (a failed check must not leave the job running)
        for p in [launcher.pid] + job:
            if _alive(p):
                os.kill(p, signal.SIGKILL)


RESTART_SCRIPT = """
import os
import sys
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
start = 0
if os.path.exists("ckpt.pt"):
    state = torch.load("ckpt.pt")
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    start = state["step"]
    print(f"rank {rank} resumed at step {start}", flush=True)
for step in range(start, 6):
    x = torch.full((4, 3), float(step + rank))
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
    opt.step()
    if rank == 0:
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step + 1}, "ckpt.pt")
    dist.barrier()
    if step == 2 and rank == 1 and os.environ["TORCHELASTIC_RESTART_COUNT"] == "0" and sys.argv[1:] != ["ref"]:
        raise RuntimeError("lost rank 1")
print(f"rank {rank} done restart={os.environ['TORCHELASTIC_RESTART_COUNT']} "
      f"w={model.weight.detach().numpy().round(6).tolist()}", flush=True)
"""


def test_restart_resumes_from_checkpoint(tmp_path):
    (tmp_path / "train.py").write_text(RESTART_SCRIPT)
    res = _launch(["--nproc-per-node", "2", "--max-restarts", "1", "train.py"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "lost rank 1" in res.stderr
    assert "rank 0 resumed at step 3" in res.stdout and "rank 1 resumed at step 3" in res.stdout
    # the ranks' lines may interleave on the console (a print's text and newline are two writes)
    done = sorted(re.findall(r"rank (\d) done restart=(\d) w=(\[\[[^\]]*\]\])", res.stdout))
    assert [(r, restart) for r, restart, _ in done] == [("0", "1"), ("1", "1")]
    # an uninterrupted run ends with the same weights
    (tmp_path / "ckpt.pt").unlink()
    ref = _launch(["--nproc-per-node", "2", "train.py", "ref"], tmp_path)
    assert ref.returncode == 0, ref.stderr
    ref_done = sorted(re.findall(r"rank (\d) done restart=(\d) w=(\[\[[^\]]*\]\])", ref.stdout))
    assert [w for _, _, w in done] == [w for _, _, w in ref_done] and len(ref_done) == 2


NODES_SCRIPT = """
import os
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
x = torch.full((3,), float(dist.get_rank() + 1))
dist.all_reduce(x)
y = [torch.zeros(1) for _ in range(dist.get_world_size())]
dist.all_gather(y, torch.full((1,), float(dist.get_rank())))
print(f"rank {dist.get_rank()} node {os.environ['GROUP_RANK']} world {dist.get_world_size()} "
      f"sum {x.tolist()} gathered {[float(v) for v in y]}", flush=True)
dist.destroy_process_group()
"""


@pytest.mark.parametrize("rdzv", ["static", "c10d"])
def test_two_nodes(tmp_path, rdzv):
    """c10d: node 1's launcher learns the agent store's address from the rendezvous store on node 0."""
    (tmp_path / "nodes.py").write_text(NODES_SCRIPT)
    port = str(_port())
    where = ["--master-addr", "127.0.0.1", "--master-port", port] if rdzv == "static" else \
        ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "two"]
    procs = [subprocess.Popen([sys.executable, "-m", "ember", "run", "--nnodes", "2", "--node-rank", str(i),
                               "--nproc-per-node", "1"] + where + ["nodes.py"], cwd=tmp_path, env=_env(),
                              stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for i in (0, 1)]
    outs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.send_signal(signal.SIGINT)
            raise
        assert p.returncode == 0, err
        outs.append(out.strip())
    assert outs == [f"rank {i} node {i} world 2 sum [3.0, 3.0, 3.0] gathered [0.0, 1.0]" for i in (0, 1)]


HOSTS_SCRIPT = """
import json, os, sys, time
import torch
import torch.distributed as dist
keys = sorted(k for k in os.environ if k.startswith(("TORCHELASTIC", "RANK", "LOCAL_", "WORLD_SIZE",
              "GROUP_", "ROLE_", "MASTER_", "OMP_NUM", "TORCH_NCCL")))
with open(sys.argv[1] + os.environ["RANK"] + ".json", "w") as fh:
    json.dump({k: os.environ[k] for k in keys}, fh)
if sys.argv[1] == "torch":
    sys.exit(0)
dist.init_process_group("gloo")
rank = dist.get_rank()
with open(f"pid{rank}", "w") as fh:
    fh.write(f"{os.getpid()} {os.getppid()}")
x = torch.full((2,), float(rank + 1))
dist.all_reduce(x)
print(f"rank {rank} sum {x.tolist()}", flush=True)
dist.barrier()
if sys.argv[2:] == ["fail"]:
    if rank == 3:
        raise ValueError("rank 3 gives up")
    time.sleep(120)
"""


def test_hosts_make_nodes(tmp_path):
    """`--hosts A,B --mpi-launcher fork`: two "nodes" on this machine from one launcher (NOTE [ Several nodes
    through MPI's host list ] in run.py): each rank has torchrun's variables of `--nnodes 2 --node-rank k`,
    each node's ranks are children of their node's hydra proxy, an all_reduce spans the nodes, and a rank
    that fails on node 1 ends the whole job, leaving no process."""
    (tmp_path / "hosts.py").write_text(HOSTS_SCRIPT)
    port = str(_port())
    common = ["--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port", port, "hosts.py"]
    base = [sys.executable, "-m", "ember", "run", "--hosts", f"localhost,{socket.gethostname()}",
            "--mpi-launcher", "fork"]
    mine = subprocess.run(base + common + ["ember"], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=120)
    assert mine.returncode == 0, mine.stderr
    # (the ranks' lines may interleave on the console: a print's text and newline are two writes)
    assert sorted(re.findall(r"rank \d sum \[[^\]]*\]", mine.stdout)) == \
        [f"rank {r} sum [10.0, 10.0]" for r in range(4)]
    parents = [int((tmp_path / f"pid{r}").read_text().split()[1]) for r in range(4)]
    assert parents[0] == parents[1] != parents[2] == parents[3]  # one proxy per node
    tport = str(_port())
    torch_env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    theirs = [subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node-rank",
                                str(k)] + common[:5] + [tport] + common[6:] + ["torch"], cwd=tmp_path,
                               env=torch_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for k in (0, 1)]
    try:
        for p in theirs:
            assert p.wait(timeout=120) == 0, p.stderr.read()
    finally:  # (a failed check must not leave torchrun running)
        for p in theirs:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stderr.close()
    for r in range(4):
        e, t = (json.loads((tmp_path / f"{tag}{r}.json").read_text()) for tag in ("ember", "torch"))
        assert sorted(e) == sorted(t)
        assert {k: v for k, v in e.items() if k not in VARYING} == \
               {k: v for k, v in t.items() if k not in VARYING}
        assert e["TORCHELASTIC_ERROR_FILE"].endswith(f"attempt_0/{r % 2}/error.json")
    t0 = time.monotonic()
    res = subprocess.run(base + common + ["ember", "fail"], cwd=tmp_path, env=_env(), capture_output=True,
                         text=True, timeout=100)
    assert res.returncode == 1 and time.monotonic() - t0 < 100  # the others sleep 120 s: they were stopped
    assert "rank      : 3 (local_rank: 1)" in res.stderr and "ValueError: rank 3 gives up" in res.stderr
    pids = [int((tmp_path / f"pid{r}").read_text().split()[0]) for r in range(4)]
    proxies = {int((tmp_path / f"pid{r}").read_text().split()[1]) for r in range(4)}
    assert [p for p in pids + sorted(proxies) if _alive(p)] == []
    bad = subprocess.run(base + ["--nnodes", "3"] + common + ["ember"], cwd=tmp_path, env=_env(),
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "ValueError: ember.distributed.run: --hosts names 2 nodes" in bad.stderr


@pytest.mark.parametrize("backend", ["static", "c10d"])
def test_rdzv_flags_are_torchruns(tmp_path, backend):
    """`--rdzv-backend/--rdzv-endpoint/--rdzv-id`: the ranks' variables are torchrun's (static: MASTER_ADDR/PORT
    are the endpoint; c10d: the agent store's own port on node 0, named by the host's name), and the ranks
    meet (an all_reduce)."""
    (tmp_path / "hosts.py").write_text(HOSTS_SCRIPT)
    ports = {}
    for tag, cmd in (("ember", [sys.executable, "-m", "ember", "run"]),
                     ("torch", [sys.executable, "-m", "torch.distributed.run"])):
        ports[tag] = port = _port()
        res = subprocess.run(cmd + ["--rdzv-backend", backend, "--rdzv-endpoint", f"127.0.0.1:{port}",
                                    "--rdzv-id", "job7", "--nnodes", "1", "--nproc-per-node", "2", "hosts.py",
                                    tag], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                             env=_env() if tag == "ember" else
                             {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"})
        assert res.returncode == 0, res.stderr
        if tag == "ember":
            assert sorted(re.findall(r"rank \d sum \[[^\]]*\]", res.stdout)) == \
                [f"rank {r} sum [3.0, 3.0]" for r in range(2)]
    for r in range(2):
        e, t = (json.loads((tmp_path / f"{tag}{r}.json").read_text()) for tag in ("ember", "torch"))
        assert sorted(e) == sorted(t)
        varying = {"MASTER_PORT", "TORCHELASTIC_ERROR_FILE"}
        assert {k: v for k, v in e.items() if k not in varying} == \
               {k: v for k, v in t.items() if k not in varying}
        assert e["TORCHELASTIC_RUN_ID"] == "job7"
        assert e["TORCHELASTIC_ERROR_FILE"].endswith(f"attempt_0/{r}/error.json")
        for tag, env in (("ember", e), ("torch", t)):
            assert (env["MASTER_PORT"] == str(ports[tag])) == (backend == "static")

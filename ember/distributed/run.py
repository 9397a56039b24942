"""The launcher: torchrun's command line over mpiexec (`python -m ember.distributed.run`, `ember run
--nproc-per-node N script.py`).

    python -m ember.distributed.run --nproc-per-node 4 train.py --epochs 3
    python -m ember.distributed.run --nnodes 2 --node-rank 0 --master-addr HOST0 --master-port 29500 ...
    python -m ember.distributed.run --hosts h1,h2 --nproc-per-node 2 train.py   (one mpiexec, MPI's hosts)

Each launcher run starts its node's ranks with one mpiexec (MPMD: one `-n 1 -env ...` block per rank, so
each rank gets torch's variables: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
GROUP_WORLD_SIZE, ROLE_RANK, ROLE_NAME, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID,
TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_ERROR_FILE, TORCHELASTIC_USE_AGENT_STORE,
OMP_NUM_THREADS=1 unless set). The node-0 launcher hosts the job's TCPStore (as torchrun's agent does), so
the ranks rendezvous through it; with several launcher runs (`--nnodes N --node-rank i`) the nodes' MPI
worlds are joined into one in `init_process_group` (NOTE [ One world communicator, three ways ] in
_mpi.py). `--hosts` instead hands MPI a host list and starts every node's ranks from this one run.

NOTE [ Several nodes through MPI's host list ]
`--hosts h1,h2 --nproc-per-node N` runs the job of len(hosts) nodes from this one launcher: mpiexec gets
`-hosts h1:N,h2:N` (hydra places the MPMD blocks in order, so ranks kN..kN+N-1 run on host k, node k) and
each rank torchrun's variables of `--nnodes len(hosts) --node-rank k` (GROUP_RANK k, LOCAL_RANK rank % N,
LOCAL_WORLD_SIZE N). Hydra reaches the hosts with ssh by default; `--mpi-launcher` picks another of its
launchers (`fork` starts every host's proxy on this machine: two host names of this machine then make two
"nodes" here, which is how the tests run it; `slurm` etc. inside a batch job). The launcher watches the
ranks through their run directories under its temporary directory (NOTE [ Stopping the job when a rank
fails ]), so on real machines that directory must be visible at the same path on every host (TMPDIR on a
shared file system); otherwise only mpiexec's own exit ends the job (a rank killed or aborting MPI ends it,
a rank exiting with an error code while the others wait in a collective does not).

NOTE [ The rendezvous backends ]
As torchrun's, with the nodes' ranks fixed by --node-rank (no elastic membership). `--rdzv-backend static`
(the default): the node-0 launcher hosts the agent store at --rdzv-endpoint (else --master-addr:port) and the
ranks get that address as MASTER_ADDR/PORT. `--rdzv-backend c10d` (and `--standalone`): the endpoint's store
is the rendezvous store only; node 0 starts the agent store on a free port and publishes its address there
(`--local-addr`, else the host's fully qualified name) for the other nodes' launchers, and the ranks get
that address and port. --rdzv-id is TORCHELASTIC_RUN_ID (a fresh uuid with --standalone).

NOTE [ Output of the ranks ]
As torchrun's: by default the ranks write to the launcher's console as they are; `--redirects N` (N != 0)
sends each rank's stdout and stderr to `<log-dir>/<run id>_<restart>/attempt_<restart>/<local rank>/
stdout.log|stderr.log` instead (a temporary directory without `--log-dir`), and `--tee N` to both, the
console lines prefixed `[<role><local rank>]:`. (torchrun's N picks stdout, stderr or both; here any
non-zero N applies to both.)

NOTE [ Stopping the job when a rank fails ]
mpiexec (hydra) ends a job when a rank is killed or aborts MPI, but a rank that exits with an error code
leaves the others running (they may sleep, compute, or wait in a collective forever). So the launcher
watches the ranks itself: every rank's wrapper (`_worker.py`) writes its pid and, at the end, its exit
code into the rank's run directory; a non-zero exit code, or a pid gone without one (killed), is a
failure. The launcher then sends SIGTERM to mpiexec and to every rank's pid (the ranks run in sessions
of their own, so a process-group kill would miss them), and SIGKILL to what is left 5 s later: the
job ends within seconds and leaves no process behind. It reports the first failure as torchrun does
(`ChildFailedError`: rank, exit code, pid, error file, traceback of a `@record` entry point) and, with
`--max-restarts`, starts the whole job again with TORCHELASTIC_RESTART_COUNT incremented: a script that
saves checkpoints resumes from its last one.

NOTE [ Stopping the job when the launcher is stopped ]
mpiexec runs in a session of its own (so that the launcher's terminal signals reach the job only through
the launcher), so a signal to the launcher alone would leave mpiexec, its proxy and the ranks running.
The launcher therefore turns SIGTERM, SIGHUP and SIGQUIT into an exception (torchrun's SignalException),
stops the job as after a failed rank, and exits with 128 + the signal's number; and mpiexec is started with
PR_SET_PDEATHSIG = SIGTERM, so that even a launcher killed by SIGKILL takes the job with it (mpiexec ends
its proxy, and each rank's wrapper asks for SIGTERM when the proxy, its parent, dies: `_worker.py`).
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

__all__ = ["main", "get_args_parser", "parse_args", "run"]


def get_args_parser():
    p = argparse.ArgumentParser(prog="ember.distributed.run", description="torchrun for ember, over mpiexec")
    add = p.add_argument
    add("--nnodes", type=str, default="1", help="number of nodes, or MIN:MAX (MAX is used)")
    add("--nproc-per-node", "--nproc_per_node", type=str, default="1", help="ranks per node (int, or cpu/auto)")
    add("--node-rank", "--node_rank", type=int, default=0, help="this node's rank")
    add("--master-addr", "--master_addr", type=str, default="127.0.0.1", help="address of the node-0 store")
    add("--master-port", "--master_port", type=int, default=29500, help="port of the node-0 store")
    add("--rdzv-backend", "--rdzv_backend", type=str, default="static", help="accepted: static, c10d")
    add("--rdzv-endpoint", "--rdzv_endpoint", type=str, default="", help="HOST:PORT of the store")
    add("--rdzv-id", "--rdzv_id", type=str, default="none", help="the job's id (TORCHELASTIC_RUN_ID)")
    add("--rdzv-conf", "--rdzv_conf", type=str, default="", help="accepted for torchrun compatibility")
    add("--standalone", action="store_true", help="a single-node job with a free local port")
    add("--max-restarts", "--max_restarts", type=int, default=0, help="restarts of the whole job on failure")
    add("--monitor-interval", "--monitor_interval", type=float, default=0.1, help="seconds between checks")
    add("--role", type=str, default="default", help="the workers' role name")
    add("--tee", "-t", type=str, default="0", help="prefix and print each rank's output (torchrun's --tee)")
    add("--redirects", "-r", type=str, default="0", help="accepted for torchrun compatibility")
    add("--log-dir", "--log_dir", type=str, default=None, help="write each rank's output under this directory")
    add("--local-addr", "--local_addr", type=str, default=None, help="accepted for torchrun compatibility")
    add("--start-method", "--start_method", type=str, default="spawn", help="accepted (mpiexec starts ranks)")
    add("--hosts", type=str, default=None, help="comma-separated host list handed to mpiexec (ember): one "
        "node per host, --nproc-per-node ranks on each")
    add("--mpi-launcher", type=str, default=None, help="how mpiexec reaches the hosts (ember; hydra's "
        "-launcher: ssh (its default), rsh, fork, slurm, ...)")
    add("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    add("--no-python", "--no_python", action="store_true", help="run the script as an executable")
    add("--run-path", "--run_path", action="store_true", help="run the script with runpy.run_path")
    add("training_script", type=str, help="the script (or module) each rank runs")
    add("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args):
    return get_args_parser().parse_args(args)


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _nproc(value):
    if value in ("cpu", "auto"):
        return os.cpu_count() or 1
    return int(value)


def _rank_env(ns, local_rank, rank, world_size, nproc, nnodes, restart, run_id, error_file, master):
    env = {"RANK": rank, "LOCAL_RANK": local_rank, "WORLD_SIZE": world_size, "LOCAL_WORLD_SIZE": nproc,
           "GROUP_RANK": rank // nproc, "GROUP_WORLD_SIZE": nnodes, "ROLE_RANK": rank, "ROLE_NAME": ns.role,
           "ROLE_WORLD_SIZE": world_size, "MASTER_ADDR": master[0], "MASTER_PORT": master[1],
           "TORCHELASTIC_RUN_ID": run_id, "TORCHELASTIC_RESTART_COUNT": restart,
           "TORCHELASTIC_MAX_RESTARTS": ns.max_restarts, "TORCHELASTIC_ERROR_FILE": error_file,
           "TORCHELASTIC_USE_AGENT_STORE": "True", "TORCH_NCCL_ASYNC_ERROR_HANDLING": 1,
           "TORCHELASTIC_SIGNALS_TO_HANDLE": "SIGTERM,SIGINT,SIGHUP,SIGQUIT"}
    if "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = 1
    if ns.tee != "0":
        env["EMBER_RUN_PREFIX"] = f"[{ns.role}{local_rank}]:"
    return {k: str(v) for k, v in env.items()}


def _host_args(ns, hosts, nproc):
    """mpiexec's global host options (NOTE [ Several nodes through MPI's host list ])."""
    out = ["-hosts", ",".join(f"{h}:{nproc}" for h in hosts)] if hosts else []
    return out + (["-launcher", ns.mpi_launcher] if ns.mpi_launcher else [])


def _command(ns, alias):
    if ns.no_python:
        return [ns.training_script] + ns.training_script_args
    cmd = [sys.executable, "-u", "-m", "ember.distributed._worker"] + (["--alias"] if alias else [])
    return cmd + (["-m"] if ns.module else []) + [ns.training_script] + ns.training_script_args


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class _Ranks:
    """The run directories of one attempt's ranks: pid, exit code, error file (NOTE [ Stopping ... ])."""

    def __init__(self, dirs):
        self.dirs = dirs  # {rank - the launcher's first rank: run directory}
        for d in dirs.values():
            os.makedirs(d, exist_ok=True)

    def _read(self, lr, name):
        try:
            with open(os.path.join(self.dirs[lr], name)) as fh:
                return int(fh.read().strip())
        except (OSError, ValueError):
            return None

    def pids(self):
        return {lr: p for lr in self.dirs if (p := self._read(lr, "pid")) is not None}

    def state(self, lr):
        """(exit code or None, pid or None): a vanished pid without an exit code reads as -9."""
        code, pid = self._read(lr, "exitcode"), self._read(lr, "pid")
        if code is None and pid is not None and not _pid_alive(pid):
            time.sleep(0.05)
            code = self._read(lr, "exitcode")
            if code is None:
                code = -signal.SIGKILL
        return code, pid

    def failures(self):
        return {lr: s for lr in self.dirs if (s := self.state(lr))[0] not in (None, 0)}


def _stop(proc, ranks):
    """Terminate mpiexec and every rank; SIGKILL what is left after 5 seconds."""
    targets = list(ranks.pids().values())
    for pid in targets:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (proc.poll() is None or any(_pid_alive(p) for p in targets)):
        time.sleep(0.05)
    for pid in targets:
        if _pid_alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def run(ns, alias=False):
    """Run the job described by parsed arguments `ns`; returns the process exit code."""
    nnodes = int(str(ns.nnodes).split(":")[-1])
    nproc = _nproc(ns.nproc_per_node)
    hosts = ns.hosts.split(",") if ns.hosts else None
    if hosts:
        if ns.nnodes != "1" and nnodes != len(hosts) or ns.node_rank != 0:
            raise ValueError(f"ember.distributed.run: --hosts names {len(hosts)} nodes, started from this one "
                             f"launcher (got --nnodes {ns.nnodes} --node-rank {ns.node_rank})")
        nnodes = len(hosts)
    if ns.standalone:
        nnodes, ns.node_rank, ns.rdzv_backend = 1, 0, "c10d"
        ns.rdzv_endpoint, run_id = f"localhost:{_free_port()}", str(uuid.uuid4())
    else:
        run_id = ns.rdzv_id
    master = (ns.master_addr, ns.master_port)
    if ns.rdzv_endpoint:
        host, _, port = ns.rdzv_endpoint.rpartition(":")
        master = (host or ns.rdzv_endpoint, int(port) if port.isdigit() else 29400)
    world_size = nnodes * nproc
    local = range(world_size) if hosts else range(ns.node_rank * nproc, (ns.node_rank + 1) * nproc)
    local_rank = {r: r % nproc for r in local}
    stores, master = _rendezvous(ns, master, hosts or nnodes > 1)
    base = tempfile.mkdtemp(prefix="torchelastic_")
    name = ns.training_script if not ns.no_python else os.path.basename(ns.training_script)
    try:
        for restart in range(ns.max_restarts + 1):
            # one node's directories are <base>/<run id>_<restart>/attempt_<restart>/<local rank> as
            # torchrun's; with --hosts, each node has its own <base>/node<k>
            node_dir = {r: os.path.join(base, f"node{r // nproc}") if hosts else base for r in local}
            attempt = f"{run_id}_{restart}", f"attempt_{restart}"
            ranks = _Ranks({r - local[0]: os.path.join(node_dir[r], *attempt, str(local_rank[r]))
                            for r in local})
            cmd = ["mpiexec"] + _host_args(ns, hosts, nproc)
            first = len(cmd)
            for rank in local:
                lr = local_rank[rank]
                env = _rank_env(ns, lr, rank, world_size, nproc, nnodes, restart, run_id,
                                os.path.join(ranks.dirs[rank - local[0]], "error.json"), master)
                if ns.tee != "0" or ns.redirects != "0":  # NOTE [ Output of the ranks ]
                    logs = os.path.join(ns.log_dir, f"node{rank // nproc}") if ns.log_dir and hosts else \
                        ns.log_dir or node_dir[rank]
                    env["EMBER_RUN_LOG_DIR"] = os.path.join(logs, *attempt, str(lr))
                    os.makedirs(env["EMBER_RUN_LOG_DIR"], exist_ok=True)
                if len(cmd) > first:
                    cmd.append(":")
                cmd += ["-n", "1"]
                for k, v in env.items():
                    cmd += ["-env", k, v]
                cmd += _command(ns, alias)
            proc = subprocess.Popen(cmd, start_new_session=True, preexec_fn=_die_with_parent_fn())
            code, failures = _watch(proc, ranks, ns.monitor_interval)
            if code == 0:
                return 0
            _report(name, failures or {0: (code, None)}, ranks, local[0], nproc)
            if restart < ns.max_restarts:
                print(f"[ember.distributed.run] restarting the job ({restart + 1}/{ns.max_restarts})",
                      file=sys.stderr, flush=True)
        return 1
    finally:
        shutil.rmtree(base, ignore_errors=True)
        del stores


def _rendezvous(ns, endpoint, several):
    """The job's stores and the ranks' (MASTER_ADDR, MASTER_PORT) (NOTE [ The rendezvous backends ])."""
    from ._store import TCPStore

    if ns.rdzv_backend not in ("static", "c10d"):
        raise ValueError(f"ember.distributed.run: --rdzv-backend {ns.rdzv_backend!r} is not supported "
                         "(static, c10d)")
    host = endpoint[0] if several else "127.0.0.1"
    if ns.rdzv_backend == "static":  # the agent's store is at the endpoint; ranks connect to it
        if ns.node_rank != 0:
            return [], endpoint
        return [TCPStore(host, endpoint[1], is_master=True, wait_for_workers=False)], endpoint
    if ns.node_rank != 0:  # node 0 publishes where its agent store is
        rdzv = TCPStore(endpoint[0], endpoint[1], is_master=False, wait_for_workers=False)
        return [rdzv], (rdzv.get(_MASTER_ADDR_KEY).decode(), int(rdzv.get(_MASTER_PORT_KEY).decode()))
    rdzv = TCPStore(host, endpoint[1], is_master=True, wait_for_workers=False)
    addr = ns.local_addr or socket.getfqdn()
    agent = TCPStore("", 0, is_master=True, wait_for_workers=False)  # (addr may name any interface)
    rdzv.set(_MASTER_ADDR_KEY, addr)
    rdzv.set(_MASTER_PORT_KEY, str(agent.port))
    return [rdzv, agent], (addr, agent.port)


_MASTER_ADDR_KEY, _MASTER_PORT_KEY = "MASTER_ADDR", "MASTER_PORT"  # (torch's RendezvousStoreInfo keys)


def _die_with_parent_fn():
    """A function for mpiexec's child to call before exec: SIGTERM it when the launcher dies, even by SIGKILL
    (NOTE [ Stopping the job when the launcher is stopped ]). libc is looked up here, before the fork (the
    child of a threaded parent must not load libraries), or None without prctl."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


class _Stopped(Exception):
    """The launcher got SIGTERM/SIGHUP/SIGQUIT (torchrun's SignalException)."""

    def __init__(self, signum):
        super().__init__(f"Process {os.getpid()} got signal: {signum}")
        self.signum = signum


def _raise_stopped(signum, frame):
    raise _Stopped(signum)


def _watch(proc, ranks, interval):
    """Wait for the job; stop it at the first failed rank (NOTE [ Stopping the job when a rank fails ]).

    Returns (exit code, the failures seen before the job was stopped: {local rank: (exit code, pid)}).
    """
    try:
        while True:
            code = proc.poll()
            failures = ranks.failures()
            if failures:
                _stop(proc, ranks)
                return 1, failures
            if code is not None:
                if code != 0:
                    _stop(proc, ranks)
                return code, ranks.failures()
            time.sleep(interval)
    except KeyboardInterrupt:
        _stop(proc, ranks)
        return 130, {}
    except _Stopped:
        _stop(proc, ranks)
        raise


def _report(name, failures, ranks, first_rank, nproc):
    from .elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

    out = {}
    for i, (code, pid) in failures.items():
        error_file = os.path.join(ranks.dirs.get(i, ""), "error.json")
        f = ProcessFailure((first_rank + i) % nproc, pid, code, error_file, rank=first_rank + i)
        if os.path.isfile(error_file):
            f.timestamp = os.path.getmtime(error_file)
        out[first_rank + i] = f
    print("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "
          + ChildFailedError(name, out).format_msg(), file=sys.stderr, flush=True)


def main(args=None, alias=False):
    ns = parse_args(sys.argv[1:] if args is None else args)
    handled = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
    previous = {s: signal.signal(s, _raise_stopped) for s in handled}  # NOTE [ Stopping the job when the ...]
    try:
        return run(ns, alias=alias)
    except _Stopped as e:
        print(f"torch.distributed.elastic.multiprocessing.api.SignalException: {e}", file=sys.stderr, flush=True)
        return 128 + e.signum
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


if __name__ == "__main__":
    sys.exit(main())

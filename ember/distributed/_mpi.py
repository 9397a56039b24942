"""The MPI engine under ember.distributed: building the world communicator, buffers, reductions, the
worker that runs asynchronous collectives.

mpi4py is imported here only, and only when a process group is made (never at `import ember`).

NOTE [ One world communicator, three ways ]
`world_comm` returns an MPI communicator holding the job's ranks in torch's rank order, however they
were started:
- by mpiexec (the launcher, `ember.distributed.run`): MPI_COMM_WORLD already holds them all;
- by mpiexec once per node (the launcher run on each node with `--nnodes N --node-rank i`): each node's
  MPI_COMM_WORLD holds its own ranks, and the worlds are joined with MPI's dynamic process management
  (`Open_port` by the world holding rank 0, the port name exchanged through the store, `Comm_accept` /
  `Comm_connect`, then `Intercomm_merge`, one world after the other);
- by the script itself (`torch.multiprocessing.spawn`, `init_process_group(rank=r, world_size=n)`): no
  process manager is there, so rank 0 starts ember's PMI server and every rank points MPI at it before
  MPI starts (NOTE [ Joining processes that mpiexec did not start ] in `_pmi.py`).
Finally the communicator is split with key = torch rank, so MPI's rank order is torch's.

NOTE [ No shared-memory transport between spawned ranks ]
The PMI server tells MPI that every spawned rank is on a node of its own. Told the truth (several ranks
on one node), MPICH 5.0.2 sets up its POSIX shared-memory transport over a segment named after the job,
and here its MPI_Finalize crashed (SIGSEGV in the shared-memory teardown) and segments of crashed jobs were
left in /dev/shm ("MPIDI_POSIX_comm_bootstrap: Out of memory" for the next job of that name). One rank
per node sends everything through the network module (UCX/OFI, whose own shared-memory transports still
serve ranks on one machine).

NOTE [ No MPI_Finalize under ember's PMI server ]
In a world built through ember's PMI server, a process that called MPICH 5.0.2's MPI_Finalize crashes when
it exits (SIGSEGV; mpiexec-started worlds finalize and exit cleanly). MPI_Finalize itself returns in every
rank (the PMI server acknowledges each `finalize`); the fault comes later, in an exit handler that libmpi
registered (gdb: `exit` -> `__run_exit_handlers` -> libmpi.so.12, a stripped build, so the handler is not
named), and only after a finalize: exiting without one is clean, as is `_exit` after one (no exit handlers
run). Nothing ember can do before exit avoids it short of skipping the C exit handlers, which a library must
not do. So such processes do not call MPI_Finalize at exit (`mpi4py.rc.finalize = False`): the job's work is
complete by then, the operating system reclaims the rest, and the PMI server ends when the ranks'
connections close. What the OS would not reclaim is MPICH's shared-memory segments in /dev/shm (unlinked by
MPI_Finalize): so once every rank has initialized (a barrier), rank 0 unlinks the `mpich_shm_*` segments
that appeared during its MPI_Init; the ranks keep them mapped, and the names are gone when the job ends, as
after a finalize.

NOTE [ Asynchronous collectives run on a worker thread ]
MPI's non-blocking collectives (MPI_Iallreduce, ...) progress only while some thread is inside MPI, so an
`async_op=True` collective followed by Python compute would not move until `wait()`. Instead each process
group has one worker thread (started on its first asynchronous op) that runs the group's asynchronous
collectives, in the order they were issued, waiting for each (NOTE [ Waiting without spinning ]) with the
GIL released most of the time, so communication overlaps the caller's compute, as gloo's worker threads
do. (DDP's bucket allreduces skip the worker: NOTE [ DDP's allreduce from the backward thread ] in
ember/nn/parallel/_reducer.py.) A synchronous collective
runs in the caller's thread when the worker is idle, and queues behind it otherwise, so every rank issues
a group's collectives to MPI in program order (MPI's requirement). MPI is initialized with
MPI_THREAD_MULTIPLE (mpi4py's default) since the caller thread and the worker may both be in MPI.
Point-to-point ops use MPI's own non-blocking requests (`Isend`/`Irecv`), which need no worker.

NOTE [ Callbacks on the worker thread ]
A collective's future is completed on the worker thread, so its `then` / `add_done_callback` callbacks run
there (as torch's run on gloo's thread), before the worker takes the next collective. A callback may itself
issue collectives and wait for them (any user comm hook may): they are queued in issue order like any
other (torch's order too: gloo numbers collectives as they are enqueued), and a `wait()` on the worker's
own thread runs the queue, in order, until the awaited collective is done (`Worker.help_until`), instead of
waiting for the thread that is busy in the callback (a deadlock).
"""

import os
import queue
import socket
import subprocess
import sys
import threading
import time

import numpy as np

__all__ = ["mpi", "world_comm", "Worker", "current_worker", "mpi_op", "reduce_dtype", "wait",
           "WaitTimeout"]

_MPI = None


def mpi():
    """The mpi4py.MPI module (imported on first use)."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as e:  # pragma: no cover - the `distributed` extra is missing
            raise RuntimeError("ember.distributed needs mpi4py and an MPI runtime: "
                               "pip install ember[distributed]") from e
        _MPI = MPI
    return _MPI


def _under_process_manager():
    env = os.environ
    return any(k in env for k in ("PMI_FD", "PMI_PORT", "PMI_RANK", "PMIX_RANK", "HYDI_CONTROL_FD"))


def _start_pmi_server(rank, world_size, store):
    """NOTE [ Joining processes that mpiexec did not start ]: point MPI at ember's PMI server."""
    host = socket.gethostname()
    store.set(f"pmi/host/{rank}", host)
    if rank == 0:
        hosts = {store.get(f"pmi/host/{r}").decode() for r in range(world_size)}
        from ._pmi import process_mapping

        server = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pmi.py")
        kvsname = f"ember_{host}_{os.getpid()}_{int(time.time() * 1000) % 100000000}"
        # NOTE [ No shared-memory transport between spawned ranks ]: one node per rank
        proc = subprocess.Popen([sys.executable, server, str(world_size), kvsname,
                                 process_mapping(range(world_size))],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True)
        port = int(proc.stdout.readline())
        _PMI_SERVERS.append(proc)  # its stdin stays open while this process lives
        addr = "127.0.0.1" if len(hosts) == 1 else socket.gethostbyname(host)
        store.set("pmi/addr", f"{addr}:{port}")
    os.environ["PMI_PORT"] = store.get("pmi/addr").decode()
    os.environ["PMI_ID"] = str(rank)


_PMI_SERVERS = []


def _store_barrier(store, key, world_size, rank):
    """Every rank has done its store business before any enters MPI_Init, which holds the GIL while it
    waits for the others: a rank hosting the store (rank 0 of spawned ranks) could not answer them from then
    on. So rank 0 enters last, once every other rank has said that it is done with the store (its last
    store call): a barrier alone is not enough, since a rank that saw everyone arrive could still be asking
    the store after rank 0 has gone (a job of 4 spawned ranks hung so, 3 in MPI_Init, one in a store call)."""
    if store.add(key, 1) < world_size:
        while int(store.add(key, 0)) < world_size:
            time.sleep(0.002)
    if rank != 0:
        store.add(key + "/done", 1)
        return
    while int(store.add(key + "/done", 0)) < world_size - 1:
        time.sleep(0.002)


def _join_worlds(comm, rank, world_size, store):
    """NOTE [ One world communicator, three ways ]: merge the MPI worlds of several mpiexec runs."""
    MPI = mpi()
    lead = min(comm.allgather(rank))
    if comm.rank == 0:
        store.set(f"mpi/world/{lead}", str(comm.size))
        store.add("mpi/joined", comm.size)
    while int(store.add("mpi/joined", 0)) < world_size:
        time.sleep(0.005)
    leads = [r for r in range(world_size) if store.check([f"mpi/world/{r}"])]
    first = lead == leads[0]
    merged = comm if first else None
    port = None
    if first and comm.rank == 0:
        port = MPI.Open_port()
        store.set("mpi/port", port)
    for nxt in leads[1:]:
        if merged is not None:
            inter = merged.Accept(port if merged.rank == 0 else None, root=0)
            merged = inter.Merge(high=False)
            inter.Free()
        elif lead == nxt:
            p = store.get("mpi/port").decode() if comm.rank == 0 else None
            inter = comm.Connect(p, root=0)
            merged = inter.Merge(high=True)
            inter.Free()
    if port is not None:
        MPI.Close_port(port)
    return merged


def _shm_segments():
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("mpich_shm_")}
    except OSError:
        return set()


def world_comm(rank, world_size, store):
    """The job's ranks as one MPI communicator in torch's rank order (NOTE [ One world communicator,
    three ways ])."""
    if _MPI is None and world_size > 1:
        if not _under_process_manager():
            _start_pmi_server(rank, world_size, store)
            import mpi4py

            mpi4py.rc.finalize = False  # NOTE [ No MPI_Finalize under ember's PMI server ]
        _store_barrier(store, "mpi/init", world_size, rank)
    segments = _shm_segments() if _MPI is None else None  # NOTE [ No MPI_Finalize under ember's PMI server ]
    MPI = mpi()
    comm = MPI.COMM_WORLD
    if segments is not None and comm.size > 1:
        comm.Barrier()  # every rank has attached MPICH's segments: they can be unlinked
        if comm.rank == 0:
            for name in _shm_segments() - segments:
                try:
                    os.unlink(os.path.join("/dev/shm", name))
                except OSError:
                    pass
    if comm.size != world_size:
        if comm.size > world_size:
            raise RuntimeError(f"ember.distributed: world_size={world_size} but MPI started {comm.size} "
                               "processes")
        comm = _join_worlds(comm, rank, world_size, store)
    return comm.Split(0, rank)


# ---------------------------------------------------------------------------------------------------------
# Reductions

def mpi_op(op_name, np_dtype):
    """The MPI reduction for torch's ReduceOp name on arrays of `np_dtype` (bool uses the logical ops)."""
    MPI = mpi()
    if np_dtype == np.bool_:
        return {"SUM": MPI.LOR, "MAX": MPI.LOR, "BOR": MPI.LOR, "MIN": MPI.LAND, "PRODUCT": MPI.LAND,
                "BAND": MPI.LAND, "BXOR": MPI.LXOR, "AVG": MPI.LOR}[op_name]
    return {"SUM": MPI.SUM, "AVG": MPI.SUM, "PRODUCT": MPI.PROD, "MIN": MPI.MIN, "MAX": MPI.MAX,
            "BAND": MPI.BAND, "BOR": MPI.BOR, "BXOR": MPI.BXOR}[op_name]


_NATIVE = {np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                  np.uint16, np.uint32, np.uint64, np.bool_, np.complex64, np.complex128)}


def reduce_dtype(np_dtype):
    """The dtype a reduction runs in: the array's own when MPI has it, float32 for float16/bfloat16."""
    return np_dtype if np_dtype in _NATIVE else np.dtype(np.float32)


def as_bytes(arr):
    """A C-contiguous array as an MPI byte buffer (any dtype: bfloat16, complex, bool)."""
    return [arr.reshape(-1).view(np.uint8), mpi().BYTE]


# ---------------------------------------------------------------------------------------------------------
# NOTE [ Waiting without spinning ]
# MPICH's blocking calls (MPI_Allreduce, MPI_Wait, ...) busy-poll its progress engine until they complete:
# a rank waiting for a slower one keeps a core busy the whole time (measured: a rank blocked 1 s in
# MPI_Allreduce used 0.31 s of CPU on the loaded 2-core machine, all it was given; MPICH's
# MPIR_CVAR_POLLS_BEFORE_YIELD only adds sched_yield calls, and the poller stays runnable). With 2 ranks
# on 2 cores, or more ranks than cores, that core is taken from the rank still computing, whose delay the
# waiter is waiting for. gloo's threads sleep while they wait. So every collective ember runs is MPI's
# non-blocking one (MPI_Iallreduce, ...), and the thread that waits for it tests it (`wait`): back to back
# for the first `_SPIN_S` (a collective whose peers are all there completes within tens of µs), then
# sleeping between tests, the sleep doubling from 20 µs to `_MAX_SLEEP_S`. `time.sleep` gives up the core
# and the GIL; MPI progresses the collective at each test. A waiting rank then costs about 1% of a core,
# and sees the completion at most `_MAX_SLEEP_S` late. MPI matches a non-blocking collective only with
# non-blocking ones: every rank runs the same ember code, so every rank issues the same kind.
# (mpi4py's pickle-based object collectives, used by the object collectives, stay blocking.)

_SPIN_S = 100e-6
_MAX_SLEEP_S = 250e-6


class WaitTimeout(Exception):
    """`wait` passed its deadline (the request is still pending)."""


def wait(request, deadline=None, statuses=None):
    """Wait for an MPI request, or a list of them (their `statuses` filled in), without spinning (NOTE
    [ Waiting without spinning ]); past `deadline` (a time.monotonic() value) raise WaitTimeout."""
    requests = request if isinstance(request, list) else [request]
    testall = mpi().Request.Testall
    if testall(requests, statuses):
        return
    now = time.perf_counter
    end = now() + _SPIN_S
    while now() < end:
        if testall(requests, statuses):
            return
    sleep, delay = time.sleep, 20e-6
    while not testall(requests, statuses):
        if deadline is not None and time.monotonic() > deadline:
            raise WaitTimeout
        sleep(delay)
        if delay < _MAX_SLEEP_S:
            delay = min(delay * 2, _MAX_SLEEP_S)


# ---------------------------------------------------------------------------------------------------------
# NOTE [ Asynchronous collectives run on a worker thread ]

_CURRENT = threading.local()  # .worker: the Worker whose thread this is (None elsewhere)


def current_worker():
    """The Worker running on this thread, or None (NOTE [ Callbacks on the worker thread ])."""
    return getattr(_CURRENT, "worker", None)


class Worker:
    """Runs a process group's collectives in issue order: in the caller's thread when idle, else queued."""

    def __init__(self, name):
        self.name = name
        self._queue = None
        self._thread = None
        self._pending = 0
        self._lock = threading.Lock()

    def _loop(self):
        _CURRENT.worker = self
        while True:
            item = self._queue.get()
            if item is None:
                return
            self._run_item(item)

    def _run_item(self, item):
        fn, work = item
        try:
            result, error = fn(), None
        except BaseException as e:  # noqa: BLE001 - delivered to the waiting caller
            result, error = None, e
        work._finish(result, error)  # (its futures' callbacks run here, before the next collective)
        with self._lock:
            self._pending -= 1

    def submit(self, fn, work):
        with self._lock:
            self._pending += 1
            if self._thread is None:
                self._queue = queue.SimpleQueue()
                self._thread = threading.Thread(target=self._loop, daemon=True, name=self.name)
                self._thread.start()
        self._queue.put((fn, work))

    def idle(self):
        return self._pending == 0

    def help_until(self, event):
        """On the worker's own thread (a callback waiting for a collective): run the queued collectives, in
        order, until `event` is set; the rest of the wait is the caller's."""
        while not event.is_set():
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is None:  # stop() asked while a callback waited: leave it for the loop
                self._queue.put(None)
                return
            self._run_item(item)

    def stop(self):
        if self._thread is not None:
            self._queue.put(None)
            if self._thread is not threading.current_thread():
                self._thread.join(timeout=5)
            self._thread = None

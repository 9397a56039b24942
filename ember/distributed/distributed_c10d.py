"""torch.distributed's process groups and collectives, on MPI (torch/distributed/distributed_c10d.py).

The types torch defines in C++ (ReduceOp, Work, ProcessGroup, GradBucket) are in `_c10d.py`. A
`ProcessGroup` holds an MPI communicator over its ranks (in torch's rank order, NOTE [ One world
communicator, three ways ] in `_mpi.py`). Backends "gloo" and "mpi" both run on it; "nccl" fails as on
a CPU-only torch. Every collective checks its arguments as torch does (same exception class and message),
then runs as MPI calls on the tensors' NumPy buffers: a C-contiguous tensor is handed to MPI as it is
(zero copy); any other layout goes through a contiguous copy written back after. With `async_op=True` a
collective returns a `Work` at once and runs on the group's worker thread (NOTE [ Asynchronous collectives
run on a worker thread ]); `wait()` returns True once its results are in the tensors.

NOTE [ Reductions in MPI's types ]
MPI reduces float32/float64, the integer types, bool (SUM/MAX/BOR as logical or; MIN/PRODUCT/BAND as
logical and; BXOR as logical xor: torch's results on bool tensors) and complex (SUM/AVG only, as torch
allows, through MPI's complex types). float16 and bfloat16 have no MPI type: they are reduced in float32
and rounded once, which equals the half-precision sum of two ranks and differs from gloo's step-by-step
rounding by at most an ulp beyond that. AVG is SUM followed by a division by the group size (an integer
tensor refuses it, as torch's does: the float result cannot be cast back).
"""

import datetime
import io
import os
import pickle
import socket
import time
import warnings

import numpy as np

from .. import _tensor
from . import _mpi
from ._c10d import GradBucket, ProcessGroup, ReduceOp, Work, _done_work, _op_name  # noqa: F401
from ._store import FileStore, PrefixStore, TCPStore

__all__ = ["Backend", "ReduceOp", "ProcessGroup", "Work", "GradBucket", "GroupMember", "group", "P2POp",
           "default_pg_timeout",
           "is_available", "is_initialized", "is_mpi_available", "is_gloo_available", "is_nccl_available",
           "is_torchelastic_launched", "init_process_group", "destroy_process_group", "get_rank", "get_world_size",
           "get_backend", "new_group", "new_subgroups", "new_subgroups_by_enumeration", "get_process_group_ranks",
           "get_global_rank", "get_group_rank", "all_reduce", "broadcast", "reduce", "all_gather",
           "all_gather_into_tensor", "all_gather_single", "gather", "scatter", "reduce_scatter",
           "reduce_scatter_tensor", "reduce_scatter_single", "all_to_all", "all_to_all_single", "barrier",
           "monitored_barrier", "send", "recv", "isend", "irecv", "batch_isend_irecv", "broadcast_object_list",
           "all_gather_object", "gather_object", "scatter_object_list", "get_node_local_rank"]

default_pg_timeout = datetime.timedelta(minutes=30)
_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


def is_available():
    """Whether the distributed package can be used: True (it runs on MPI through mpi4py)."""
    return True


def is_mpi_available():
    return True


def is_gloo_available():
    return True


def is_nccl_available():
    return False


def is_torchelastic_launched():
    """Whether this process was started by the launcher (torchrun / ember.distributed.run)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


class Backend(str):
    """The names of the backends: `Backend.GLOO`, `Backend.MPI`, `Backend.NCCL` (a str subclass)."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return value



class _World:
    def __init__(self):
        self.default_pg = None
        self.backend = None
        self.store = None
        self.groups = []
        self.group_count = 0


_world = _World()


class _GroupMember:
    """`GroupMember.WORLD` is the default group; `NON_GROUP_MEMBER` stands for "not in this group"."""

    NON_GROUP_MEMBER = -100

    @property
    def WORLD(self):  # noqa: N802 - torch's name
        return _world.default_pg


GroupMember = _GroupMember()
group = _GroupMember()  # `dist.group.WORLD`


def _default_pg():
    if _world.default_pg is None:
        raise ValueError(_NOT_INITIALIZED)
    return _world.default_pg


def _pg(group):
    """The ProcessGroup a `group=` argument names (None: the default one)."""
    if group is None:
        return _default_pg()
    if isinstance(group, ProcessGroup):
        if _world.default_pg is None:
            raise ValueError(_NOT_INITIALIZED)
        return group
    if group == GroupMember.NON_GROUP_MEMBER:
        return None
    raise ValueError(f"Process group {group} is not initialized in the world group map. "
                     "Please initialize the group first.")


def is_initialized():
    """Whether the default process group has been initialized."""
    return _world.default_pg is not None


def _check_tensor(t, name):
    if not isinstance(t, _tensor.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")


def _check_tensor_list(ts, name):
    if not isinstance(ts, list) or not all(isinstance(t, _tensor.Tensor) for t in ts):
        kinds = [type(t) for t in ts] if isinstance(ts, list) else None
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor]\n             but got {type(ts)} with elements of type {kinds}.")


def _same_dtype(*lists):
    tensors = [t for ts in lists for t in (ts if isinstance(ts, list) else [ts])]
    if tensors:
        d = tensors[0].dtype
        for t in tensors[1:]:
            if t.dtype != d:
                raise ValueError(f"Invalid usage of tensors with different dtypesFound {d} and  {t.dtype}")


def _warn_not_in_group(op):
    warnings.warn(f"Running {op} on global rank {get_rank()} which does not belong to the given group.",
                  stacklevel=3)


def _group_rank(pg, global_rank, group_rank, what="global_rank"):
    if global_rank is None and group_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    if group_rank is not None:
        return group_rank
    if pg is _world.default_pg:
        return global_rank
    if global_rank not in pg._group_of:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._group_of[global_rank]


# ---------------------------------------------------------------------------------------------------------
# Buffers

def _array(t):
    """The NumPy array a tensor holds: MPI reads and writes it in place (zero copy)."""
    return t._data


def _buffer(t):
    """(C-contiguous array of t's data, writeback) : zero copy when t is C-contiguous."""
    a = _array(t)
    if a.flags.c_contiguous:
        return a, None
    c = np.ascontiguousarray(a)

    def writeback():
        a[...] = c
    return c, writeback


def _written(t):
    _tensor._version_counter(t)[0] += 1


_TORCH_INT_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                    "bool": "Bool", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}


def _check_reduce(t, op_name, what="all_reduce"):
    kind = _array(t).dtype.kind
    if op_name in ("BAND", "BOR", "BXOR") and kind not in "iub":
        raise RuntimeError(f"Cannot use ReduceOp.{op_name} with non-integral dtype")
    if kind == "c" and op_name not in ("SUM", "AVG"):
        raise ValueError(f"{what} does not support RedOpType.{op_name} on complex tensors")


def _reduce_inplace(comm, arr, op_name, fn):
    """Run `fn(buffer, mpi_op)` on `arr` in the dtype MPI reduces in (NOTE [ Reductions in MPI's types ])."""
    rd = _mpi.reduce_dtype(arr.dtype)
    work = arr if rd == arr.dtype else arr.astype(rd)
    fn(work, _mpi.mpi_op(op_name, work.dtype))
    if op_name == "AVG":
        if work.dtype.kind in "iub":
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{_TORCH_INT_NAMES[arr.dtype.name]}")
        np.divide(work, comm.size, out=work)
    if work is not arr:
        arr[...] = work.astype(arr.dtype)


# ---------------------------------------------------------------------------------------------------------
# init / destroy

def _rendezvous(init_method, rank, world_size, timeout):
    from urllib.parse import parse_qs, urlparse

    if init_method.startswith("env://"):
        def env(name, value):
            if value is not None and value != -1:
                return value
            if name not in os.environ:
                raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment "
                                 f"variable {name} expected, but not set")
            return os.environ[name]
        rank = int(env("RANK", rank))
        world_size = int(env("WORLD_SIZE", world_size))
        addr = env("MASTER_ADDR", None)
        port = int(env("MASTER_PORT", None))
        agent = os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
        store = TCPStore(addr, port, world_size, is_master=(rank == 0 and not agent), timeout=timeout,
                         wait_for_workers=False)
        return store, rank, world_size
    url = urlparse(init_method)
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    rank = int(query.get("rank", rank))
    world_size = int(query.get("world_size", world_size))
    scheme = url.scheme
    if rank == -1:
        raise ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: "
                         "rank parameter missing")
    if world_size == -1:
        raise ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: "
                         "world size parameter missing")
    if scheme == "tcp":
        store = TCPStore(url.hostname, url.port, world_size, is_master=(rank == 0), timeout=timeout,
                         wait_for_workers=False)
    elif scheme == "file":
        store = FileStore(url.path, world_size)
        store.set_timeout(timeout)
    else:
        raise RuntimeError(f"No rendezvous handler for {scheme}://")
    return store, rank, world_size


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None, _ranks=None):
    """Initialize the default process group (torch.distributed.init_process_group).

    Args:
        backend (str, optional): "gloo" or "mpi" (both run on MPI); "nccl" fails as on a CPU-only torch.
        init_method (str, optional): "env://" (default: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT),
            "tcp://host:port" or "file:///path"; exclusive with `store`.
        timeout (timedelta, optional): the timeout of store operations (default 30 minutes).
        world_size (int), rank (int): this job's size and this process's rank (-1: from init_method).
        store (Store, optional): a store all ranks reach, instead of `init_method`.

    Ranks started by the launcher (mpiexec) share MPI_COMM_WORLD; ranks a script started itself (e.g.
    `torch.multiprocessing.spawn`) are joined into one MPI world through the store (NOTE [ One world
    communicator, three ways ] in ember/distributed/_mpi.py).
    """
    if _world.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None:
        name = str(backend).lower()
        if name == "nccl" or name == "cuda:nccl":
            raise RuntimeError("Distributed package doesn't have NCCL built in")
        if name not in ("gloo", "mpi", "cpu:gloo", "cpu:mpi", "cpu:gloo,cuda:nccl"):
            raise AssertionError(f"Unknown backend type {backend}")
        backend_name = Backend(name) if ":" not in name else name
    else:
        backend_name = "cpu:gloo,cuda:nccl"
    timeout = default_pg_timeout if timeout is None else timeout
    if store is None:
        store, rank, world_size = _rendezvous(init_method or "env://", rank, world_size, timeout)
    else:
        if init_method is not None:
            raise AssertionError("Cannot specify both init_method and store.")
        if world_size <= 0:
            raise AssertionError("world_size must be positive if using store")
        if rank < 0:
            raise AssertionError("rank must be non-negative if using store")
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")  # a restarted job's keys start afresh
    prefixed = PrefixStore("default_pg" if restart == "0" else f"default_pg_{restart}", store)
    comm = _mpi.world_comm(rank, world_size, prefixed)
    _threads_per_rank(comm)
    pg = ProcessGroup(comm, range(world_size), backend_name, "0", prefixed, timeout)
    pg._desc = "default_pg"
    _world.default_pg, _world.backend, _world.store, _world.group_count = pg, backend_name, prefixed, 1
    _world.groups = [pg]


# NOTE [ Threads per rank ]
# Ranks on one machine each compute with ember's thread pools (its native kernels' OpenMP loops and NumPy's
# OpenBLAS), which default to one thread per core. With as many ranks as cores (2 ranks on 2 cores) that
# is twice as many busy threads as cores, and OpenBLAS's idle threads spin before they sleep: measured on
# the 2-core machine, a DDP step of the MLP cost 57 ms of CPU per rank with 2 threads per rank, 4.5 ms with
# one. torchrun sets OMP_NUM_THREADS=1 for each rank when the variable is unset (with a warning); ranks
# started otherwise (`mp.spawn`, plain mpiexec) get nothing from torch. So `init_process_group` counts the
# ranks on this machine and, unless the thread count was chosen (OMP_NUM_THREADS set, or
# `set_num_threads` called), lowers it to the usable cores divided by that count (at least 1). Either way
# it applies the count to both pools: OpenBLAS sized its pool when NumPy loaded, which may have been before
# the script set OMP_NUM_THREADS.
def _threads_per_rank(comm):
    from .. import _runtime

    if _runtime._state.get("chosen"):
        return
    threads = _runtime.get_num_threads()
    if "OMP_NUM_THREADS" not in os.environ:
        host = socket.gethostname()
        local = sum(1 for h in comm.allgather(host) if h == host)
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count() or 1
        threads = min(threads, max(1, cores // local))
    _runtime.set_num_threads(threads)


def destroy_process_group(group=None):
    """Destroy `group` (default: every group, and the default one); the default group can then be made
    again."""
    if group is None or group is _world.default_pg:
        if _world.default_pg is None:
            raise AssertionError("Process group cannot be None")
        for pg in _world.groups:
            pg._worker.stop()
            pg._comm.Free()
        _world.__init__()
        return
    if isinstance(group, ProcessGroup) and group in _world.groups:
        group._worker.stop()
        group._comm.Free()
        _world.groups.remove(group)


def get_rank(group=None):
    """This process's rank in `group` (default: the default group); -1 if it is not a member."""
    pg = _pg(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    """The number of ranks in `group`; -1 if this process is not a member."""
    pg = _pg(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    """The backend of `group` ("gloo" / "mpi")."""
    pg = _pg(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg._backend


def get_process_group_ranks(group):
    """The global ranks of `group`'s members, in group rank order."""
    return list(_pg(group)._ranks)


def get_global_rank(group, group_rank):
    """The global rank of `group`'s rank `group_rank`."""
    pg = _pg(group)
    if group_rank >= len(pg._ranks) or group_rank < 0:
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank):
    """`global_rank`'s rank within `group`."""
    pg = _pg(group)
    if global_rank not in pg._group_of:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._group_of[global_rank]


def get_node_local_rank(fallback_rank=None):
    """LOCAL_RANK from the environment (the launcher sets it), else `fallback_rank`."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device "
                       "context and want the code to run locally instead.")


def _make_group(ranks, timeout, backend, local):
    world = _default_pg()
    MPI = _mpi.mpi()
    ranks = sorted(range(world.size()) if ranks is None else ranks)
    if len(ranks) > world.size():
        raise ValueError("the new group's world size should be less or equal to the world size set by "
                         "init_process_group")
    for r in ranks:
        if r < 0 or r >= world.size():
            raise ValueError("The new group's rank should be within the world_size set by init_process_group")
    wg = world._comm.Get_group()
    sub = wg.Incl(ranks)
    _world.group_count += 1
    name = str(_world.group_count - 1)
    if local:
        if world.rank() not in ranks:
            return GroupMember.NON_GROUP_MEMBER
        comm = world._comm.Create_group(sub, tag=_world.group_count)
    else:
        comm = world._comm.Create(sub)
    wg.Free()
    sub.Free()
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, _world.backend if backend is None else backend, name,
                      PrefixStore(name, _world.store), timeout or world._timeout)
    _world.groups.append(pg)
    return pg


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None, sort_ranks=True):
    """A new group of the given global `ranks` (default: all). Every rank of the default group must call
    it (only the members, with `use_local_synchronization=True`); a non-member gets
    `GroupMember.NON_GROUP_MEMBER`."""
    return _make_group(ranks, timeout, backend, use_local_synchronization)


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """Split the world into groups of `group_size` consecutive ranks: (this rank's subgroup, all of them)."""
    if group_size is None:
        raise ValueError("Default group size only takes effect when CUDA is available.If your subgroup using "
                         "a backend that does not depend on CUDA,please pass in 'group_size' correctly.")
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size()
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({world_size})")
    if world_size % group_size != 0:
        raise ValueError("The world size must be divisible by 'group_size'")
    ranks_per = [list(range(i * group_size, (i + 1) * group_size)) for i in range(world_size // group_size)]
    return new_subgroups_by_enumeration(ranks_per, timeout=timeout, backend=backend)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None,
                                 group_desc=None):
    """Groups of the given lists of ranks: (this rank's subgroup, all of them)."""
    if ranks_per_subgroup_list is None or len(ranks_per_subgroup_list) == 0:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    me = get_rank()
    mine, subgroups = None, []
    for ranks in ranks_per_subgroup_list:
        pg = _make_group(ranks, timeout, backend, False)
        subgroups.append(pg)
        if me in ranks:
            mine = pg
    return mine, subgroups


# ---------------------------------------------------------------------------------------------------------
# Collectives

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` across the group with `op`; every rank gets the result in `tensor`."""
    _check_tensor(tensor, "tensor")
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("all_reduce")
    op_name = _op_name(op)
    _check_reduce(tensor, op_name)
    buf, writeback = _buffer(tensor)
    MPI = _mpi.mpi()

    def run():
        _reduce_inplace(pg._comm, buf, op_name,
                        lambda b, o: pg._wait(pg._comm.Iallreduce(MPI.IN_PLACE, b, op=o)))
        if writeback:
            writeback()
        _written(tensor)
    return pg._run(run, [tensor], async_op)


def _all_reduce_from_caller(tensor, group):
    """SUM `tensor` over `group` asynchronously, issued from this thread (DDP's buckets, NOTE [ DDP's
    allreduce from the backward thread ] in ember/nn/parallel/_reducer.py) when the group's worker is idle:
    the returned Work's `is_completed()` (MPI_Test) moves the MPI collective on and `wait()` ends it, with no
    worker thread and no handoff of the GIL. Otherwise (collectives queued before it on the worker, or a
    dtype MPI reduces in float32) it is an `all_reduce(async_op=True)`, issued by the worker after them: the
    same MPI call either way (NOTE [ Waiting without spinning ] in _mpi.py), so ranks taking different ways
    still match."""
    _check_tensor(tensor, "tensor")
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("all_reduce")
    arr = _array(tensor)
    if not (pg._worker.idle() and not pg._broken and arr.flags.c_contiguous
            and _mpi.reduce_dtype(arr.dtype) == arr.dtype):
        return all_reduce(tensor, group=group, async_op=True)
    MPI = _mpi.mpi()
    work = Work([tensor])
    work._requests = [pg._comm.Iallreduce(MPI.IN_PLACE, arr, op=_mpi.mpi_op("SUM", arr.dtype))]
    work._pg = pg
    work._post = lambda: _written(tensor)
    return work


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy `tensor` of rank `src` into `tensor` on every rank of the group."""
    _check_tensor(tensor, "tensor")
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("broadcast")
    root = _group_rank(pg, src, group_src)
    if not 0 <= root < pg.size():
        raise RuntimeError(f"ProcessGroupGloo::broadcast: invalid root rank: {root}")
    buf, writeback = _buffer(tensor)

    def run():
        pg._wait(pg._comm.Ibcast(_mpi.as_bytes(buf), root=root))
        if writeback and pg.rank() != root:
            writeback()
        if pg.rank() != root:
            _written(tensor)
    return pg._run(run, [tensor], async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce `tensor` across the group with `op` into rank `dst`'s `tensor`."""
    _check_tensor(tensor, "tensor")
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("reduce")
    root = _group_rank(pg, dst, group_dst)
    if not 0 <= root < pg.size():
        raise RuntimeError(f"ProcessGroupGloo::reduce: invalid root rank: {root}")
    op_name = _op_name(op)
    _check_reduce(tensor, op_name, "reduce")
    buf, writeback = _buffer(tensor)
    MPI = _mpi.mpi()
    me = pg.rank()

    def fn(b, o):
        if me == root:
            pg._wait(pg._comm.Ireduce(MPI.IN_PLACE, b, op=o, root=root))
        else:
            pg._wait(pg._comm.Ireduce(b, None, op=o, root=root))

    def run():
        if me == root:
            _reduce_inplace(pg._comm, buf, op_name, fn)
            if writeback:
                writeback()
            _written(tensor)
        else:
            rd = _mpi.reduce_dtype(buf.dtype)
            b = buf if rd == buf.dtype else buf.astype(rd)
            fn(b, _mpi.mpi_op(op_name, b.dtype))
    return pg._run(run, [tensor], async_op)


def _allgather_checks(pg, tensor_list, tensor):
    n = pg.size()
    if len(tensor_list) != n:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index 0 (expected "
                           f"length {n}, got {len(tensor_list)})")
    for i, t in enumerate(tensor_list):
        if tuple(t.shape) != tuple(tensor.shape):
            raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor size at index {i} (expected "
                               f"{_shape_str(tensor.shape)}, got {_shape_str(t.shape)})")


def _shape_str(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gather `tensor` from every rank into `tensor_list` (one tensor per rank) on every rank."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    _same_dtype(tensor_list, tensor)
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("all_gather")
    _allgather_checks(pg, tensor_list, tensor)
    src = np.ascontiguousarray(_array(tensor))
    out = np.empty((pg.size(),) + src.shape, dtype=src.dtype)

    def run():
        pg._wait(pg._comm.Iallgather(_mpi.as_bytes(src), _mpi.as_bytes(out)))
        for i, t in enumerate(tensor_list):
            _array(t)[...] = out[i]
            _written(t)
    return pg._run(run, [tensor_list], async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gather `input_tensor` from every rank into `output_tensor` (concatenated along dim 0, or stacked)."""
    warnings.warn("`torch.distributed.all_gather_into_tensor` is deprecated. Please use "
                  "`torch.distributed.all_gather_single` instead.", FutureWarning, stacklevel=2)
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """`all_gather_into_tensor` under its torch 2.13 name."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("all_gather_into_tensor")
    if output_tensor.dtype != input_tensor.dtype:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor type at index 0 (expected "
                           f"{_options(input_tensor)}, got {_options(output_tensor)})")
    n = pg.size()
    # gloo splits the output along dim 0 into one chunk per rank, each of the input's shape
    chunks = output_tensor.chunk(n) if output_tensor.dim() else [output_tensor]
    for i, c in enumerate(chunks):
        if tuple(c.shape) != tuple(input_tensor.shape):
            raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor size at index {i} (expected "
                               f"{_shape_str(input_tensor.shape)}, got {_shape_str(c.shape)})")
    if len(chunks) != n:
        raise RuntimeError("ProcessGroupGloo::allgather: invalid output tensor list at index 0 (expected "
                           f"length {n}, got {len(chunks)})")
    src = np.ascontiguousarray(_array(input_tensor))
    out, writeback = _buffer(output_tensor)

    def run():
        pg._wait(pg._comm.Iallgather(_mpi.as_bytes(src), _mpi.as_bytes(out)))
        if writeback:
            writeback()
        _written(output_tensor)
    return pg._run(run, [output_tensor], async_op)


_TORCH_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                  "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                  "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
                  "complex128": "c10::complex<double>"}


def _options(t):
    name = _array(t).dtype.name
    return (f"TensorOptions(dtype={_TORCH_C_NAMES.get(name, name)}, device=cpu, "
            "layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def _check_root_list(pg, root, tensors, name, role, what):
    """gather's and scatter's checks (torch's messages): the root rank, and only it, passes the list of
    tensors (`name`), one per rank."""
    if pg.rank() != root:
        if tensors:
            raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{role} ranks.")
        return
    if not tensors:
        raise ValueError(f"Argument ``{name}`` must be specified on {role} rank.")
    if len(tensors) != pg.size():
        side = what.rsplit(" ", 1)[-1].capitalize()
        raise RuntimeError(f"ProcessGroupGloo::{what} list size {len(tensors)}. {side} list size should be "
                           f"{pg.size()}, same as size of the process group.")


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Gather `tensor` from every rank into `gather_list` on rank `dst`."""
    _check_tensor(tensor, "tensor")
    if gather_list:
        _check_tensor_list(gather_list, "gather_list")
    else:
        gather_list = []
    _same_dtype(gather_list, tensor)
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("gather")
    if dst is None and group_dst is None:
        dst = 0
    root = _group_rank(pg, dst, group_dst)
    me = pg.rank()
    _check_root_list(pg, root, gather_list, "gather_list", "destination", "gather: Incorrect output")
    src = np.ascontiguousarray(_array(tensor))
    out = np.empty((pg.size(),) + src.shape, dtype=src.dtype) if me == root else None

    def run():
        recv = _mpi.as_bytes(out) if out is not None else None
        pg._wait(pg._comm.Igather(_mpi.as_bytes(src), recv, root=root))
        if out is not None:
            for i, t in enumerate(gather_list):
                _array(t)[...] = out[i]
                _written(t)
    return pg._run(run, [gather_list], async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Scatter `scatter_list` of rank `src`: rank i receives `scatter_list[i]` into `tensor`."""
    _check_tensor(tensor, "tensor")
    if scatter_list:
        _check_tensor_list(scatter_list, "scatter_list")
    else:
        scatter_list = []
    _same_dtype(scatter_list, tensor)
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("scatter")
    if src is None and group_src is None:
        src = 0
    root = _group_rank(pg, src, group_src)
    me = pg.rank()
    _check_root_list(pg, root, scatter_list, "scatter_list", "source", "scatter: Incorrect input")
    buf, writeback = _buffer(tensor)
    inp = np.stack([np.ascontiguousarray(_array(t)) for t in scatter_list]) if me == root else None

    def run():
        send = _mpi.as_bytes(inp) if inp is not None else None
        pg._wait(pg._comm.Iscatter(send, _mpi.as_bytes(buf), root=root))
        if writeback:
            writeback()
        _written(tensor)
    return pg._run(run, [tensor], async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `input_list` across the group, then rank i gets the reduced `input_list[i]` in `output`."""
    _check_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    _same_dtype(input_list, output)
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("reduce_scatter")
    if len(input_list) != pg.size():
        raise RuntimeError("invalid input tensor list size, must be world size")
    op_name = _op_name(op)
    _check_reduce(output, op_name, "reduce_scatter")
    inp = np.stack([np.ascontiguousarray(_array(t)).reshape(_array(output).shape) for t in input_list])
    return _reduce_scatter(pg, output, inp, op_name, async_op)


def _reduce_scatter(pg, output, inp, op_name, async_op):
    buf, writeback = _buffer(output)
    MPI = _mpi.mpi()

    def run():
        rd = _mpi.reduce_dtype(inp.dtype)
        src = inp if rd == inp.dtype else inp.astype(rd)
        dst = buf if rd == buf.dtype else np.empty(buf.shape, rd)
        pg._wait(pg._comm.Ireduce_scatter_block(src, dst, op=_mpi.mpi_op(op_name, src.dtype)))
        if op_name == "AVG":
            if dst.dtype.kind in "iub":
                raise RuntimeError(f"result type Float can't be cast to the desired output type "
                                   f"{_TORCH_INT_NAMES[buf.dtype.name]}")
            np.divide(dst, pg.size(), out=dst)
        if dst is not buf:
            buf[...] = dst.astype(buf.dtype)
        if writeback:
            writeback()
        _written(output)
    del MPI
    return pg._run(run, [output], async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `input` across the group, then rank i gets its i-th chunk (along dim 0) in `output`."""
    warnings.warn("`torch.distributed.reduce_scatter_tensor` is deprecated. Please use "
                  "`torch.distributed.reduce_scatter_single` instead.", FutureWarning, stacklevel=2)
    return reduce_scatter_single(output, input, op, group, async_op)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """`reduce_scatter_tensor` under its torch 2.13 name."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("reduce_scatter_tensor")
    if output.dtype != input.dtype:
        raise RuntimeError("output tensor must have the same type as input tensor")
    n = pg.size()
    if input.numel() != output.numel() * n:
        o0 = output.shape[0] if output.dim() else 1
        i0 = input.shape[0] if input.dim() else 1
        raise RuntimeError(f"Check failed: outputShape[0] * worldSize == inputShape[0] ({o0 * n} vs. {i0}). ")
    op_name = _op_name(op)
    _check_reduce(output, op_name, "reduce_scatter_tensor")
    inp = np.ascontiguousarray(_array(input)).reshape((n,) + _array(output).shape)
    return _reduce_scatter(pg, output, inp, op_name, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Split `input` along dim 0 (by `input_split_sizes`, or equally), send chunk i to rank i, and
    concatenate what each rank sent this one into `output` (by `output_split_sizes`)."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("all_to_all_single")
    if output.dtype != input.dtype:
        raise ValueError(f"Invalid usage of tensors with different dtypesFound {input.dtype} and  {output.dtype}")
    n = pg.size()
    src = np.ascontiguousarray(_array(input))
    buf, writeback = _buffer(output)
    row_in = int(np.prod(src.shape[1:])) if src.ndim else 1
    row_out = int(np.prod(buf.shape[1:])) if buf.ndim else 1
    rows_in = src.shape[0] if src.ndim else 1
    rows_out = buf.shape[0] if buf.ndim else 1
    isz = list(input_split_sizes) if input_split_sizes else None
    osz = list(output_split_sizes) if output_split_sizes else None
    if isz is None:
        if rows_in % n:
            raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
        isz = [rows_in // n] * n
    if osz is None:
        if rows_out % n:
            raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
        osz = [rows_out // n] * n
    if len(isz) != n or len(osz) != n:
        raise RuntimeError("Number of tensor splits not equal to group size")
    if sum(isz) != rows_in or sum(osz) != rows_out:
        raise RuntimeError("Split sizes doesn't match total dim 0 size")
    item = src.dtype.itemsize
    scount = [s * row_in * item for s in isz]
    rcount = [s * row_out * item for s in osz]
    sdisp = np.concatenate([[0], np.cumsum(scount)[:-1]]).astype(int).tolist()
    rdisp = np.concatenate([[0], np.cumsum(rcount)[:-1]]).astype(int).tolist()
    MPI = _mpi.mpi()
    sbytes = src.reshape(-1).view(np.uint8)
    rbytes = buf.reshape(-1).view(np.uint8)

    def run():
        pg._wait(pg._comm.Ialltoallv([sbytes, scount, sdisp, MPI.BYTE], [rbytes, rcount, rdisp, MPI.BYTE]))
        if writeback:
            writeback()
        _written(output)
    return pg._run(run, [output], async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Send `input_tensor_list[i]` to rank i; receive rank i's tensor for this rank in
    `output_tensor_list[i]`."""
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    _same_dtype(output_tensor_list, input_tensor_list)
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("all_to_all")
    n = pg.size()
    if len(input_tensor_list) != n:
        raise RuntimeError(f"ProcessGroupGloo::alltoall: input tensor list size {len(input_tensor_list)} does "
                           f"not match world size {n}")
    if len(output_tensor_list) != n:
        raise RuntimeError(f"ProcessGroupGloo::alltoall: output tensor list size {len(output_tensor_list)} "
                           f"does not match world size {n}")
    expected = tuple(input_tensor_list[0].shape)
    for ts in (output_tensor_list, input_tensor_list):
        for i, t in enumerate(ts):
            if tuple(t.shape) != expected:
                raise RuntimeError(f"ProcessGroupGloo::alltoall: invalid tensor size at index {i} (expected "
                                   f"{_shape_str(expected)}, got {_shape_str(t.shape)})")
    srcs = [np.ascontiguousarray(_array(t)).reshape(-1).view(np.uint8) for t in input_tensor_list]
    sbytes = np.concatenate(srcs) if srcs else np.empty(0, np.uint8)
    scount = [s.size for s in srcs]
    rcount = [_array(t).nbytes for t in output_tensor_list]
    sdisp = np.concatenate([[0], np.cumsum(scount)[:-1]]).astype(int).tolist()
    rdisp = np.concatenate([[0], np.cumsum(rcount)[:-1]]).astype(int).tolist()
    rbytes = np.empty(sum(rcount), np.uint8)
    MPI = _mpi.mpi()

    def run():
        pg._wait(pg._comm.Ialltoallv([sbytes, scount, sdisp, MPI.BYTE], [rbytes, rcount, rdisp, MPI.BYTE]))
        for t, off, cnt in zip(output_tensor_list, rdisp, rcount):
            a = _array(t)
            a[...] = rbytes[off:off + cnt].view(a.dtype).reshape(a.shape)
            _written(t)
    return pg._run(run, [output_tensor_list], async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Block until every rank of the group has entered the barrier."""
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("barrier")
    return pg._run(lambda: pg._wait(pg._comm.Ibarrier()), [], async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that did not reach it within `timeout` (rank 0 reports them).

    Non-zero ranks check in with rank 0 and wait for its acknowledgement; rank 0 raises RuntimeError
    "[Rank 0]: Rank 1 failed to pass monitoredBarrier in 1000 ms" (with `wait_all_ranks`, every missing
    rank).
    """
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("monitored_barrier")
    timeout = pg._timeout if timeout is None else timeout
    ms = int(timeout.total_seconds() * 1000)
    MPI = _mpi.mpi()
    comm, me, n = pg._comm, pg.rank(), pg.size()
    tag = 0x3FFF00
    token = np.zeros(1, np.uint8)
    pg._drain()
    deadline = time.monotonic() + timeout.total_seconds()

    def poll(reqs):
        while time.monotonic() < deadline:
            if all(r == MPI.REQUEST_NULL or r.Test() for r in reqs):
                return True
            time.sleep(0.001)
        return False

    if me == 0:
        bufs = [np.zeros(1, np.uint8) for _ in range(n)]
        reqs = {r: comm.Irecv(bufs[r], source=r, tag=tag) for r in range(1, n)}
        missing = []
        for r, req in reqs.items():
            if not poll([req]):
                missing.append(r)
                req.Cancel()
                if not wait_all_ranks:
                    break
        if missing:
            for r, req in reqs.items():
                if r not in missing:
                    try:
                        req.Cancel()
                    except Exception:  # noqa: BLE001 - completed already
                        pass
            if wait_all_ranks:
                raise RuntimeError(f"[Rank 0]: Ranks {', '.join(map(str, missing))} failed to pass "
                                   f"monitoredBarrier in {ms} ms")
            raise RuntimeError(f"[Rank 0]: Rank {missing[0]} failed to pass monitoredBarrier in {ms} ms")
        for r in range(1, n):
            comm.Send(token, dest=r, tag=tag + 1)
    else:
        comm.Send(token, dest=0, tag=tag)
        req = comm.Irecv(token, source=0, tag=tag + 1)
        if not poll([req]):
            req.Cancel()
            raise RuntimeError(f"[Rank {me}]: Rank 0 did not acknowledge monitoredBarrier in {ms} ms")


# ---------------------------------------------------------------------------------------------------------
# Point to point

def _p2p_peer(pg, peer, group_peer, what):
    p = _group_rank(pg, peer, group_peer)
    if p == pg.rank():
        raise ValueError(f"Invalid {what} rank: {what} rank should not be the same as the rank of the "
                         "current process.")
    if not 0 <= p < pg.size():
        raise ValueError(f"Invalid {what} rank: {p}")
    return p


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to rank `dst` without blocking; returns a Work."""
    _check_tensor(tensor, "tensor")
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("isend")
    peer = _p2p_peer(pg, dst, group_dst, "destination")
    buf = np.ascontiguousarray(_array(tensor))
    work = Work([tensor])
    work._requests = [pg._comm.Isend(_mpi.as_bytes(buf), dest=peer, tag=tag)]
    work._pg = pg
    work._keep = buf
    return work


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from rank `src` (None: any rank) without blocking; returns a Work."""
    _check_tensor(tensor, "tensor")
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("irecv")
    MPI = _mpi.mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else _p2p_peer(pg, src, group_src, "source")
    buf, writeback = _buffer(tensor)
    work = Work([tensor])
    work._requests = [pg._comm.Irecv(_mpi.as_bytes(buf), source=peer, tag=tag)]
    work._pg = pg
    work._statuses = [MPI.Status()]

    def post():
        if writeback:
            writeback()
        _written(tensor)
        work._source = pg._ranks[work._statuses[0].Get_source()]
    work._post = post
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to rank `dst` (blocking)."""
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from rank `src` (None: any rank); returns the sender's rank."""
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    return w.source_rank()


class P2POp:
    """A point-to-point op for `batch_isend_irecv`: `P2POp(dist.isend, tensor, peer)`."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        _check_tensor(tensor, "tensor")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = (op, tensor, peer, group,
                                                                                  tag, group_peer)

    def __repr__(self):
        return f"P2POp(op={self.op.__name__}, tensor={tuple(self.tensor.shape)}, peer={self.peer})"


def batch_isend_irecv(p2p_op_list):
    """Start every op of `p2p_op_list` (P2POp) and return their Works."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works


# ---------------------------------------------------------------------------------------------------------
# Object collectives: pickled, through MPI's object collectives (in the group's issue order)

def _pickled(obj):
    f = io.BytesIO()
    pickle.Pickler(f).dump(obj)
    return f.getvalue()


def _run_value(pg, fn):
    box = []
    pg._run(lambda: box.append(fn()), [], False)
    return box[0]


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Broadcast the picklable objects of rank `src`'s `object_list` into every rank's `object_list`."""
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("broadcast_object_list")
    root = _group_rank(pg, src, group_src)
    data = _pickled(list(object_list)) if pg.rank() == root else None
    got = _run_value(pg, lambda: pg._comm.bcast(data, root=root))
    if pg.rank() != root:
        object_list[:] = pickle.loads(got)


def all_gather_object(object_list, obj, group=None):
    """Gather the picklable `obj` of every rank into `object_list` (one entry per rank)."""
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("all_gather_object")
    got = _run_value(pg, lambda: pg._comm.allgather(_pickled(obj)))
    for i, b in enumerate(got):
        object_list[i] = pickle.loads(b)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Gather the picklable `obj` of every rank into `object_gather_list` on rank `dst`."""
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("gather_object")
    if dst is None and group_dst is None:
        dst = 0
    root = _group_rank(pg, dst, group_dst)
    if pg.rank() == root and object_gather_list is None:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    if pg.rank() != root and object_gather_list is not None:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    got = _run_value(pg, lambda: pg._comm.gather(_pickled(obj), root=root))
    if pg.rank() == root:
        for i, b in enumerate(got):
            object_gather_list[i] = pickle.loads(b)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """Rank i receives `scatter_object_input_list[i]` of rank `src` in `scatter_object_output_list[0]`."""
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    pg = _pg(group)
    if pg is None:
        return _warn_not_in_group("scatter_object_list")
    if src is None and group_src is None:
        src = 0
    root = _group_rank(pg, src, group_src)
    data = [_pickled(o) for o in scatter_object_input_list] if pg.rank() == root else None
    got = _run_value(pg, lambda: pg._comm.scatter(data, root=root))
    scatter_object_output_list[0] = pickle.loads(got)


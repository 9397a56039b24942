"""The types torch defines in C++ (torch._C._distributed_c10d): ReduceOp, Work, ProcessGroup, GradBucket.

`distributed_c10d.py` (torch's Python module of the same name) makes the groups and runs the collectives;
a ProcessGroup here holds the MPI communicator and the worker thread its asynchronous collectives run on
(NOTE [ Asynchronous collectives run on a worker thread ] in `_mpi.py`); a Work is the handle of one op.
"""

import datetime
import enum
import time

from . import _mpi
from ._store import DistBackendError

__all__ = ["ReduceOp", "Work", "ProcessGroup", "GradBucket"]

_now = time.monotonic
_GLOO_TIMEOUT_AT = "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78]"


class _RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


_RedOpType.__name__ = _RedOpType.__qualname__ = "RedOpType"


class ReduceOp:
    """The reduction operations of collectives (`ReduceOp.SUM`, ...), members of `ReduceOp.RedOpType`."""

    RedOpType = _RedOpType
    SUM, AVG, PRODUCT, MIN, MAX = _RedOpType.SUM, _RedOpType.AVG, _RedOpType.PRODUCT, _RedOpType.MIN, _RedOpType.MAX
    BAND, BOR, BXOR, PREMUL_SUM = _RedOpType.BAND, _RedOpType.BOR, _RedOpType.BXOR, _RedOpType.PREMUL_SUM

    def __init__(self, op=_RedOpType.SUM):
        self.op = op

    def __eq__(self, other):
        return (other.op if isinstance(other, ReduceOp) else other) == self.op

    def __hash__(self):
        return hash(self.op)


def _op_name(op):
    op = op.op if isinstance(op, ReduceOp) else op
    if not isinstance(op, _RedOpType) or op is _RedOpType.PREMUL_SUM:
        raise TypeError("(): incompatible function arguments. The following argument types are supported:\n"
                        "    1. (self: torch._C._distributed_c10d.AllreduceOptions, "
                        "arg0: torch._C._distributed_c10d.ReduceOp) -> None")
    return op.name


# ---------------------------------------------------------------------------------------------------------
# Work

class Work:
    """The handle of a collective or point-to-point op (torch.distributed.Work).

    `wait()` blocks until the op is complete and its results are in the output tensors, and returns True;
    `is_completed()` asks without blocking; `get_future()` is an `ember.futures.Future` completed with
    the output tensors.
    """

    def __init__(self, outputs=None):
        import threading

        self._event = threading.Event()
        self._outputs = outputs if outputs is not None else []
        self._exception = None
        self._future = None
        self._requests = None  # point-to-point: MPI requests completed by wait()
        self._statuses = None
        self._post = None  # run once the requests completed (copy back, source rank)
        self._source = -1
        self._pg = None  # the ProcessGroup whose timeout bounds the wait for `_requests`

    def _finish(self, result, exception):
        self._exception = exception
        self._event.set()
        if self._future is not None and not self._future.done():
            if exception is not None:
                self._future.set_exception(exception)
            else:
                self._future.set_result(self._outputs)

    def _progress(self):
        """Complete a point-to-point op's MPI requests (blocking)."""
        if self._requests is not None and not self._event.is_set():
            try:
                if self._pg is not None:  # (under its group's timeout: NOTE [ Collective timeouts ])
                    self._pg._wait(self._requests, self._statuses)
                else:
                    _mpi.wait(self._requests, statuses=self._statuses)
                self._requests_done()
            except Exception as e:  # noqa: BLE001 - delivered through wait()
                self._finish(None, e)

    def wait(self, timeout=None):
        """Wait for the op; returns True. Raises the op's error, if it failed."""
        self._progress()
        helper = _mpi.current_worker()
        if helper is not None and not self._event.is_set():  # NOTE [ Callbacks on the worker thread ]
            helper.help_until(self._event)
        seconds = None if timeout is None or timeout == datetime.timedelta(0) else timeout.total_seconds()
        if not self._event.wait(seconds):
            raise DistBackendError(f"Work timed out after {int(seconds * 1000)} ms")
        if self._exception is not None:
            raise self._exception
        return True

    def is_completed(self):
        """Whether the op has completed (without blocking)."""
        if self._requests is not None and not self._event.is_set():
            if _mpi.mpi().Request.Testall(self._requests, self._statuses):
                self._requests_done()
        return self._event.is_set()

    def _requests_done(self):
        try:
            if self._post is not None:
                self._post()
            self._finish(None, None)
        except Exception as e:  # noqa: BLE001
            self._finish(None, e)

    def is_success(self):
        return self.is_completed() and self._exception is None

    def exception(self):
        return self._exception

    def result(self):
        """The output tensors of the op."""
        self.wait()
        return self._outputs

    def source_rank(self):
        """The rank a `recv` from any source received from."""
        return self._source

    def synchronize(self):
        self.wait()

    def get_future(self):
        """An `ember.futures.Future` completed with the op's output tensors."""
        from ..futures import Future

        if self._future is None:
            fut = Future()
            fut._waiter = self.wait
            self._future = fut
            if self._event.is_set():
                if self._exception is not None:
                    fut.set_exception(self._exception)
                else:
                    fut.set_result(self._outputs)
        return self._future

    def get_future_result(self):
        return self.get_future()


def _done_work(outputs):
    w = Work(outputs)
    w._finish(None, None)
    return w


# ---------------------------------------------------------------------------------------------------------
# Process groups

class ProcessGroup:
    """A group of ranks collectives run over (torch.distributed.ProcessGroup), over an MPI communicator."""

    def __init__(self, comm, global_ranks, backend, name, store, timeout):
        self._comm = comm
        self._ranks = list(global_ranks)  # group rank -> global rank
        self._group_of = {g: i for i, g in enumerate(self._ranks)}
        self._backend = backend
        self._name = name
        self._store = store
        self._timeout = timeout
        self._worker = _mpi.Worker(f"ember-pg-{name}")
        self._p2p_tag = 0
        self._desc = "undefined"  # init_process_group names the default group "default_pg"
        self._broken = False  # NOTE [ Collective timeouts ]

    def rank(self):
        return self._comm.rank

    def size(self):
        return self._comm.size

    def name(self):
        return self._backend_name_str()

    def _backend_name_str(self):
        return "gloo" if self._backend not in ("mpi",) else "mpi"

    @property
    def group_name(self):
        return self._name

    @property
    def group_desc(self):
        return self._desc

    @property
    def bound_device_id(self):
        return None

    def _get_backend_name(self):
        return self._backend_name_str()

    def __repr__(self):
        return f"<ember.distributed.ProcessGroup {self._name} rank={self.rank()} size={self.size()}>"

    # NOTE [ Collective timeouts ]
    # As gloo's: a collective not complete within the group's timeout (`init_process_group(timeout=)`,
    # `new_group(timeout=)`) raises RuntimeError "Timed out waiting <ms>ms for recv operation to complete"
    # (gloo's message, with its source location), and the group is broken from then on: every later op on it
    # raises "Application timeout caused pair closure", as gloo's closed pairs do (the timed-out MPI
    # collective cannot be cancelled, so nothing later could be matched right).
    def _wait(self, request, statuses=None):
        """Wait for MPI request(s) of this group's ops (NOTE [ Waiting without spinning ])."""
        seconds = self._timeout.total_seconds()
        try:
            _mpi.wait(request, _now() + seconds, statuses)
        except _mpi.WaitTimeout:
            self._broken = True
            raise RuntimeError(f"{_GLOO_TIMEOUT_AT} Timed out waiting {int(seconds * 1000)}ms for recv "
                               "operation to complete") from None

    def _check_usable(self):
        if self._broken:
            raise RuntimeError("Application timeout caused pair closure")

    def _drain(self):
        """Wait until the worker has run everything queued before."""
        if not self._worker.idle():
            self._run(lambda: None, [], False)

    # the caller's thread when the worker is idle, else in issue order behind it (NOTE [ Asynchronous ...])
    def _run(self, fn, outputs, async_op):
        if self._broken:
            self._check_usable()
        if not async_op and self._worker.idle():
            fn()
            return None
        work = Work(outputs)
        self._worker.submit(fn, work)
        if async_op:
            return work
        work.wait()
        return None


# ---------------------------------------------------------------------------------------------------------
# NOTE [ dist.GradBucket ]
# torch exports GradBucket as `torch.distributed.GradBucket` (from torch._C._distributed_c10d, as here):
# comm hooks annotate `bucket: dist.GradBucket`, and DDP's Reducer (ember/nn/parallel/_reducer.py) makes them.

class GradBucket:
    """One bucket of gradients handed to a communication hook (torch.distributed.GradBucket).

    `buffer()` is the flat tensor holding the bucket's gradients back to back, `gradients()` their views
    into it, `parameters()` the parameters they belong to, `index()` the bucket's position (0 is the first
    reduced), `is_last()` whether it is the last bucket reduced in this iteration.
    """

    def __init__(self, index, buffer, gradients, parameters, is_last):
        self._index = index
        self._buffer = buffer
        self._gradients = gradients
        self._parameters = parameters
        self._is_last = is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def gradients(self):
        return list(self._gradients)

    def parameters(self):
        return list(self._parameters)

    def is_last(self):
        return self._is_last

    def set_buffer(self, buffer):
        """Replace the buffer the hook sees (the compression wrappers swap in a 16-bit copy); the reducer
        copies the future's result back into its own bucket."""
        self._buffer = buffer

"""DataLoader: batches from a dataset, in the main process or in worker processes, as
``torch.utils.data.dataloader``.

NOTE [ DataLoader worker processes ]
With ``num_workers > 0`` an iterator starts that many processes (the default multiprocessing context, i.e.
fork on Linux, or the one given). The main process keeps ``prefetch_factor * num_workers`` tasks
outstanding: task `k` (a list of indices from the batch sampler) goes round-robin to a worker's own index
queue; every worker answers on one shared result queue with (k, payload). Results may arrive in any
order; with ``in_order=True`` they are buffered and returned in task order, i.e. sampler order. Each
answered task frees a slot for the next one. Batches travel as shared-memory handles (NOTE [ Batches
travel through shared memory ] in _shared.py); workers are seeded as torch's (NOTE [ Worker seeding ]
in _worker.py).

Faults never hang the main process. While waiting for a result it waits on the result queue *and* on
the process sentinels of the active workers together, so a worker that dies (killed, segfault,
os._exit) is seen at once and raises "DataLoader worker (pid(s) N) exited unexpectedly"; ``timeout``
bounds each wait. An exception inside a worker comes back as its traceback text and is re-raised.

NOTE [ DataLoader shutdown ]
An iterator shuts its workers down when it is exhausted (unless workers are persistent), garbage
collected (a ``break`` out of the loop, an exception in the loop body, ``del loader``), or at interpreter
exit. Shutdown sets the done event (workers skip remaining tasks), sends each worker None, and keeps
draining the result queue while the workers exit, so none blocks on a full pipe; workers still alive
after MP_STATUS_CHECK_INTERVAL seconds (at once after a dead worker or a timeout) are terminated.
Drained payloads are discarded, which unlinks their segments, and finally any segment left under the
iterator's prefix (a worker killed mid-batch) is unlinked, so no process and no shared memory outlives
the iterator. A worker's exception is re-raised without a reference cycle (ExceptionWrapper.reraise
drops its own reference), so the failed iterator is freed, and its workers stopped, as soon as the
exception is; see also NOTE [ Worker pools outlive their iterator's garbage cycle ].

Differences from torch: a batch that cannot be pickled in a worker is re-raised as that pickling error
(torch loses it in the queue's feeder thread and waits forever); an iterator freed by the garbage
collector stops its workers at once (torch's queues are finalized first, so its shutdown waits out a
join timeout per worker).
"""

import atexit
import itertools
import math
import multiprocessing
import multiprocessing.connection
import os
import queue
import time
import warnings
from typing import Generic, TypeVar

from . import _shared
from ._fetch import _DatasetKind
from ._worker import (
    MP_STATUS_CHECK_INTERVAL,
    ExceptionWrapper,
    _IterableDatasetStopIteration,
    _ResumeIteration,
    _worker_loop,
    get_worker_info,
)
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

_T_co = TypeVar("_T_co", covariant=True)


class _InfiniteConstantSampler(Sampler):
    """``itertools.repeat(None)``: the sampler of an IterableDataset."""

    def __iter__(self):
        while True:
            yield None


def _draw_base_seed(generator):
    import ember

    return ember.empty((), dtype=ember.int64).random_(generator=generator).item()


def _cpu_count():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


class DataLoader(Generic[_T_co]):
    """Combines a dataset and a sampler, and iterates over batches of the dataset, in this process or in
    worker processes (NOTE [ DataLoader worker processes ]).

    Args:
        dataset (Dataset): dataset from which to load the data (map-style or iterable-style).
        batch_size (int, optional): samples per batch (default ``1``); ``None`` turns automatic batching
            off: each sample is returned alone, through ``default_convert``.
        shuffle (bool, optional): reshuffle at every epoch (default ``False``).
        sampler (Sampler or Iterable, optional): the order of dataset keys; excludes ``shuffle``.
        batch_sampler (Sampler or Iterable, optional): yields lists of keys; excludes ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers (int, optional): worker processes; ``0`` loads in the main process (default ``0``).
        collate_fn (Callable, optional): merges a list of samples into a batch (default
            ``default_collate``).
        pin_memory (bool, optional): accepted; there is no accelerator, so memory is never pinned (with
            torch's warning).
        drop_last (bool, optional): drop the last incomplete batch (default ``False``).
        timeout (numeric, optional): if positive, seconds to wait for a batch from the workers before
            raising RuntimeError (default ``0``: wait as long as the workers live).
        worker_init_fn (Callable, optional): called with the worker id in each worker, after seeding and
            before loading.
        multiprocessing_context (str or context, optional): start method of the workers ("fork",
            "spawn", "forkserver") or a multiprocessing context (default: the platform's default).
        generator (Generator, optional): used by RandomSampler and to draw the workers' ``base_seed``.
        prefetch_factor (int, optional, keyword-only): batches loaded in advance per worker (default
            ``2`` with workers, ``None`` without).
        persistent_workers (bool, optional): keep the workers (and their dataset copies) alive across
            epochs (default ``False``).
        pin_memory_device (str, optional): deprecated, accepted.
        in_order (bool, optional): return batches in sampler order (default ``True``); ``False`` returns
            them as they arrive.

    Example::

        >>> loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, num_workers=2)
        >>> for xb, yb in loader:
        ...     loss = model(xb, yb)
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        shuffle = self._check_dataset_kind(dataset, shuffle, sampler, batch_sampler)
        sampler, batch_sampler, batch_size, drop_last = _default_samplers(
            self._dataset_kind, dataset, batch_size, shuffle, sampler, batch_sampler, drop_last, generator)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    def _check_dataset_kind(self, dataset, shuffle, sampler, batch_sampler):
        """Set `_dataset_kind`; an IterableDataset takes no shuffle, sampler or batch_sampler."""
        if not isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Map
            return bool(shuffle)
        self._dataset_kind = _DatasetKind.Iterable
        if shuffle not in {False, None}:
            raise ValueError(
                f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}")
        if sampler is not None:
            raise ValueError(
                f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}")
        if batch_sampler is not None:
            raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                             f"but got batch_sampler={batch_sampler}")
        return shuffle

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(multiprocessing_context, str):
                valid_start_methods = multiprocessing.get_all_start_methods()
                if multiprocessing_context not in valid_start_methods:
                    raise ValueError(
                        "multiprocessing_context option should specify a valid start method in "
                        f"{valid_start_methods!r}, but got multiprocessing_context={multiprocessing_context!r}")
                multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
            if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                "specifying the start method, but got "
                                f"multiprocessing_context={multiprocessing_context}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        # Persistent workers live in the one iterator this loader keeps; otherwise each epoch starts afresh.
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # what the fetcher gets keys from: the batch sampler when batching, else the sampler
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            # an estimate from len(dataset), trusting the dataset to shard itself across workers
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Warn when more workers are asked for than CPUs this process may use (torch's warning)."""
        if not self.num_workers:
            return
        suggest = _cpu_count()
        if suggest is None or self.num_workers > suggest:
            cpuset_checked = hasattr(os, "sched_getaffinity")
            if suggest is not None:
                detail = (f"Our suggested max number of worker in current system is {suggest}"
                          f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, which is smaller "
                          "than what this DataLoader is going to create.")
            else:
                detail = "DataLoader is not able to compute a suggested max number of worker in current system."
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. {detail} "
                "Please be aware that excessive worker creation might get DataLoader running slow or even freeze, "
                "lower the worker number to avoid potential slowness/freeze if necessary.", stacklevel=2)


def _default_samplers(kind, dataset, batch_size, shuffle, sampler, batch_sampler, drop_last, generator):
    """torch's argument rules: (sampler, batch_sampler, batch_size, drop_last) after defaults."""
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                             "drop_last")
        batch_size, drop_last = None, False
    elif batch_size is None and drop_last:
        raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
    if sampler is None:
        if kind == _DatasetKind.Iterable:
            sampler = _InfiniteConstantSampler()
        elif shuffle:
            sampler = RandomSampler(dataset, generator=generator)
        else:
            sampler = SequentialSampler(dataset)
    if batch_size is not None and batch_sampler is None:
        batch_sampler = BatchSampler(sampler, batch_size, drop_last)
    return sampler, batch_sampler, batch_size, drop_last


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                          f"ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=3)
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=3)
        self._pin_memory = False
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _draw_base_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called}"
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        # torch's behaviour: an iterator holds processes and queues and cannot be pickled
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._dataset_fetcher = _DatasetKind.create_fetcher(self._dataset_kind, self._dataset, self._auto_collation,
                                                            self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration



# NOTE [ Worker pools outlive their iterator's garbage cycle ]
# An iterator is often freed by the cyclic garbage collector, not by refcounting: an exception re-raised
# from a worker keeps a traceback -> frame -> iterator cycle. The collector first clears weak references
# and runs finalizers of *everything* only reachable from the cycle, so a queue the iterator owned would
# already have its feeder thread stopped and its pipe closed when the iterator's __del__ runs, and the
# shutdown's None messages would never reach the workers. The processes, queues and event therefore live
# in a `_WorkerPool` held by the module-level `_running` registry until the pool is shut down: they are
# always reachable, and the iterator's __del__ (or the atexit hook) can stop them reliably.
_running = {}  # id(pool) -> pool, for every pool with live workers


@atexit.register
def _shutdown_running_pools():
    for pool in list(_running.values()):
        pool.shutdown()


class _WorkerPool:
    """The worker processes of one iterator, their index queues, the shared result queue and the done
    event, started and stopped together (NOTE [ DataLoader shutdown ])."""

    def __init__(self, ctx, num_workers, make_args):
        self.owner_pid = os.getpid()
        self.shm_prefix = _shared.make_prefix()
        self.result_queue = ctx.Queue()
        self.done_event = ctx.Event()
        self.index_queues, self.workers = [], []
        self.closed = False
        self.failed = False  # a worker died or timed out: shutdown does not wait for the others
        _running[id(self)] = self
        try:
            for i in range(num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()  # the main process never waits to flush tasks at exit
                self.index_queues.append(index_queue)
                w = ctx.Process(target=_worker_loop, args=make_args(i, index_queue, self), daemon=True)
                w.start()
                self.workers.append(w)
        except BaseException:
            self.shutdown()
            raise

    def get(self, timeout, active):
        """(True, (task idx, data)) or (False, None) after `timeout`; RuntimeError if an active worker died.

        The result queue's reader and the sentinels of the active workers are waited on together, so a
        dead worker is noticed at once rather than after a polling interval.
        """
        reader = self.result_queue._reader
        sentinels = [w.sentinel for w, ok in zip(self.workers, active, strict=False) if ok]
        if reader in multiprocessing.connection.wait([reader, *sentinels], timeout):
            try:
                idx, payload = self.result_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                return False, None
            return True, (idx, _shared.loads(payload) if isinstance(payload, bytes) else payload)
        failed = [i for i, w in enumerate(self.workers) if active[i] and not w.is_alive()]
        if failed:
            for i in failed:
                self.index_queues[i].put(None)
                active[i] = False
            pids = ", ".join(str(self.workers[i].pid) for i in failed)
            self.failed = True
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly")
        return False, None

    def shutdown(self):
        """Stop and reap the workers and unlink all shared memory (NOTE [ DataLoader shutdown ])."""
        if self.closed or os.getpid() != self.owner_pid:  # a forked child never stops its parent's workers
            return
        self.closed = True
        _running.pop(id(self), None)
        clean = False
        try:
            self.done_event.set()
            for q in self.index_queues:
                q.put(None)
            clean = self._join_and_drain(time.monotonic() + (0 if self.failed else MP_STATUS_CHECK_INTERVAL))
        finally:
            for w in self.workers:
                if w.is_alive():
                    w.terminate()
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for q in self.index_queues:
                q.close()
            if clean:  # every worker flushed its queue and exited: what is left is whole messages
                while self.result_queue._reader.poll():
                    self._discard_one()
            self.result_queue.cancel_join_thread()
            self.result_queue.close()
            _shared.unlink_prefix(self.shm_prefix)

    def _join_and_drain(self, deadline):
        """Discard results while the workers exit, so none blocks on a full pipe; True if all exited."""
        reader = self.result_queue._reader
        alive = [w for w in self.workers if w.is_alive()]
        while alive:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if reader in multiprocessing.connection.wait([reader, *(w.sentinel for w in alive)], remaining):
                self._discard_one()
            alive = [w for w in alive if w.is_alive()]
        return True

    def _discard_one(self):
        try:
            _, payload = self.result_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
        except queue.Empty:
            return
        if isinstance(payload, bytes):
            _shared.discard(payload)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Iterates once (or once per epoch with persistent workers) over the dataset with worker processes
    (NOTE [ DataLoader worker processes ])."""

    _pool = None  # until the workers exist: __del__ of a half-built iterator has nothing to stop

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        objects = (self._dataset, self._collate_fn, loader.worker_init_fn)
        if ctx.get_start_method() != "fork":  # the child unpickles them (see _shared.dumps_by_value)
            objects = _shared.dumps_by_value(objects)

        def make_args(i, index_queue, pool):
            return (self._dataset_kind, objects, index_queue, pool.result_queue, pool.done_event,
                    self._auto_collation, self._drop_last, self._base_seed, i, self._num_workers, pool.shm_prefix)

        self._workers_status = [True] * self._num_workers
        self._pool = _WorkerPool(ctx, self._num_workers, make_args)
        self._workers = self._pool.workers
        self._index_queues = self._pool.index_queues
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # index of the next task to send to a worker
        self._rcvd_idx = 0  # index of the next task to return from __next__
        self._task_info = {}  # task idx -> (worker id,) while outstanding, (worker id, data) once received
        self._tasks_outstanding = 0
        self._workers_status[:] = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: restart their fetchers, drop the last epoch's leftovers
            for q in self._index_queues:
                q.put(_ResumeIteration())
            remaining = self._num_workers
            while remaining > 0:
                return_idx, _ = self._get_data()
                if isinstance(return_idx, _ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._pool.get(self._timeout, self._workers_status)
            if success:
                return data
            self._pool.failed = True
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            success, data = self._pool.get(MP_STATUS_CHECK_INTERVAL, self._workers_status)
            if success:
                return data

    def _next_data(self):
        while True:
            # skip tasks whose worker stopped (an exhausted IterableDataset) without an answer
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:  # has data or its worker is active
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # already received out of order
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    return self._process_data(data, self._task_info.pop(idx)[0])
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker (with room, when out of order)
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                if self._in_order or (self._workers_num_tasks[worker_queue_idx]
                                      < max_tasks // sum(self._workers_status)):
                    break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id):
        """Tell worker `worker_id` to exit (None) and send it no more tasks."""
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if self._pool is not None:
            self._pool.shutdown()

    def __del__(self):
        self._shutdown_workers()

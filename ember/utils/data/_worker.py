"""The DataLoader worker process: its loop, its seeding, `get_worker_info`, and how its exceptions travel,
as ``torch.utils.data._utils.worker``.

NOTE [ Worker seeding ]
The main process draws one 64-bit `base_seed` per iterator from the loader's generator (or ember's
default generator). Worker `i` then seeds, exactly as torch does:
- ember's default generator and Python's `random` with ``base_seed + i``;
- NumPy's global RNG with `_generate_state(base_seed, i)`, four 32-bit words hashed from both (torch's
  port of NumPy's SeedSequence), so NumPy streams differ between workers and epochs and do not collide
  with the ``base_seed + i`` streams. Workers forked from one parent therefore never repeat each other's
  NumPy random numbers (the classic pitfall of forking with a seeded global RNG).
`get_worker_info().seed` is ``base_seed + i``; a `worker_init_fn` that seeds other libraries should use it.
"""

import faulthandler
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

from . import _shared
from ._fetch import _DatasetKind

__all__ = ["WorkerInfo", "get_worker_info"]

MP_STATUS_CHECK_INTERVAL = 5.0  # seconds between liveness checks of the other side of a queue


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """Information about the current DataLoader worker process (read-only).

    Attributes:
        id: the worker id, 0 to num_workers - 1.
        num_workers: the total number of workers.
        seed: the random seed of this worker (NOTE [ Worker seeding ]).
        dataset: this worker's copy of the dataset.
        rng: per-thread RNG container (always None: ember workers are processes).
        worker_method: how the worker runs ("multiprocessing").
    """

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    """The :class:`WorkerInfo` of the current DataLoader worker process, or None in the main process.

    Use it in an IterableDataset's ``__iter__`` or in ``worker_init_fn`` to shard the data by
    ``info.id`` / ``info.num_workers``, or to seed other libraries with ``info.seed``.
    """
    return _worker_info


class KeyErrorMessage(str):
    """A string whose repr is itself, so a re-raised KeyError shows a readable traceback."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception and its traceback text, carried to another process and re-raised there."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def __reduce__(self):
        # an exception class that cannot be pickled (a local class) travels as its name only
        exc_type = self.exc_type
        try:
            pickle.dumps(exc_type)
        except Exception:  # noqa: BLE001
            exc_type = None
        return _rebuild_wrapper, (exc_type, self.exc_type.__name__, self.exc_msg, self.where)

    def reraise(self):
        """Raise the wrapped exception's type with "Caught X in ...\\nOriginal Traceback ..." as message."""
        name = self.exc_type.__name__ if self.exc_type is not None else self._name
        msg = f"Caught {name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is None:
            raise RuntimeError(msg)
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - a type that takes other arguments
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            del exception  # break the exception -> traceback -> frame -> exception cycle (NOTE [ DataLoader shutdown ])


def _rebuild_wrapper(exc_type, name, exc_msg, where):
    w = ExceptionWrapper.__new__(ExceptionWrapper)
    w.exc_type, w._name, w.exc_msg, w.where = exc_type, name, exc_msg, where
    return w


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """Sent by a worker whose IterableDataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of an epoch (and echoed back as acknowledgement)."""

    seed: int = None


def _generate_state(base_seed, worker_id):
    """Four 32-bit words seeding NumPy's RNG in worker `worker_id`: torch's port of NumPy's SeedSequence
    (MIT licence, (c) 2015 Melissa E. O'Neill, 2019 NumPy Developers), bit for bit."""
    mask = 0xFFFFFFFF
    mult_a, mult_b, mix_l, mix_r, xshift = 0x931E8875, 0x58F38DED, 0xCA01F9DD, 0x4973F715, 16
    hash_a = [0x43B0D7E5]

    def hash_(value):
        value = (value ^ hash_a[0]) & mask
        hash_a[0] = (hash_a[0] * mult_a) & mask
        value = (value * hash_a[0]) & mask
        return (value ^ (value >> xshift)) & mask

    def mix(x, y):
        result = (((mix_l * x) & mask) - ((mix_r * y) & mask)) & mask
        return (result ^ (result >> xshift)) & mask

    pool = [hash_(v) for v in (worker_id, base_seed & mask, base_seed >> 32, 0)]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_b, state = 0x8B51F9DD, []
    for value in pool:
        value = (value ^ hash_b) & mask
        hash_b = (hash_b * mult_b) & mask
        value = (value * hash_b) & mask
        state.append((value ^ (value >> xshift)) & mask)
    return state


def _seed_worker(base_seed, worker_id):
    """Seed this worker's RNGs (NOTE [ Worker seeding ]); returns the worker's seed."""
    import numpy as np

    import ember

    seed = base_seed + worker_id
    random.seed(seed)
    ember.manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


def _send(data_queue, idx, data, worker_id):
    """Put a result on the queue as a shared-memory payload; a batch that cannot be pickled becomes the
    pickling error, so the main process always gets an answer for `idx`."""
    try:
        payload = _shared.dumps(data)
    except Exception:  # noqa: BLE001
        payload = _shared.dumps(ExceptionWrapper(where=f"in DataLoader worker process {worker_id}"))
    data_queue.put((idx, payload))


def _enable_faulthandler():
    """A segfault in dataset code prints the worker's Python traceback before the process dies."""
    try:
        faulthandler.enable()
    except (AttributeError, RuntimeError, ValueError, OSError):  # no usable stderr (pythonw, closed fd)
        pass


def _parent_alive(parent_pid):
    return os.getppid() == parent_pid


def _worker_loop(dataset_kind, objects, index_queue, data_queue, done_event, auto_collation, drop_last,
                 base_seed, worker_id, num_workers, shm_prefix):
    """Body of worker process `worker_id`: take (task idx, indices) from `index_queue`, fetch and
    collate, and put (task idx, payload) on `data_queue` until told to stop (None).

    `objects` is (dataset, collate_fn, worker_init_fn), or those pickled by value (spawn, forkserver).
    The loop exits when the main process dies (checked every MP_STATUS_CHECK_INTERVAL seconds), unlinking
    the iterator's segments, so a killed main process leaves no orphan process and no shared memory.
    """
    global _worker_info
    parent_pid = os.getppid()  # the main process (fork, spawn) or the fork server (which dies with it)
    try:
        _enable_faulthandler()
        if isinstance(objects, bytes):
            objects = pickle.loads(objects)
        dataset, collate_fn, init_fn = objects
        _shared.init_worker(f"{shm_prefix}{worker_id}_")
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:  # noqa: BLE001 - reported with the first task
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        # After an IterableDataset is exhausted (or once done_event is set) the worker only waits for None.
        iteration_end = False
        while _parent_alive(parent_pid):
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))  # acknowledge
                iteration_end = False
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                data, iteration_end = _fetch(fetcher, index, dataset_kind, worker_id)
            _send(data_queue, idx, data, worker_id)
            del data, idx, index, r
        else:  # the main process died: nobody else will unlink this iterator's segments
            _shared.settle()
            _shared.unlink_prefix(shm_prefix)
    except KeyboardInterrupt:
        pass  # the main process gets it too and shuts the workers down


def _fetch(fetcher, index, dataset_kind, worker_id):
    """(batch or exception wrapper or end marker, whether the iterable dataset has ended)."""
    try:
        return fetcher.fetch(index), False
    except StopIteration:
        if dataset_kind == _DatasetKind.Iterable:
            return _IterableDatasetStopIteration(worker_id), True
        return ExceptionWrapper(where=f"in DataLoader worker process {worker_id}"), False
    except Exception:  # noqa: BLE001 - re-raised in the main process with this traceback
        return ExceptionWrapper(where=f"in DataLoader worker process {worker_id}"), False

"""DataLoader with worker processes: results against torch's, shared-memory transport, seeding, persistent
workers, IterableDataset sharding, and faults (worker exceptions, dying workers, timeouts), each checked to
leave no child process and no shared-memory segment behind. Datasets are tiny and num_workers is 2."""

import dataclasses
import gc
import multiprocessing
import os
import random
import re
import time

import numpy as np
import pytest
import torch
import torch.utils.data
from compare import assert_same_error
from dataloader_cases import Faulty, Squares, WorkerRandom, same_batch

import ember
import ember.utils.data
from ember.utils.data import _shared
from ember.utils.data._worker import _generate_state

X = np.arange(30, dtype=np.float32).reshape(10, 3)
Y = np.arange(10, dtype=np.int64) % 3


def _children():
    """Live (non-zombie) child processes of this process, from /proc, except multiprocessing's own fork
    server and resource tracker, which outlive any DataLoader by design."""
    import multiprocessing.forkserver
    import multiprocessing.resource_tracker

    helpers = {getattr(multiprocessing.forkserver._forkserver, "_forkserver_pid", None),
               getattr(multiprocessing.resource_tracker._resource_tracker, "_pid", None)}
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                state, ppid = f.read().rsplit(")", 1)[1].split()[:2]
        except OSError:
            continue
        if int(ppid) == me and state != "Z" and int(entry) not in helpers:
            out.append(int(entry))
    return out


def _segments():
    return [f for f in os.listdir("/dev/shm") if f.startswith(f"ember_dl_{os.getpid()}_")]


def _assert_clean():
    assert multiprocessing.active_children() == []
    assert _children() == []
    assert _segments() == []


@pytest.fixture(autouse=True)
def no_leaks():
    yield
    if multiprocessing.active_children() or _children() or _segments():
        gc.collect()  # pytest.raises keeps tracebacks (and so iterators) in reference cycles
    _assert_clean()


def _loader(lib, dataset, **kwargs):
    return lib.utils.data.DataLoader(dataset, num_workers=kwargs.pop("num_workers", 2), **kwargs)


def _tensor_dataset(lib, transpose=False):
    x = lib.from_numpy(X.copy())
    return lib.utils.data.TensorDataset(x.t() if transpose else x, lib.from_numpy(Y[:3].copy() if transpose else Y))


def _shards(lib, n=10, shard=True):
    class Shards(lib.utils.data.IterableDataset):
        def __iter__(self):
            info = lib.utils.data.get_worker_info()
            if not shard or info is None:
                return iter(range(n))
            return iter(range(info.id, n, info.num_workers))

    return Shards()


CASES = {
    "dicts_batch4": lambda lib: list(_loader(lib, Squares(10), batch_size=4)),
    "tensors_drop_last": lambda lib: list(_loader(lib, _tensor_dataset(lib), batch_size=3, drop_last=True)),
    "unbatched_views": lambda lib: list(_loader(lib, _tensor_dataset(lib, transpose=True), batch_size=None)),
    "batch_sampler": lambda lib: list(_loader(lib, Squares(10), batch_sampler=[[9, 1], [4], [0, 2, 3], [5]])),
    "prefetch_1": lambda lib: list(_loader(lib, range(9), batch_size=2, prefetch_factor=1)),
    "iterable_sharded": lambda lib: list(_loader(lib, _shards(lib), batch_size=3)),
    "iterable_duplicated": lambda lib: list(_loader(lib, _shards(lib, 5, shard=False), batch_size=2)),
    "iterable_drop_last": lambda lib: list(_loader(lib, _shards(lib), batch_size=3, drop_last=True)),
    "iterable_unbatched": lambda lib: list(_loader(lib, _shards(lib, 5), batch_size=None)),
    "one_worker": lambda lib: list(_loader(lib, range(5), batch_size=2, num_workers=1)),
}


@pytest.mark.parametrize("case", CASES)
def test_worker_batches_match_torch(case):
    same_batch(CASES[case](ember), CASES[case](torch))


def test_batches_arrive_through_shared_memory_without_copies():
    batches = list(_loader(ember, _tensor_dataset(ember), batch_size=4))
    for x, y in batches:
        for t in (x, y):
            root = t._data.base
            assert isinstance(root.base, memoryview) and isinstance(root.base.obj, _shared._Segment)
            assert t.is_contiguous() and t.untyped_storage().nbytes() == t.numel() * t.element_size()
    assert _segments() == []  # unlinked as soon as mapped, while the batches are still alive
    x[0, 0] = 7.0  # a private, writable mapping
    assert x[0, 0].item() == 7.0


@pytest.mark.parametrize("context", ["spawn", multiprocessing.get_context("forkserver")])
def test_spawn_and_forkserver_contexts(context):
    # the dataset's tensors are pickled into the new interpreters; the batches come back through shm
    e = list(_loader(ember, _tensor_dataset(ember), batch_size=4, num_workers=1, multiprocessing_context=context))
    same_batch(e, list(torch.utils.data.DataLoader(_tensor_dataset(torch), batch_size=4)))


def test_prefetch_keeps_factor_times_workers_tasks_outstanding():
    for factor in (1, 3):
        it = iter(_loader(ember, range(20), batch_size=1, prefetch_factor=factor))
        assert it._send_idx == it._tasks_outstanding == 2 * factor
        next(it)
        assert it._send_idx == 2 * factor + 1
        del it


def test_in_order_false_returns_batches_as_they_come():
    class SlowFirst(Squares):
        def __getitem__(self, i):
            if i == 0:
                time.sleep(0.5)
            return super().__getitem__(i)

    unordered = [b["i"].tolist() for b in _loader(ember, SlowFirst(6), batch_size=2, in_order=False)]
    assert unordered[0] != [0, 1] and sorted(unordered) == [[0, 1], [2, 3], [4, 5]]
    ordered = [b["i"].tolist() for b in _loader(ember, SlowFirst(6), batch_size=2)]
    assert ordered == [[0, 1], [2, 3], [4, 5]]


# ---- seeding and worker info ------------------------------------------------------------------------------


def test_generate_state_matches_torch():
    from torch.utils.data._utils.worker import _generate_state as torch_generate_state

    for base, wid in [(0, 0), (1, 1), (2 ** 63 - 1, 7), (123456789123456789, 3), (2 ** 32 + 5, 0)]:
        assert _generate_state(base, wid) == torch_generate_state(base, wid)


def test_workers_are_seeded_like_torch_and_never_repeat_numpy_numbers():
    loader = _loader(ember, WorkerRandom(8), batch_size=None, generator=ember.Generator().manual_seed(7))
    base = ember.empty((), dtype=ember.int64).random_(generator=ember.Generator().manual_seed(7)).item()
    samples = list(loader)
    assert [s[0] for s in samples] == [0, 1] * 4  # tasks go round-robin
    by_worker = {wid: [s for s in samples if s[0] == wid] for wid in (0, 1)}
    for wid, rows in by_worker.items():
        rs, py = np.random.RandomState(_generate_state(base, wid)), random.Random(base + wid)
        assert [r[1] for r in rows] == [base + wid] * 4
        assert [r[2] for r in rows] == [int(rs.randint(2 ** 31)) for _ in rows]
        assert [r[3] for r in rows] == [py.random() for _ in rows]
    numpy_draws = [s[2] for s in samples]
    assert len(set(numpy_draws)) == len(numpy_draws)
    assert [s[1:] for s in _loader(ember, WorkerRandom(8), batch_size=None,
                                   generator=ember.Generator().manual_seed(7))] == [s[1:] for s in samples]


def test_worker_seeds_and_draws_match_torch():
    # the same generator seed gives torch's base seed, hence torch's worker seeds and NumPy / random streams
    make = lambda lib: list(_loader(lib, WorkerRandom(6), batch_size=None,  # noqa: E731
                                    generator=lib.Generator().manual_seed(3)))
    assert make(ember) == make(torch)


def test_workers_seed_embers_generator():
    def draw(i):
        return ember.rand(2), ember.initial_seed()

    out = list(_loader(ember, range(2), batch_size=None, collate_fn=draw, generator=ember.Generator().manual_seed(1)))
    base = ember.empty((), dtype=ember.int64).random_(generator=ember.Generator().manual_seed(1)).item()
    for wid, (values, seed) in enumerate(out):
        assert seed == base + wid
        ember.manual_seed(base + wid)
        assert values.tolist() == ember.rand(2).tolist()


def test_worker_init_fn_and_worker_info():
    def init(worker_id):
        info = ember.utils.data.get_worker_info()
        assert info.id == worker_id and info.num_workers == 2
        info.dataset.tag = f"w{worker_id}"  # the worker's own copy of the dataset

    class Tagged(Squares):
        tag = "main"

        def __getitem__(self, i):
            info = ember.utils.data.get_worker_info()
            return self.tag, info.id, info.num_workers, info.seed - info.id, type(info).__name__

    ds = Tagged(4)
    out = list(_loader(ember, ds, batch_size=None, worker_init_fn=init))
    assert [o[:3] for o in out] == [["w0", 0, 2], ["w1", 1, 2]] * 2  # default_convert makes tuples lists
    assert len({o[3] for o in out}) == 1 and out[0][4] == "WorkerInfo"
    assert ds.tag == "main"


def test_worker_info_is_frozen_like_torch():
    def set_id(lib):
        info = lib.utils.data._utils.worker.WorkerInfo(id=0, num_workers=1, seed=0, dataset=None) \
            if lib is torch else lib.utils.data.WorkerInfo(id=0, num_workers=1, seed=0, dataset=None)
        info.id = 1

    assert_same_error(set_id)
    assert dataclasses.is_dataclass(ember.utils.data.WorkerInfo)


# ---- persistent workers -----------------------------------------------------------------------------------


def test_persistent_workers_are_reused_across_epochs():
    loader = _loader(ember, Squares(10), batch_size=4, persistent_workers=True)
    epochs, pids = [], []
    for _ in range(3):
        epochs.append([b["i"].tolist() for b in loader])
        pids.append([w.pid for w in loader._iterator._workers])
    assert epochs == [[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]] * 3
    assert pids[0] == pids[1] == pids[2] and len(_children()) == 2
    it = iter(loader)
    next(it)  # leave an epoch half done: its prefetched batches are dropped at the next epoch
    assert [b["i"].tolist() for b in loader] == epochs[0]
    del loader, it
    _assert_clean()


def test_persistent_workers_with_iterable_dataset():
    loader = _loader(ember, _shards(ember), batch_size=3, persistent_workers=True)
    first = [b.tolist() for b in loader]
    assert first == [b.tolist() for b in loader] == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]


# ---- faults -----------------------------------------------------------------------------------------------


def _error_of(lib, dataset, **kwargs):
    try:
        for _ in _loader(lib, dataset, batch_size=2, **kwargs):
            pass
    except Exception as e:  # noqa: BLE001
        if lib is torch:
            _stop_torch_iterators(e.__traceback__)
        return type(e), str(e)
    raise AssertionError("no error")


def _stop_torch_iterators(tb):
    """Shut down the torch iterator a traceback holds. torch's re-raise leaves it in a reference cycle, and
    when the garbage collector frees it its queues are finalized first, so its shutdown then waits out a
    5 s join per worker: stopping it now keeps the comparison tests fast."""
    while tb is not None:
        it = tb.tb_frame.f_locals.get("self")
        if isinstance(it, torch.utils.data.dataloader._MultiProcessingDataLoaderIter):
            it._shutdown_workers()
        tb = tb.tb_next


@pytest.mark.parametrize("mode, cls", [("raise", ValueError), ("key", KeyError)])
def test_worker_exception_is_reraised_with_its_traceback(mode, cls):
    t_cls, t_msg = _error_of(torch, Faulty(mode))
    e_cls, e_msg = _error_of(ember, Faulty(mode))
    assert e_cls is t_cls is cls
    assert e_msg.splitlines()[:2] == t_msg.splitlines()[:2] == [
        f"Caught {cls.__name__} in DataLoader worker process 1.", "Original Traceback (most recent call last):"]
    assert e_msg.splitlines()[-1] == t_msg.splitlines()[-1]  # "ValueError: bad item 3" / "KeyError: 3"
    assert 'dataloader_cases.py", line' in e_msg and "in __getitem__" in e_msg
    _assert_clean()  # no reference cycle keeps the failed iterator (and its workers) alive


def test_errors_in_worker_collate_and_init_are_reraised():
    _, msg = _error_of(ember, [[1, 2], [3]])
    assert msg.startswith("Caught RuntimeError in DataLoader worker process 0.")
    assert msg.endswith("RuntimeError: each element in list of batch should be of equal size\n")

    def bad_init(worker_id):
        raise OSError(f"cannot open shard {worker_id}")

    cls, msg = _error_of(ember, range(4), worker_init_fn=bad_init)
    assert cls is OSError and msg.endswith("OSError: cannot open shard 0\n")


def test_unpicklable_batch_is_an_error_not_a_hang():
    cls, msg = _error_of(ember, range(4), collate_fn=lambda b: (lambda: b))
    assert re.match(r"Caught \w+ in DataLoader worker process 0\.", msg) and "pickle" in msg


@pytest.mark.parametrize("mode", ["exit", "kill", "segv"])
def test_dead_worker_raises_instead_of_hanging(mode):
    start = time.monotonic()
    cls, msg = _error_of(ember, Faulty(mode))
    elapsed = time.monotonic() - start
    assert cls is RuntimeError and re.fullmatch(r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly", msg)
    t_cls, t_msg = _error_of(torch, Faulty(mode))
    assert t_cls is cls and re.sub(r"\d+", "N", t_msg) == re.sub(r"\d+", "N", msg)
    assert elapsed < 10  # not a speed check: the death is seen at once, where polling alone would hang
    _assert_clean()


def test_timeout_raises_and_stops_the_stuck_worker():
    e = _error_of(ember, Faulty("sleep"), timeout=0.5)
    assert e == _error_of(torch, Faulty("sleep"), timeout=0.5) == (RuntimeError,
                                                                    "DataLoader timed out after 0.5 seconds")
    _assert_clean()


# ---- shutdown ---------------------------------------------------------------------------------------------


def test_break_out_of_the_loop_shuts_workers_down():
    for i, _ in enumerate(_loader(ember, Squares(10), batch_size=1)):
        if i == 1:
            assert len(_children()) == 2
            break
    _assert_clean()


def test_exception_in_the_loop_body_shuts_workers_down():
    def train():
        for batch in _loader(ember, _tensor_dataset(ember), batch_size=2):
            raise ArithmeticError(batch[1].tolist())

    with pytest.raises(ArithmeticError):
        train()
    _assert_clean()


def test_deleting_the_loader_stops_persistent_workers():
    loader = _loader(ember, Squares(6), batch_size=2, persistent_workers=True)
    assert len(list(loader)) == 3 and len(_children()) == 2
    del loader
    _assert_clean()


def test_exhausted_iterator_has_stopped_its_workers():
    it = iter(_loader(ember, Squares(4), batch_size=2))
    assert len(list(it)) == 2
    assert it._pool.closed and multiprocessing.active_children() == []

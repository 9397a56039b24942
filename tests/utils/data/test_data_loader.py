"""DataLoader in the main process (num_workers=0) against torch's: batch contents, order, lengths,
argument errors and warnings."""

import warnings

import numpy as np
import pytest
import torch
import torch.utils.data
from compare import assert_same_error
from dataloader_cases import Squares, same_batch

import ember
import ember.utils.data

X = np.arange(30, dtype=np.float32).reshape(10, 3)
Y = np.arange(10, dtype=np.int64) % 3


def _tensor_dataset(lib):
    return lib.utils.data.TensorDataset(lib.from_numpy(X.copy()), lib.from_numpy(Y.copy()))


def _counting(lib, n):
    class Count(lib.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(n))

        def __len__(self):
            return n

    return Count()


def _pairs(lib):
    class Pairs(lib.utils.data.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return i, float(i) / 2

    return Pairs()


class _RowsTwice:
    """A TensorDataset subclass with its own __getitem__ (the batch must come through it, not a take)."""

    @staticmethod
    def make(lib):
        class Rows(lib.utils.data.TensorDataset):
            def __getitem__(self, i):
                x, y = super().__getitem__(i)
                return x * 2, y
        return Rows(lib.from_numpy(X.copy()), lib.from_numpy(Y.copy()))


def _mixed_dataset(lib):
    """Three tensors: a transposed (non-contiguous) float64 one, bool rows, int32 scalars."""
    a = np.arange(40, dtype=np.float64).reshape(4, 10).T
    return lib.utils.data.TensorDataset(lib.from_numpy(a.copy()).t().contiguous().t(),
                                        lib.from_numpy(np.arange(20).reshape(10, 2) % 3 == 0),
                                        lib.from_numpy(np.arange(10, dtype=np.int32)))


LOADER_CASES = {
    # TensorDataset batches (NOTE [ TensorDataset batches in one take ] in ember/utils/data/_fetch.py)
    "tensors_shuffled": lambda lib: (lib.manual_seed(7), list(lib.utils.data.DataLoader(
        _tensor_dataset(lib), batch_size=4, shuffle=True)))[1],
    "tensors_negative_indices": lambda lib: list(lib.utils.data.DataLoader(
        _tensor_dataset(lib), batch_sampler=[[-1, 2, -10], [5]])),
    "tensors_subclass_getitem": lambda lib: list(lib.utils.data.DataLoader(_RowsTwice.make(lib), batch_size=4)),
    "tensors_mixed_dtypes": lambda lib: list(lib.utils.data.DataLoader(_mixed_dataset(lib), batch_size=3)),
    "tensors_array_batches": lambda lib: list(lib.utils.data.DataLoader(
        _tensor_dataset(lib), batch_sampler=[np.array([4, 1]), (0, 2), range(3, 6)])),
    "tensors_custom_collate": lambda lib: list(lib.utils.data.DataLoader(
        _tensor_dataset(lib), batch_size=4, collate_fn=lambda b: [len(b), b[0]])),
    "tensors_batch3": lambda lib: list(lib.utils.data.DataLoader(_tensor_dataset(lib), batch_size=3)),
    "tensors_drop_last": lambda lib: list(lib.utils.data.DataLoader(_tensor_dataset(lib), batch_size=3,
                                                                    drop_last=True)),
    "dicts_of_numpy": lambda lib: list(lib.utils.data.DataLoader(Squares(7), batch_size=4)),
    "default_batch_size_1": lambda lib: list(lib.utils.data.DataLoader(_pairs(lib))),
    "batch_size_none": lambda lib: list(lib.utils.data.DataLoader(Squares(3), batch_size=None)),
    "range_dataset": lambda lib: list(lib.utils.data.DataLoader(range(7), batch_size=3)),
    "batch_sampler": lambda lib: list(lib.utils.data.DataLoader(
        _tensor_dataset(lib), batch_sampler=[[3, 1], [0], [9, 8, 7]])),
    "sampler_subset_order": lambda lib: list(lib.utils.data.DataLoader(range(10), batch_size=2,
                                                                       sampler=[7, 2, 5, 0, 9])),
    "custom_collate": lambda lib: list(lib.utils.data.DataLoader(range(5), batch_size=2, collate_fn=sum)),
    "iterable": lambda lib: list(lib.utils.data.DataLoader(_counting(lib, 7), batch_size=3)),
    "iterable_drop_last": lambda lib: list(lib.utils.data.DataLoader(_counting(lib, 7), batch_size=3,
                                                                     drop_last=True)),
    "iterable_unbatched": lambda lib: list(lib.utils.data.DataLoader(_counting(lib, 3), batch_size=None)),
    "len_batches": lambda lib: len(lib.utils.data.DataLoader(range(10), batch_size=3)),
    "len_drop_last": lambda lib: len(lib.utils.data.DataLoader(range(10), batch_size=3, drop_last=True)),
    "len_unbatched": lambda lib: len(lib.utils.data.DataLoader(range(10), batch_size=None)),
    "len_batch_sampler": lambda lib: len(lib.utils.data.DataLoader(range(10), batch_sampler=[[0], [1, 2]])),
    "len_iterable": lambda lib: len(lib.utils.data.DataLoader(_counting(lib, 10), batch_size=4)),
    "len_iterable_drop_last": lambda lib: len(lib.utils.data.DataLoader(_counting(lib, 10), batch_size=4,
                                                                        drop_last=True)),
    "len_iterator": lambda lib: len(iter(lib.utils.data.DataLoader(range(10), batch_size=4))),
    "shuffle_generator": lambda lib: list(lib.utils.data.DataLoader(range(10), batch_size=4, shuffle=True,
                                                                    generator=lib.Generator().manual_seed(5))),
    "shuffle_global_seed": lambda lib: (lib.manual_seed(2), [list(lib.utils.data.DataLoader(
        range(10), batch_size=4, shuffle=True)) for _ in range(2)])[1],
    "shuffle_sampler_type": lambda lib: type(lib.utils.data.DataLoader(range(3), shuffle=True).sampler).__name__,
    "default_sampler_type": lambda lib: type(lib.utils.data.DataLoader(range(3)).sampler).__name__,
    "prefetch_default": lambda lib: (lib.utils.data.DataLoader(range(3)).prefetch_factor,
                                     lib.utils.data.DataLoader(range(3), num_workers=1).prefetch_factor),
    "batch_sampler_attrs": lambda lib: (lambda d: (d.batch_size, d.drop_last))(
        lib.utils.data.DataLoader(range(3), batch_sampler=[[0]])),
}


@pytest.mark.parametrize("case", LOADER_CASES)
def test_dataloader_matches_torch(case):
    make = LOADER_CASES[case]
    same_batch(make(ember), make(torch))


LOADER_ERRORS = {
    "tensors_index_out_of_range": lambda lib: list(lib.utils.data.DataLoader(
        _tensor_dataset(lib), batch_sampler=[[0, 10]])),
    "tensors_index_too_negative": lambda lib: list(lib.utils.data.DataLoader(
        _tensor_dataset(lib), batch_sampler=[[-11]])),
    "negative_workers": lambda lib: lib.utils.data.DataLoader(range(3), num_workers=-1),
    "negative_timeout": lambda lib: lib.utils.data.DataLoader(range(3), timeout=-1),
    "prefetch_without_workers": lambda lib: lib.utils.data.DataLoader(range(3), prefetch_factor=2),
    "negative_prefetch": lambda lib: lib.utils.data.DataLoader(range(3), num_workers=1, prefetch_factor=-1),
    "persistent_without_workers": lambda lib: lib.utils.data.DataLoader(range(3), persistent_workers=True),
    "sampler_and_shuffle": lambda lib: lib.utils.data.DataLoader(range(3), sampler=[0], shuffle=True),
    "batch_sampler_and_batch_size": lambda lib: lib.utils.data.DataLoader(range(3), batch_sampler=[[0]],
                                                                          batch_size=2),
    "batch_sampler_and_drop_last": lambda lib: lib.utils.data.DataLoader(range(3), batch_sampler=[[0]],
                                                                         drop_last=True),
    "no_batching_and_drop_last": lambda lib: lib.utils.data.DataLoader(range(3), batch_size=None, drop_last=True),
    "iterable_shuffle": lambda lib: lib.utils.data.DataLoader(_counting(lib, 3), shuffle=True),
    "iterable_batch_sampler": lambda lib: lib.utils.data.DataLoader(_counting(lib, 3), batch_sampler=[[0]]),
    "context_without_workers": lambda lib: lib.utils.data.DataLoader(range(3), multiprocessing_context="fork"),
    "context_bad_name": lambda lib: lib.utils.data.DataLoader(range(3), num_workers=1,
                                                              multiprocessing_context="thread"),
    "context_bad_type": lambda lib: lib.utils.data.DataLoader(range(3), num_workers=1, multiprocessing_context=3),
    "set_batch_size_after_init": lambda lib: setattr(lib.utils.data.DataLoader(range(3)), "batch_size", 2),
    "set_dataset_after_init": lambda lib: setattr(lib.utils.data.DataLoader(range(3)), "dataset", [1]),
    "bad_batch_size": lambda lib: lib.utils.data.DataLoader(range(3), batch_size=0),
    "ragged_batch": lambda lib: list(lib.utils.data.DataLoader([[1, 2], [3]], batch_size=2)),
    "len_iterable_without_len": lambda lib: len(lib.utils.data.DataLoader(
        type("It", (lib.utils.data.IterableDataset,), {"__iter__": lambda self: iter([])})())),
    "pickle_iterator": lambda lib: __import__("pickle").dumps(iter(lib.utils.data.DataLoader(range(3)))),
}


@pytest.mark.parametrize("case", LOADER_ERRORS)
def test_dataloader_errors_match_torch(case):
    assert_same_error(LOADER_ERRORS[case])


def test_iterable_sampler_error_matches_torch():
    # the message embeds the sampler's repr: give both libraries the same object
    sampler = [0, 1]
    assert_same_error(lambda lib: lib.utils.data.DataLoader(_counting(lib, 3), sampler=sampler))


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [(x.category.__name__, str(x.message)) for x in w]


@pytest.mark.parametrize("kwargs", [{"pin_memory": True}, {"pin_memory": True, "pin_memory_device": "cuda"}])
def test_pin_memory_is_accepted_with_torchs_warning(kwargs):
    run = lambda lib: [b.tolist() for b in lib.utils.data.DataLoader(range(4), batch_size=2, **kwargs)]  # noqa: E731
    assert _warnings_of(lambda: run(ember)) == _warnings_of(lambda: run(torch))
    with pytest.warns(UserWarning, match="pin"):
        assert run(ember) == [[0, 1], [2, 3]]


def test_too_many_workers_warns_like_torch():
    make = lambda lib: lib.utils.data.DataLoader(range(3), num_workers=1000)  # noqa: E731
    assert _warnings_of(lambda: make(ember)) == _warnings_of(lambda: make(torch))


def test_iterable_longer_than_its_len_warns_like_torch():
    def run(lib):
        class Liar(lib.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(3))

            def __len__(self):
                return 2

        loader = lib.utils.data.DataLoader(Liar(), batch_size=None)
        len(loader)
        return list(loader)

    e, t = _warnings_of(lambda: run(ember)), _warnings_of(lambda: run(torch))
    assert len(e) == len(t) == 1 and e[0][0] == t[0][0] == "UserWarning"
    assert e[0][1].split(" was reported")[1] == t[0][1].split(" was reported")[1]


def test_shuffle_reshuffles_each_epoch_and_follows_the_generator():
    loader = ember.utils.data.DataLoader(range(20), batch_size=20, shuffle=True,
                                         generator=ember.Generator().manual_seed(0))
    a, b = next(iter(loader)).tolist(), next(iter(loader)).tolist()
    assert sorted(a) == sorted(b) == list(range(20)) and a != b
    again = ember.utils.data.DataLoader(range(20), batch_size=20, shuffle=True,
                                        generator=ember.Generator().manual_seed(0))
    assert next(iter(again)).tolist() == a


def test_get_worker_info_is_none_in_the_main_process():
    assert ember.utils.data.get_worker_info() is None
    seen = []

    class Probe(ember.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            seen.append(ember.utils.data.get_worker_info())
            return i

    list(ember.utils.data.DataLoader(Probe()))
    assert seen == [None, None]


def test_public_names_match_torch():
    names = set(torch.utils.data.__all__) - {"DataChunk", "DFIterDataPipe", "IterDataPipe", "MapDataPipe",
                                             "functional_datapipe", "argument_validation", "runtime_validation",
                                             "runtime_validation_disabled", "guaranteed_datapipes_determinism",
                                             "non_deterministic"}
    assert names <= set(dir(ember.utils.data)), names - set(dir(ember.utils.data))


def test_torch_private_utils_layout_is_importable():
    import ember.utils.data._utils.fetch  # noqa: F401
    from ember.utils.data._utils.collate import default_collate
    from ember.utils.data._utils.worker import get_worker_info

    assert default_collate is ember.utils.data.default_collate
    assert get_worker_info is ember.utils.data.get_worker_info
    assert ember.utils.data._utils.MP_STATUS_CHECK_INTERVAL == torch.utils.data._utils.MP_STATUS_CHECK_INTERVAL

"""Datasets (TensorDataset, StackDataset, ConcatDataset, ChainDataset, Subset, random_split) against torch."""

import warnings

import numpy as np
import pytest
import torch
import torch.utils.data
from compare import assert_same_error
from dataloader_cases import same_batch

import ember
import ember.utils.data

X = np.arange(20, dtype=np.float32).reshape(10, 2)
Y = np.arange(10, dtype=np.int64)


def _tensors(lib):
    return lib.from_numpy(X.copy()), lib.from_numpy(Y.copy())


class Items:
    """A plain map-style dataset over a list, built for either library."""

    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class Batched(Items):
    """With __getitems__, which Subset and StackDataset must use."""

    calls = 0

    def __getitems__(self, indices):
        Batched.calls += 1
        return [self.items[i] for i in indices]


def _mapped(lib, items):
    class Mapped(lib.utils.data.Dataset):
        def __getitem__(self, i):
            return items[i]

        def __len__(self):
            return len(items)

    return Mapped()


def _iterable(lib, items):
    class It(lib.utils.data.IterableDataset):
        def __iter__(self):
            return iter(items)

        def __len__(self):
            return len(items)

    return It()


DATASET_CASES = {
    "tensor_dataset_item": lambda lib: lib.utils.data.TensorDataset(*_tensors(lib))[3],
    "tensor_dataset_slice": lambda lib: lib.utils.data.TensorDataset(*_tensors(lib))[2:5],
    "tensor_dataset_len": lambda lib: len(lib.utils.data.TensorDataset(*_tensors(lib))),
    "stack_tuple": lambda lib: lib.utils.data.StackDataset(Items([1, 2, 3]), Items("abc"))[1],
    "stack_dict": lambda lib: lib.utils.data.StackDataset(a=Items([1, 2, 3]), b=Items("abc"))[2],
    "stack_getitems_tuple": lambda lib: lib.utils.data.StackDataset(
        Batched([1, 2, 3]), Items("abc")).__getitems__([2, 0]),
    "stack_getitems_dict": lambda lib: lib.utils.data.StackDataset(
        a=Batched([1, 2, 3]), b=Items("abc")).__getitems__([1]),
    "stack_len": lambda lib: len(lib.utils.data.StackDataset(Items([1, 2]), Items("ab"))),
    "concat_items": lambda lib: [(_mapped(lib, [0, 1, 2]) + _mapped(lib, [3, 4]) + _mapped(lib, [5]))[i]
                                 for i in range(-6, 6)],
    "concat_add_type": lambda lib: type(_mapped(lib, [0]) + _mapped(lib, [1])).__name__,
    "concat_sizes": lambda lib: lib.utils.data.ConcatDataset([Items([0, 1]), Items([]), Items([2])]).cumulative_sizes,
    "concat_tensor_datasets": lambda lib: lib.utils.data.ConcatDataset(
        [lib.utils.data.TensorDataset(*_tensors(lib))] * 2)[13],
    "chain": lambda lib: list(lib.utils.data.ChainDataset([_iterable(lib, [1, 2]), _iterable(lib, [3])])),
    "chain_add": lambda lib: list(_iterable(lib, [1, 2]) + _iterable(lib, [3])),
    "chain_len": lambda lib: len(lib.utils.data.ChainDataset([_iterable(lib, [1, 2]), _iterable(lib, [3])])),
    "subset": lambda lib: [lib.utils.data.Subset(Items("abcdef"), [4, 0, 2])[i] for i in range(3)],
    "subset_list_index": lambda lib: lib.utils.data.Subset(lib.utils.data.TensorDataset(*_tensors(lib)),
                                                           [4, 0, 2])[[0, 2]],
    "subset_getitems": lambda lib: lib.utils.data.Subset(Batched("abcdef"), [5, 1]).__getitems__([1, 0]),
    "subset_len": lambda lib: len(lib.utils.data.Subset(Items("abcdef"), [4, 0, 2])),
}


@pytest.mark.parametrize("case", DATASET_CASES)
def test_dataset_matches_torch(case):
    make = DATASET_CASES[case]
    same_batch(make(ember), make(torch))


DATASET_ERRORS = {
    "tensor_dataset_size_mismatch": lambda lib: lib.utils.data.TensorDataset(lib.zeros(3), lib.zeros(4)),
    "stack_mixed_args": lambda lib: lib.utils.data.StackDataset(Items([1]), b=Items([2])),
    "stack_empty": lambda lib: lib.utils.data.StackDataset(),
    "stack_size_mismatch": lambda lib: lib.utils.data.StackDataset(Items([1]), Items([1, 2])),
    "stack_dict_size_mismatch": lambda lib: lib.utils.data.StackDataset(a=Items([1]), b=Items([1, 2])),
    "concat_empty": lambda lib: lib.utils.data.ConcatDataset([]),
    "concat_iterable": lambda lib: lib.utils.data.ConcatDataset([_iterable(lib, [1])]),
    "concat_negative_out_of_range": lambda lib: lib.utils.data.ConcatDataset([Items([1, 2])])[-3],
    "concat_out_of_range": lambda lib: lib.utils.data.ConcatDataset([Items([1, 2])])[2],
    "chain_map_style": lambda lib: list(lib.utils.data.ChainDataset([Items([1])])),
    "dataset_getitem": lambda lib: lib.utils.data.Dataset()[0],
    "random_split_bad_sum": lambda lib: lib.utils.data.random_split(range(10), [3, 3]),
    "random_split_bad_fraction": lambda lib: lib.utils.data.random_split(range(10), [1.5, -0.5]),
}


@pytest.mark.parametrize("case", DATASET_ERRORS)
def test_dataset_errors_match_torch(case):
    assert_same_error(DATASET_ERRORS[case])


def test_subset_overriding_getitem_only_is_refused():
    def make(lib):
        class Sub(lib.utils.data.Subset):
            def __getitem__(self, idx):
                return 0

        return Sub(Items([1]), [0])

    assert_same_error(make)


def test_concat_cummulative_sizes_warns():
    for lib in (ember, torch):
        with pytest.warns(FutureWarning, match="renamed to `cumulative_sizes`"):
            assert lib.utils.data.ConcatDataset([Items([1, 2])]).cummulative_sizes == [2]


def test_subset_and_stack_use_getitems():
    Batched.calls = 0
    ember.utils.data.Subset(Batched("abc"), [0, 1]).__getitems__([0])
    ember.utils.data.StackDataset(Batched("abc")).__getitems__([0, 1])
    assert Batched.calls == 2


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [0.33, 0.33, 0.34], [1 / 3] * 3])
def test_random_split_lengths_match_torch(lengths):
    e = ember.utils.data.random_split(range(10), lengths, generator=ember.Generator().manual_seed(0))
    t = torch.utils.data.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in e] == [len(s) for s in t]
    assert sorted(i for s in e for i in s.indices) == list(range(10))  # a partition of the dataset
    assert all(type(s) is ember.utils.data.Subset for s in e)


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.2, 0.2, 0.6]])
def test_random_split_indices_match_torch(lengths):
    # ember's generator reproduces torch's randperm stream
    e = ember.utils.data.random_split(range(10), lengths, generator=ember.Generator().manual_seed(42))
    t = torch.utils.data.random_split(range(10), lengths, generator=torch.Generator().manual_seed(42))
    assert [s.indices for s in e] == [s.indices for s in t]
    ember.manual_seed(1)
    torch.manual_seed(1)
    e, t = ember.utils.data.random_split(range(10), lengths), torch.utils.data.random_split(range(10), lengths)
    assert [s.indices for s in e] == [s.indices for s in t]


def test_random_split_is_reproducible_with_a_generator():
    split = lambda seed: [s.indices for s in ember.utils.data.random_split(  # noqa: E731
        range(20), [0.5, 0.5], generator=ember.Generator().manual_seed(seed))]
    assert split(3) == split(3)
    assert split(3) != split(4)
    ember.manual_seed(5)
    a = [s.indices for s in ember.utils.data.random_split(range(20), [10, 10])]
    ember.manual_seed(5)
    assert a == [s.indices for s in ember.utils.data.random_split(range(20), [10, 10])]


def test_random_split_zero_length_warns():
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            parts = lib.utils.data.random_split(range(2), [0.1, 0.9])
        assert [len(p) for p in parts] == [1, 1]
        with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
            lib.utils.data.random_split(range(1), [0.5, 0.5])
        assert not [x for x in w if "Length of split" in str(x.message)]

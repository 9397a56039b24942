"""Samplers and DistributedSampler: orders defined by the samplers' own logic are compared with torch's;
random orders are checked for their properties (permutation, range, reproducibility, lengths)."""

import collections

import pytest
import torch
import torch.utils.data
from compare import assert_same_error

import ember
import ember.utils.data

D = range(10)


def _gen(lib, seed=0):
    return lib.Generator().manual_seed(seed)


ORDER_CASES = {
    "sequential": lambda lib: list(lib.utils.data.SequentialSampler(D)),
    "sequential_len": lambda lib: len(lib.utils.data.SequentialSampler(D)),
    "batch": lambda lib: list(lib.utils.data.BatchSampler(lib.utils.data.SequentialSampler(D), 3, False)),
    "batch_drop_last": lambda lib: list(lib.utils.data.BatchSampler(lib.utils.data.SequentialSampler(D), 3, True)),
    "batch_len": lambda lib: len(lib.utils.data.BatchSampler(range(10), 3, False)),
    "batch_len_drop_last": lambda lib: len(lib.utils.data.BatchSampler(range(10), 3, True)),
    "batch_exact": lambda lib: list(lib.utils.data.BatchSampler(range(9), 3, True)),
    "batch_of_list": lambda lib: list(lib.utils.data.BatchSampler([5, 1, 7, 2], 3, False)),
    "random_len": lambda lib: len(lib.utils.data.RandomSampler(D, num_samples=25)),
    "random_default_len": lambda lib: len(lib.utils.data.RandomSampler(D)),
    "subset_random_len": lambda lib: len(lib.utils.data.SubsetRandomSampler([3, 5, 7])),
    "weighted_len": lambda lib: len(lib.utils.data.WeightedRandomSampler([0.1, 0.9], 7)),
    "weighted_weights": lambda lib: lib.utils.data.WeightedRandomSampler([1, 2, 3], 2).weights,
}


@pytest.mark.parametrize("case", ORDER_CASES)
def test_sampler_matches_torch(case):
    from dataloader_cases import same_batch

    same_batch(ORDER_CASES[case](ember), ORDER_CASES[case](torch))


# ember's generator reproduces torch's CPU stream, so seeded random orders are torch's exactly
RANDOM_ORDER_CASES = {
    "random": lambda lib: list(lib.utils.data.RandomSampler(D, generator=_gen(lib, 3))),
    "random_two_epochs": lambda lib: (lambda s: [list(s), list(s)])(
        lib.utils.data.RandomSampler(D, generator=_gen(lib, 3))),
    "random_num_samples": lambda lib: list(lib.utils.data.RandomSampler(D, num_samples=25, generator=_gen(lib))),
    "random_replacement": lambda lib: list(lib.utils.data.RandomSampler(D, replacement=True, num_samples=70,
                                                                        generator=_gen(lib, 1))),
    "random_global_seed": lambda lib: (lib.manual_seed(9), list(lib.utils.data.RandomSampler(D)))[1],
    "subset_random": lambda lib: list(lib.utils.data.SubsetRandomSampler([11, 3, 7, 19], generator=_gen(lib, 2))),
    "weighted": lambda lib: list(lib.utils.data.WeightedRandomSampler([0.1, 0.5, 0.4, 1.0], 20,
                                                                      generator=_gen(lib, 2))),
    "weighted_no_replacement": lambda lib: list(lib.utils.data.WeightedRandomSampler(
        [0.1, 0.5, 0.4, 1.0], 3, replacement=False, generator=_gen(lib, 2))),
    "batch_of_random": lambda lib: list(lib.utils.data.BatchSampler(
        lib.utils.data.RandomSampler(D, generator=_gen(lib, 4)), 4, False)),
}


@pytest.mark.parametrize("case", RANDOM_ORDER_CASES)
def test_seeded_random_sampler_matches_torch(case):
    assert RANDOM_ORDER_CASES[case](ember) == RANDOM_ORDER_CASES[case](torch)


@pytest.mark.parametrize("epoch, seed, drop_last", [(0, 0, False), (3, 0, False), (1, 5, True)])
def test_distributed_sampler_shuffled_matches_torch(epoch, seed, drop_last):
    for rank in range(3):
        e = ember.utils.data.DistributedSampler(range(11), 3, rank, seed=seed, drop_last=drop_last)
        t = torch.utils.data.DistributedSampler(range(11), 3, rank, seed=seed, drop_last=drop_last)
        e.set_epoch(epoch)
        t.set_epoch(epoch)
        assert list(e) == list(t)


SAMPLER_ERRORS = {
    "batch_size_zero": lambda lib: lib.utils.data.BatchSampler(D, 0, False),
    "batch_size_bool": lambda lib: lib.utils.data.BatchSampler(D, True, False),
    "batch_size_float": lambda lib: lib.utils.data.BatchSampler(D, 2.0, False),
    "batch_drop_last_int": lambda lib: lib.utils.data.BatchSampler(D, 2, 1),
    "random_replacement_int": lambda lib: lib.utils.data.RandomSampler(D, replacement=1),
    "random_num_samples_zero": lambda lib: lib.utils.data.RandomSampler(D, num_samples=0),
    "random_num_samples_float": lambda lib: lib.utils.data.RandomSampler(D, num_samples=2.5),
    "random_empty_dataset": lambda lib: lib.utils.data.RandomSampler([]),
    "weighted_num_samples_bool": lambda lib: lib.utils.data.WeightedRandomSampler([1.0], True),
    "weighted_replacement_int": lambda lib: lib.utils.data.WeightedRandomSampler([1.0], 1, replacement=0),
    "weighted_2d": lambda lib: lib.utils.data.WeightedRandomSampler([[1.0, 2.0]], 1),
    "sampler_iter": lambda lib: iter(lib.utils.data.Sampler()),
    "sampler_len": lambda lib: len(lib.utils.data.Sampler()),
    "sampler_data_source": lambda lib: lib.utils.data.Sampler(D),
    "batch_sampler_no_len": lambda lib: len(lib.utils.data.BatchSampler(iter(D), 2, False)),
}


@pytest.mark.parametrize("case", SAMPLER_ERRORS)
def test_sampler_errors_match_torch(case):
    assert_same_error(SAMPLER_ERRORS[case])


def test_random_sampler_is_a_permutation_reproducible_by_generator():
    s = ember.utils.data.RandomSampler(D, generator=_gen(ember, 1))
    first = list(s)
    assert sorted(first) == list(D)
    assert list(ember.utils.data.RandomSampler(D, generator=_gen(ember, 1))) == first
    assert list(s) != first  # the generator advanced: a new epoch, a new order
    ember.manual_seed(3)
    a = list(ember.utils.data.RandomSampler(D))
    ember.manual_seed(3)
    assert list(ember.utils.data.RandomSampler(D)) == a


def test_random_sampler_num_samples_chains_permutations():
    out = list(ember.utils.data.RandomSampler(D, num_samples=25, generator=_gen(ember)))
    assert len(out) == 25
    assert sorted(out[:10]) == list(D) and sorted(out[10:20]) == list(D)
    assert len(set(out[20:])) == 5


@pytest.mark.parametrize("num_samples", [5, 32, 70])
def test_random_sampler_with_replacement(num_samples):
    out = list(ember.utils.data.RandomSampler(range(3), replacement=True, num_samples=num_samples,
                                              generator=_gen(ember)))
    assert len(out) == num_samples and set(out) <= {0, 1, 2}
    assert all(type(i) is int for i in out)
    if num_samples > 30:
        assert set(out) == {0, 1, 2}


def test_subset_random_sampler_permutes_its_indices():
    idx = [11, 3, 7, 19]
    out = list(ember.utils.data.SubsetRandomSampler(idx, generator=_gen(ember, 2)))
    assert sorted(out) == sorted(idx)
    assert list(ember.utils.data.SubsetRandomSampler(idx, generator=_gen(ember, 2))) == out


def test_weighted_random_sampler():
    w = [0.0, 1.0, 0.0, 3.0]
    out = list(ember.utils.data.WeightedRandomSampler(w, 400, generator=_gen(ember)))
    counts = collections.Counter(out)
    assert set(counts) == {1, 3} and 60 < counts[1] < 140  # expected 100
    no_repl = list(ember.utils.data.WeightedRandomSampler([1, 1, 1, 5], 4, replacement=False, generator=_gen(ember)))
    assert sorted(no_repl) == [0, 1, 2, 3]


def test_custom_sampler_subclass_drives_dataloader():
    class Evens(ember.utils.data.Sampler):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(0, self.n, 2))

        def __len__(self):
            return (self.n + 1) // 2

    loader = ember.utils.data.DataLoader(range(10), batch_size=2, sampler=Evens(10))
    assert [b.tolist() for b in loader] == [[0, 2], [4, 6], [8]]
    assert len(loader) == 3


# ---- DistributedSampler ---------------------------------------------------------------------------------


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (9, 3, False), (2, 4, False),
                                                    (3, 8, False), (11, 4, True), (7, 1, False)])
def test_distributed_sampler_unshuffled_matches_torch(n, replicas, drop_last):
    for rank in range(replicas):
        e = ember.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        t = torch.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(e) == list(t) and len(e) == len(t) and e.total_size == t.total_size


@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_shuffle_partitions_by_epoch(drop_last):
    n, replicas = 11, 3

    def shards(epoch, seed=0):
        out = []
        for rank in range(replicas):
            s = ember.utils.data.DistributedSampler(range(n), replicas, rank, seed=seed, drop_last=drop_last)
            s.set_epoch(epoch)
            out.append(list(s))
        return out

    e0 = shards(0)
    flat = [i for shard in e0 for i in shard]
    assert [len(s) for s in e0] == [3 if drop_last else 4] * replicas
    if drop_last:
        assert len(set(flat)) == 9  # disjoint shards, the tail dropped
    else:
        assert set(flat) == set(range(n))  # every sample seen, padded by repeating the head
    assert shards(0) == e0  # every replica agrees on the permutation of an epoch
    assert shards(1) != e0 and shards(0, seed=1) != e0


DISTRIBUTED_ERRORS = {
    "rank_too_big": lambda lib: lib.utils.data.DistributedSampler(D, num_replicas=2, rank=2),
    "rank_negative": lambda lib: lib.utils.data.DistributedSampler(D, num_replicas=2, rank=-1),
}


@pytest.mark.parametrize("case", DISTRIBUTED_ERRORS)
def test_distributed_sampler_errors_match_torch(case):
    assert_same_error(DISTRIBUTED_ERRORS[case])


@pytest.mark.parametrize("kwargs", [{"rank": 0}, {"num_replicas": 2}])
def test_distributed_sampler_without_distributed(kwargs):
    # with no process group initialized the sampler needs both numbers given, and fails as torch's does
    assert_same_error(lambda lib: lib.utils.data.DistributedSampler(D, **kwargs))

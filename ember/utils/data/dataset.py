"""Datasets: the map-style `Dataset` and iterable-style `IterableDataset` bases and their combinators
(TensorDataset, StackDataset, ConcatDataset, ChainDataset, Subset) plus `random_split`, as in
``torch.utils.data.dataset``.
"""

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable
from typing import Generic, TypeVar

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset",
           "Subset", "random_split"]

_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """An abstract map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``, which
    the default samplers and ``len(DataLoader)`` use). ``a + b`` concatenates two datasets.

    A subclass may also define ``__getitems__(indices)`` returning a list of samples, to fetch a whole
    batch at once.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])

    # No default `__len__`: see NOTE [ Lack of Default `__len__` ] in sampler.py.


class IterableDataset(Dataset[_T_co], Iterable):
    """An abstract iterable-style dataset: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker holds a copy of the dataset and iterates it; use
    :func:`~ember.utils.data.get_worker_info` in ``__iter__`` (or in ``worker_init_fn``) to give each
    worker its own shard, otherwise each sample is produced once per worker.

    Example::

        >>> class Range(IterableDataset):
        ...     def __init__(self, start, end):
        ...         self.start, self.end = start, end
        ...     def __iter__(self):
        ...         info = get_worker_info()
        ...         if info is None:
        ...             return iter(range(self.start, self.end))
        ...         return iter(range(self.start + info.id, self.end, info.num_workers))
    """

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are tuples of the i-th rows of the given tensors (which share their first dimension).

    Args:
        *tensors (Tensor): tensors with the same size of the first dimension.
    """

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Stacks datasets of equal length: ``StackDataset(a, b)[i] == (a[i], b[i])`` and
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``.

    Args:
        *args (Dataset): datasets for tuple-like samples.
        **kwargs (Dataset): datasets for dict-like samples.
    """

    def __init__(self, *args, **kwargs):
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or"
                                 "``dict``- (via ``kwargs``) like input/output, but both types are given.")
            datasets = args
        elif kwargs:
            datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")
        parts = list(datasets.values()) if isinstance(datasets, dict) else list(datasets)
        self._length = len(parts[0])
        if any(self._length != len(dataset) for dataset in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = datasets

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices):
        named = isinstance(self.datasets, dict)
        items = self.datasets.items() if named else enumerate(self.datasets)
        columns = {k: _fetch_many(dataset, indices) for k, dataset in items}
        if named:
            return [{k: col[i] for k, col in columns.items()} for i in range(len(indices))]
        return [tuple(col[i] for col in columns.values()) for i in range(len(indices))]

    def __len__(self):
        return self._length


def _fetch_many(dataset, indices):
    """`dataset`'s samples at `indices`, through its batched `__getitems__` when it has one."""
    if callable(getattr(dataset, "__getitems__", None)):
        items = dataset.__getitems__(indices)
        if len(items) != len(indices):
            raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
        return items
    return [dataset[idx] for idx in indices]


class ConcatDataset(Dataset):
    """The concatenation of map-style datasets.

    Args:
        datasets (sequence): the datasets to concatenate.
    """

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets):
        super().__init__()
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]

    @property
    def cummulative_sizes(self):
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`", FutureWarning,
                      stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """Chains iterable-style datasets, one after another, lazily.

    Args:
        datasets (iterable of IterableDataset): datasets to chain.
    """

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order.

    Args:
        dataset (Dataset): the whole dataset.
        indices (sequence): indices in the whole set selected for the subset.
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        return _fetch_many(self.dataset, [self.indices[idx] for idx in indices])

    def __len__(self):
        return len(self.indices)


def _fraction_lengths(n, fractions):
    """Split sizes for `fractions` summing to 1: floors, then the remainder round-robin (torch's rule)."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                          stacklevel=3)
    return lengths


def random_split(dataset, lengths, generator=None):
    """Randomly split `dataset` into non-overlapping subsets of the given lengths.

    Args:
        dataset (Dataset): dataset to split.
        lengths (sequence): lengths, or fractions summing to 1 (sizes are floored and the remainder is
            spread round-robin, as in torch).
        generator (Generator): generator of the permutation (default: ``ember.default_generator``).

    Example::

        >>> train, val = random_split(range(10), [0.8, 0.2], generator=ember.Generator().manual_seed(42))
    """
    import ember

    if generator is None:
        generator = ember.default_generator
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _fraction_lengths(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = ember.randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths, strict=False)]

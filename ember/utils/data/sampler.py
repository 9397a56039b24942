"""Samplers: the order in which a DataLoader visits a map-style dataset, as in ``torch.utils.data.sampler``.

Random samplers draw from ``ember``'s generators with the same calls torch makes (``randperm``,
``randint`` in chunks of 32, ``multinomial``), so where ember's generator reproduces torch's stream
(see ember/random.py) the orders are torch's too.
"""

import itertools
from typing import Generic, TypeVar

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]

_T_co = TypeVar("_T_co", covariant=True)


def _ember():
    # ember imports ember.utils.data lazily; importing at call time keeps `import ember` acyclic.
    import ember

    return ember


class Sampler(Generic[_T_co]):
    """Base class of samplers: subclasses define ``__iter__`` over dataset indices (or index lists for
    batch samplers) and, when the size is known, ``__len__``."""

    def __iter__(self):
        raise NotImplementedError

    # NOTE [ Lack of Default `__len__` ]
    # As in torch there is deliberately no default `__len__`: `len()` of a sampler that cannot know its
    # size must raise TypeError (as Python does for a missing method), and `list(sampler)` must still work
    # by falling back to `__iter__`, which a `__len__` raising NotImplementedError would break.


class SequentialSampler(Sampler):
    """Indices ``0, 1, ..., len(data_source) - 1`` in order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices: a permutation of the dataset, or, with ``replacement=True``, ``num_samples``
    independent draws.

    Args:
        data_source (Dataset): dataset to sample from.
        replacement (bool): draw with replacement (default ``False``).
        num_samples (int): number of indices to draw (default ``len(data_source)``); without replacement
            more than the dataset size chains several permutations.
        generator (Generator): generator used in sampling (default: a fresh one seeded from ember's
            default generator at each ``iter()``).
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        # the dataset size may change at run time
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        ember = _ember()
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            seed = int(ember.empty((), dtype=ember.int64).random_().item())
            generator = ember.Generator()
            generator.manual_seed(seed)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from ember.randint(high=n, size=(32,), dtype=ember.int64, generator=generator).tolist()
            yield from ember.randint(high=n, size=(self.num_samples % 32,), dtype=ember.int64,
                                     generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from ember.randperm(n, generator=generator).tolist()
            yield from ember.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order, without replacement.

    Args:
        indices (sequence): a sequence of indices.
        generator (Generator): generator used in sampling.
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _ember().randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Indices ``0 .. len(weights) - 1`` drawn with the given (unnormalised) probabilities.

    Args:
        weights (sequence): a 1-D sequence of weights.
        num_samples (int): number of samples to draw.
        replacement (bool): with replacement (default ``True``); without, an index appears at most once.
        generator (Generator): generator used in sampling.
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        ember = _ember()
        weights_tensor = ember.as_tensor(weights, dtype=ember.double)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        rand_tensor = _ember().multinomial(self.weights, self.num_samples, self.replacement,
                                           generator=self.generator)
        yield from iter(rand_tensor.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of another sampler into lists of ``batch_size``.

    Args:
        sampler (Sampler or Iterable): base sampler.
        batch_size (int): size of a mini-batch.
        drop_last (bool): drop the last batch if it is smaller than ``batch_size``.

    Example::

        >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False))
        [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*[sampler_iter] * self.batch_size, strict=False):
                yield [*batch]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size

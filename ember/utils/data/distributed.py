"""DistributedSampler: each of ``num_replicas`` processes sees its own 1/num_replicas of the dataset, as in
``torch.utils.data.distributed``.
"""

import math

from .sampler import Sampler

__all__ = ["DistributedSampler"]

_NO_GROUP = "Default process group has not been initialized, please make sure to call init_process_group."


def _group_size_and_rank():
    """World size and rank of the default process group (torch's error when there is none)."""
    try:
        from ember import distributed as dist
    except ImportError:  # ember.distributed not importable (no MPI): there can be no process group
        raise ValueError(_NO_GROUP) from None
    if not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    if not dist.is_initialized():
        raise ValueError(_NO_GROUP)
    return dist.get_world_size(), dist.get_rank()


class DistributedSampler(Sampler):
    """Restricts sampling to this process's share of the dataset (for DistributedDataParallel).

    Every replica sees ``ceil(len(dataset) / num_replicas)`` indices: the (optionally shuffled) index list
    is padded by repeating its head, or with ``drop_last=True`` cut to a multiple of ``num_replicas``,
    then replica ``rank`` takes every ``num_replicas``-th index starting at ``rank``. The shuffle is seeded
    with ``seed + epoch``: call :meth:`set_epoch` at the start of each epoch so epochs differ while all
    replicas agree.

    Args:
        dataset: dataset used for sampling.
        num_replicas (int, optional): number of processes (default: the default process group's world
            size; with no process group it must be given).
        rank (int, optional): rank of this process within ``num_replicas`` (default: its rank in the
            default process group).
        shuffle (bool): shuffle the indices (default ``True``).
        seed (int): shuffle seed, identical on every replica (default ``0``).
        drop_last (bool): drop the tail instead of padding (default ``False``).

    Example::

        >>> sampler = DistributedSampler(dataset, num_replicas=2, rank=0)
        >>> loader = DataLoader(dataset, sampler=sampler)
        >>> for epoch in range(3):
        ...     sampler.set_epoch(epoch)
        ...     for batch in loader:
        ...         train(batch)
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _group_size_and_rank()[0]
        if rank is None:
            rank = _group_size_and_rank()[1]
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            # the nearest length evenly divisible, so every replica gets the same number of samples
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            import ember

            g = ember.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = ember.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch, which (with ``seed``) seeds the shuffle; call it before each epoch."""
        self.epoch = epoch

"""``DistributedSampler``: each rank of a data-parallel job reads its own share of a dataset."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized

from ... import _random_draws as draws
from ..._backend import xp
from ...random import Generator
from .dataset import T_co
from .sampler import Sampler


class DistributedSampler(Sampler[T_co]):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` reads, as PyTorch partitions them.

    The (optionally shuffled) index list is padded by repeating its start until it
    divides evenly among the replicas, or, with ``drop_last``, cut to a multiple of
    ``num_replicas``; rank ``r`` then takes ``indices[r::num_replicas]``. Every rank
    has the same number of samples, so no rank waits at a collective for a batch
    that its peers do not have.

    Args:
        dataset: anything with ``len()``.
        num_replicas: number of ranks (default: the world size of the process group).
        rank: this rank (default: the rank in the process group).
        shuffle: permute the indices, with the same permutation on every rank (default True).
        seed: the permutation's seed; must be the same on every rank (default 0).
        drop_last: drop the tail instead of padding (default False).

    .. warning::
        Call ``set_epoch(epoch)`` at the start of every epoch (before creating the
        DataLoader iterator): the permutation is seeded with ``seed + epoch``, so
        without it every epoch visits the samples in the same order.

    The shuffled order is PyTorch's for the same seed and epoch (a randperm on a
    generator seeded with ``seed + epoch``).

    Example::

        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=32, sampler=sampler)
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for x, y in loader: ...
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)  # the largest share every rank has
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            order = draws.randperm(Generator().manual_seed(self.seed + self.epoch), n)
        else:
            order = xp.arange(n)
        # resize repeats the list cyclically (the padding) or cuts it (drop_last) to total_size.
        return iter(xp.resize(order, self.total_size)[self.rank::self.num_replicas].tolist())

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Make the next iteration use permutation ``seed + epoch`` (same on every rank)."""
        self.epoch = epoch

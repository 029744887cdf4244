"""Samplers: which dataset indices a DataLoader visits, and in what order.

Random samplers draw from an ``ember.Generator`` (the global one by default,
seeded by ``ember.manual_seed``), so the order is the same on every run with
the same seed. The numbers differ from PyTorch's: a different random generator.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic

from ... import _random_draws as draws
from ..._backend import xp
from ..._tensor import Tensor
from ...random import Generator, default_generator, generator_of
from .dataset import T_co


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` (indices, or lists of indices) and usually ``__len__``.

    It has no ``__init__`` of its own, as PyTorch's since 2.2: ``Sampler(dataset)`` and a subclass's
    ``super().__init__(dataset)`` (the older ``data_source`` argument) raise PyTorch's TypeError."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


_CHUNK = 32  # indices drawn at once with replacement, as PyTorch (num_samples may exceed memory)


def _check_positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


class RandomSampler(Sampler[int]):
    """Random indices of ``data_source``: a fresh permutation each epoch, or draws with replacement.

    Args:
        replacement: draw ``num_samples`` indices independently (default False: permutations).
        num_samples: how many indices an epoch yields (default ``len(data_source)``);
            without replacement, more than the length chains several permutations.
        generator: the random source (default: the global generator).
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _check_positive_int("num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        """PyTorch's order for the same seed: without a generator, each epoch seeds a fresh one from an int64
        drawn from the global generator (when iteration starts); then randperm(n) per pass over the data, or
        randint(n) in chunks of 32 with replacement."""
        n = len(self.data_source)
        g = self.generator
        if g is None:
            g = Generator().manual_seed(draws.int64_seed(default_generator))
        if self.replacement:
            for start in range(0, self.num_samples, _CHUNK):
                yield from draws.random_from_to(g, min(_CHUNK, self.num_samples - start), 0, n).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from draws.randperm(g, n).tolist()
        # (drawn even when nothing of it is used, as PyTorch: a given generator advances by it)
        yield from draws.randperm(g, n)[:self.num_samples % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a fresh random order each epoch."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in draws.randperm(generator_of(self.generator), len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices into ``weights``, index i drawn with probability ``weights[i] / sum(weights)``.

    Args:
        weights: non-negative, not necessarily summing to one (1-D sequence or tensor).
        replacement: with replacement (default True); without, ``num_samples`` must not exceed
            ``len(weights)``, and zero-weight indices are drawn only once the others are used up.
    """

    def __init__(self, weights: Sequence[float] | Tensor, num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        _check_positive_int("num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = xp.asarray(weights._data if isinstance(weights, Tensor) else weights, dtype=xp.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        if (w < 0).any() or not xp.isfinite(w).all():
            raise RuntimeError("invalid multinomial distribution (weights must be finite and non-negative)")
        if not replacement and num_samples > len(w):
            raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                               f"({num_samples} samples asked, {len(w)} weights)")
        if w.sum() == 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        self.weights, self.num_samples, self.replacement, self.generator = w, num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        # PyTorch's torch.multinomial of the float64 weights (zero weights come last without replacement)
        yield from draws.multinomial(generator_of(self.generator), self.weights[None], self.num_samples,
                                     self.replacement)[0].tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Group another sampler's indices into lists of ``batch_size`` (the last one shorter unless ``drop_last``)."""

    def __init__(self, sampler: Sampler | Iterable[int], batch_size: int, drop_last: bool) -> None:
        _check_positive_int("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        # (as PyTorch's: a batch's indices read at once, in C, as each batch is asked for)
        it, size = iter(self.sampler), self.batch_size
        if self.drop_last:
            for batch in zip(*[it] * size):
                yield [*batch]
            return
        batch = [*itertools.islice(it, size)]
        while batch:
            yield batch
            batch = [*itertools.islice(it, size)]

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks

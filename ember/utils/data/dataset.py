"""Datasets: map-style (``Dataset``) and iterable (``IterableDataset``), plus the
combinators ``TensorDataset``, ``Subset``, ``ConcatDataset``, ``StackDataset``, ``ChainDataset`` and
``random_split``, with PyTorch's semantics and error messages.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ... import _random_draws as draws
from ..._tensor import Tensor
from ...random import Generator, generator_of

T_co = TypeVar("T_co", covariant=True)  # (what a dataset yields: Dataset[T] in annotations, as PyTorch's)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``.

    ``a + b`` concatenates two datasets (a ``ConcatDataset``).
    """

    def __getitem__(self, index) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream: subclasses define ``__iter__``. ``a + b`` chains two streams."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class DatasetArgumentError(ValueError, AssertionError):
    """A bad argument to a dataset combinator (mismatched sizes, wrong dataset kind).

    PyTorch asserts in these places, so this is an AssertionError as well as a ValueError.
    """


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples are ``tuple(t[i] for t in tensors)``; every tensor must have the same first dimension.

    The DataLoader indexes these tensors with one index array per batch instead of
    collating sample by sample (same result, much less Python work).
    """

    def __init__(self, *tensors: Tensor) -> None:
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset expects tensors, but argument {i} is {type(t).__name__}")
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise DatasetArgumentError(
                "Size mismatch between tensors: TensorDataset needs the same first dimension, got sizes "
                + ", ".join(str(t.size(0)) for t in tensors)
            )
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset[T_co]):
    """Map-style datasets one after another; ``cumulative_sizes[i]`` is the end of dataset i."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise DatasetArgumentError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise DatasetArgumentError("ConcatDataset does not support IterableDataset (use ChainDataset)")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class StackDataset(Dataset[T_co]):
    """Datasets of one length side by side: sample i is ``(a[i], b[i], ...)`` for ``StackDataset(a, b)``, or
    ``{"image": a[i], "text": b[i]}`` for ``StackDataset(image=a, text=b)``.

    A batched fetch (``__getitems__``) uses each part's own ``__getitems__`` where it has one, as PyTorch's.
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) if args else list(kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets: tuple | dict = args if args else kwargs

    def _named_parts(self) -> list[tuple[Any, Dataset]]:
        """(key, dataset) pairs: the dict's keys, or positions for the tuple form."""
        ds = self.datasets
        return list(ds.items()) if isinstance(ds, dict) else list(enumerate(ds))

    def _sample(self, values: list) -> tuple | dict:
        if isinstance(self.datasets, dict):
            return dict(zip(self.datasets, values))
        return tuple(values)

    def __getitem__(self, index):
        return self._sample([d[index] for _, d in self._named_parts()])

    def __getitems__(self, indices: list) -> list:
        columns = []
        for _, d in self._named_parts():
            getitems = getattr(d, "__getitems__", None)
            if callable(getitems):
                items = getitems(indices)
                if len(items) != len(indices):
                    raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got "
                                     f"{len(items)}")
                columns.append(list(items))
            else:
                columns.append([d[i] for i in indices])
        return [self._sample(list(row)) for row in zip(*columns)]

    def __len__(self) -> int:
        return self._length


class ChainDataset(IterableDataset[T_co]):
    """Iterable datasets one after another (what ``iterable_a + iterable_b`` returns)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise DatasetArgumentError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


def _lengths_from_fractions(fractions: Sequence[float], n: int) -> list[int]:
    """Floor each share of ``n``, then hand the remainder out one by one from the first."""
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
    lengths = [math.floor(n * frac) for frac in fractions]
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=3)
    return lengths


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets.

    Args:
        lengths: sizes of the splits, or fractions summing to 1 (floored, the
            remainder given one by one to the first splits, as PyTorch does).
        generator: the random source (default: the global generator). The split
            is PyTorch's for the same seed (one randperm of the dataset on that generator).
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_from_fractions(lengths, n)
    if sum(lengths) != n:
        raise ValueError(
            f"Sum of input lengths does not equal the length of the input dataset! "
            f"(lengths {list(lengths)} sum to {sum(lengths)}, the dataset has {n} samples)"
        )
    perm = draws.randperm(generator_of(generator), n).tolist()
    ends = list(itertools.accumulate(lengths))
    return [Subset(dataset, perm[end - length:end]) for length, end in zip(lengths, ends)]

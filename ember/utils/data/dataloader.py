"""``DataLoader``: iterate a dataset in (optionally shuffled) batches, with PyTorch's options.

Differences from PyTorch, all documented on ``DataLoader``: there are no worker
processes (``num_workers > 0`` loads in the calling process, with the same
batches; an IterableDataset's workers are run there as PyTorch runs them),
and ``pin_memory`` is a no-op (ember tensors live in ordinary CPU memory).
The shuffled order is PyTorch's for the same seed, and each ``iter(loader)``
advances the global generator as PyTorch's does (the workers' base seed, then
the sampler's seed), so later draws match PyTorch's too.
"""

from __future__ import annotations

import itertools
import math
import os
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Generic

from ... import _random_draws as draws
from ... import _warnings
from ..._backend import xp
from ..._tensor import Tensor
from ...random import Generator, generator_of
from . import _workers
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset, T_co, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler

# PyTorch's DataLoader issues its warnings about the loader's settings from its own frames (so Python's default filter
# shows each once per process, however many loaders and loops a program has): ember's, from its own lines, named so.
_TORCH_MODULE = "torch.utils.data.dataloader"
# Attributes PyTorch refuses to change once a loader exists (its iterators would go out of step).
_FROZEN = frozenset({"batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"})


def get_worker_info() -> _workers.WorkerInfo | None:
    """Inside the code of a DataLoader worker (a dataset's ``__getitem__`` or ``__iter__``, ``worker_init_fn``, the
    collate function): that worker's id, number of workers, seed and dataset; None elsewhere, as in PyTorch's
    main process (ember runs the workers in this process: ``_workers``)."""
    return _workers.current()


class DataLoader(Generic[T_co]):
    """Batches of ``dataset``: ``for batch in DataLoader(ds, batch_size=32, shuffle=True)``.

    Args:
        dataset: a map-style ``Dataset`` (``__getitem__``/``__len__``) or an ``IterableDataset``.
        batch_size: samples per batch (default 1); None turns batching off (each sample is
            only converted by ``default_convert``).
        shuffle: a fresh random order each epoch (default False); needs a map-style dataset.
        sampler: the order of indices (exclusive with ``shuffle``).
        batch_sampler: yields whole lists of indices (exclusive with batch_size, shuffle,
            sampler and drop_last).
        num_workers: values > 0 load in this process (ember has no worker processes), giving
            PyTorch's batches: each worker has its own random states seeded as PyTorch's, runs
            ``worker_init_fn`` and has ``get_worker_info()`` tell its id; a map-style dataset's batch k
            is fetched by worker k % num_workers (the workers share the dataset); an
            ``IterableDataset`` is run as PyTorch's workers run it, one copy per worker, their batches
            in turn (``ember/utils/data/_workers.py``).
        collate_fn: merges a list of samples into a batch (default ``default_collate``).
        pin_memory: accepted, no effect (ember tensors are already in host memory).
        drop_last: drop the last incomplete batch (default False).
        generator: the random source of the default ``RandomSampler`` (default: global generator).
        timeout, worker_init_fn, multiprocessing_context, prefetch_factor, persistent_workers,
        pin_memory_device, in_order: accepted and validated as in PyTorch; no effect without workers.

    For a ``TensorDataset`` with the default collation each batch is taken with one
    index array per tensor instead of stacking per-sample items (same values, dtypes
    and order as the general path, a fraction of the time).
    """

    _initialized = False

    def __init__(self, dataset: Dataset[T_co], batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | None = None, batch_sampler: Sampler | None = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context=None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, "
                                     f"but got {name}={value}")
        elif sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                 "sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if self._iterable:  # (as PyTorch's: a stream has no indices, but code reads loader.batch_sampler.batch_size)
            sampler = _InfiniteConstantSampler()
        elif sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        self.num_workers, self.pin_memory, self.timeout = num_workers, pin_memory, timeout
        self.worker_init_fn, self.multiprocessing_context = worker_init_fn, multiprocessing_context
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        self._auto_collation = batch_sampler is not None
        self.collate_fn = collate_fn or (default_collate if self._auto_collation else default_convert)
        self._initialized = True
        if (message := _worker_number_warning(num_workers)) is not None:
            _warnings.warn_in(_TORCH_MODULE, message)  # PyTorch's, from the line of its __init__

    def __setattr__(self, name: str, value) -> None:
        if self._initialized and name in _FROZEN:
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    def _pinning_warnings(self) -> list[str]:
        """PyTorch's warnings about ``pin_memory`` as it makes an iterator (ember has no accelerator to pin for)."""
        messages = []
        if self.pin_memory and self.pin_memory_device:
            messages.append("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                            f"ignore pin_memory_device='{self.pin_memory_device}'.")
        if self.pin_memory:
            messages.append("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                            "memory won't be used.")
        return messages

    def __iter__(self) -> Iterator:
        # PyTorch's warnings as it makes an iterator: each iteration, but only the first for persistent workers
        # (whose iterator is kept; ember has no accelerator to pin for)
        if getattr(self, "_persistent_base_seed", None) is None:
            if (message := _worker_number_warning(self.num_workers)) is not None:
                _warnings.warn_in(_TORCH_MODULE, message)  # PyTorch's, from the line that makes a workers' iterator
            for message in self._pinning_warnings():
                # PyTorch's iterators warn from their base class, at the line of the single-process iterator or of
                # the workers' iterator that calls it: two places, each shown once
                if self.num_workers > 0:
                    _warnings.warn_in(_TORCH_MODULE, message)
                else:
                    _warnings.warn_in(_TORCH_MODULE, message)
        base_seed = self._base_seed()
        if self._iterable:
            batches = self._iter_workers(base_seed) if self.num_workers > 0 else self._iter_stream()
        elif self._can_index_tensors():
            batches = self._iter_tensor_batches()
        else:
            batches = self._iter_indexed_workers(base_seed, self._primed_indices()) if self.num_workers > 0 \
                else self._iter_indexed()
        index_sampler = self.batch_sampler if self._auto_collation else self.sampler
        return (_MultiProcessingDataLoaderIter if self.num_workers > 0 else _SingleProcessDataLoaderIter)(
            batches, index_sampler)

    def __len__(self) -> int:
        if not self._iterable:
            return len(self.batch_sampler if self._auto_collation else self.sampler)
        n = len(self.dataset)  # TypeError for a stream without __len__, as in PyTorch
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    # ------------------------------------------------------------------ iteration paths
    def _fetch(self, index):
        """One batch (a list of indices; a single index without batching) fetched and collated, as a PyTorch
        worker fetches it."""
        dataset, collate = self.dataset, self.collate_fn
        if not self._auto_collation:
            return collate(dataset[index])
        getitems = getattr(dataset, "__getitems__", None)  # a dataset's own batched fetch, as in PyTorch
        return collate(getitems(index) if getitems else [dataset[i] for i in index])

    def _iter_indexed(self) -> Iterator:
        """The general map-style path: fetch each sample, then collate the batch."""
        for index in self.batch_sampler if self._auto_collation else self.sampler:
            yield self._fetch(index)

    def _primed_indices(self) -> Iterator:
        """The sampler's indices (batches of them when batching), the first ``prefetch_factor * num_workers``
        taken now: PyTorch's worker iterator hands those to its workers as it is made, so a ``RandomSampler``
        draws its seed from the global generator at ``iter(loader)``, before any draw made between that and
        the first ``next()`` (with ``num_workers=0`` it draws at the first ``next()``); then one more as each batch
        is returned (a sampler drawing as it goes draws between the same ``next()`` calls as PyTorch's)."""
        it = iter(self.batch_sampler if self._auto_collation else self.sampler)
        return _read_ahead(deque(itertools.islice(it, (self.prefetch_factor or 2) * self.num_workers)), it)

    def _iter_indexed_workers(self, base_seed: int, indices: Iterator) -> Iterator:
        """A map-style dataset with ``num_workers > 0``: batch k is fetched and collated by worker k % num_workers
        (PyTorch's round-robin, restarted each epoch), with that worker's random states and ``get_worker_info()``,
        so random augmentations draw PyTorch's numbers and leave the calling process's states alone."""
        pool = self._workers(base_seed, copy_dataset=False)
        for k, index in enumerate(indices):
            yield pool[k % len(pool)].run(self._fetch, index)

    def _iter_stream(self) -> Iterator:
        """An IterableDataset: samples as they come, grouped into batches when batching is on."""
        collate, it = self.collate_fn, iter(self.dataset)
        if not self._auto_collation:
            for sample in it:
                yield collate(sample)
            return
        while batch := list(itertools.islice(it, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield collate(batch)

    def _base_seed(self) -> int:
        """The workers' base seed, an int64 drawn from ``generator`` (the global one by default) each time an
        iterator is made, as PyTorch's iterators do whatever ``num_workers`` is; persistent workers keep the
        first one (PyTorch resets its iterator rather than making a new one)."""
        seed = getattr(self, "_persistent_base_seed", None)
        if seed is None:
            seed = draws.int64_seed(generator_of(self.generator))
            if self.persistent_workers and self.num_workers > 0:
                self._persistent_base_seed = seed
        return seed

    def _workers(self, base_seed: int, copy_dataset: bool) -> list[_workers.Worker]:
        """A fresh set of workers (seeds, ``worker_init_fn`` run; dataset copies if ``copy_dataset``) each epoch;
        persistent workers keep theirs."""
        pool = getattr(self, "_worker_pool", None)
        if pool is None or not self.persistent_workers:
            pool = [_workers.Worker(self.dataset, w, self.num_workers, base_seed, self.worker_init_fn, copy_dataset)
                    for w in range(self.num_workers)]
            if self.persistent_workers:
                self._worker_pool = pool
        return pool

    def _iter_workers(self, base_seed: int) -> Iterator:
        """An IterableDataset with ``num_workers > 0``: PyTorch's workers' batches, run in this process, each
        worker iterating its own copy of the stream."""
        pool = self._workers(base_seed, copy_dataset=True)
        batch_size = self.batch_size if self._auto_collation else None
        return _workers.worker_batches(pool, self.prefetch_factor or 2, batch_size, self.drop_last, self.collate_fn)

    def _can_index_tensors(self) -> bool:
        """Whether the TensorDataset fast path gives exactly what the general path would (workers draw nothing
        while fetching a TensorDataset's rows, but a ``worker_init_fn`` must still run in each)."""
        ds = self.dataset
        return (type(self.batch_sampler) is BatchSampler and self.collate_fn is default_collate
                and (self.num_workers == 0 or self.worker_init_fn is None)
                and isinstance(ds, TensorDataset) and type(ds).__getitem__ is TensorDataset.__getitem__
                and getattr(ds, "__getitems__", None) is None
                and not any(t._requires_grad for t in ds.tensors))

    def _iter_tensor_batches(self) -> Iterator[list[Tensor]]:
        """TensorDataset fast path: each batch is one slice or ``take`` per tensor, no per-sample work. The sampler
        is read as the general path reads it (``_primed_indices`` says when), so one that draws as it goes, from
        a generator the program also draws from, draws between the same ``next()`` calls as PyTorch's; one whose
        epoch is a single draw as it starts (``_one_draw``) is read whole then, which draws the same."""
        sampler = self.batch_sampler.sampler
        if type(sampler) is SequentialSampler and len(sampler) <= len(self.dataset.tensors[0]):
            return self._sequential_tensor_batches()
        if _one_draw(sampler):
            return self._tensor_batches(_epoch_slices(self.batch_sampler, self.num_workers > 0))
        return self._tensor_batches(self._primed_indices() if self.num_workers else iter(self.batch_sampler))

    def _sequential_tensor_batches(self) -> Iterator[list[Tensor]]:
        arrays, size = [t._data for t in self.dataset.tensors], self.batch_sampler.batch_size
        n = len(self.batch_sampler.sampler)
        stop = n - n % size if self.batch_sampler.drop_last else n
        for start in range(0, stop, size):  # (a copy: a batch must not alias the dataset)
            yield [Tensor._make(a[start:start + size].copy()) for a in arrays]

    def _tensor_batches(self, batches: Iterator) -> Iterator[list[Tensor]]:
        arrays = [t._data for t in self.dataset.tensors]
        for batch in batches:
            idx = batch if batch.__class__ is xp.ndarray else xp.fromiter(batch, dtype=xp.int64, count=len(batch))
            yield [Tensor._make(a.take(idx, axis=0)) for a in arrays]


class _BaseDataLoaderIter:
    """What ``iter(loader)`` gives, as PyTorch's iterators: the batches, and ``len()`` that of the loader's index
    sampler (its batch sampler when batching, else its sampler), which a stream's infinite sampler refuses with a
    TypeError as PyTorch's does (``len(loader)`` itself reads a sized stream's ``len()``)."""

    __slots__ = ("_batches", "_index_sampler")

    def __init__(self, batches: Iterator, index_sampler) -> None:
        self._batches, self._index_sampler = batches, index_sampler

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def __next__(self) -> Any:
        return next(self._batches)

    def __len__(self) -> int:
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    __slots__ = ()


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):  # (ember's workers run in this process: _workers)
    __slots__ = ()


class _InfiniteConstantSampler(Sampler[None]):
    """The sampler PyTorch gives a DataLoader over an ``IterableDataset``: None forever
    (``itertools.repeat(None)``), and no ``len()``."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


def _one_draw(sampler) -> bool:
    """Whether ``sampler``'s epoch is one draw, from a generator the program may share, as it starts: a
    ``RandomSampler`` without a generator (it seeds its own from the global one), a ``SubsetRandomSampler`` (one
    permutation). Reading its epoch whole then draws what reading it batch by batch does."""
    return type(sampler) is SubsetRandomSampler or type(sampler) is RandomSampler and sampler.generator is None


def _epoch_slices(batch_sampler: BatchSampler, now: bool) -> Iterator:
    """``batch_sampler``'s batches as slices of its sampler's whole epoch, read at once: now (``iter(loader)``
    with workers, as ``_primed_indices`` says why) or at the first ``next()``."""
    order = xp.fromiter(batch_sampler.sampler, dtype=xp.int64) if now else None
    return _slices_of(batch_sampler, order)


def _slices_of(batch_sampler: BatchSampler, order) -> Iterator:
    if order is None:
        order = xp.fromiter(batch_sampler.sampler, dtype=xp.int64)
    n, size = len(order), batch_sampler.batch_size
    for start in range(0, n - n % size if batch_sampler.drop_last else n, size):
        yield order[start:start + size]


def _read_ahead(ahead: deque, rest: Iterator) -> Iterator:
    """The indices in ``ahead`` (those read at ``iter(loader)``), then ``rest``'s, one more read from ``rest`` as
    each is handed out (PyTorch's worker iterator puts an index as it returns each batch)."""
    while ahead:
        index = ahead.popleft()
        ahead.extend(itertools.islice(rest, 1))
        yield index


def _worker_number_warning(num_workers: int) -> str | None:
    """PyTorch's warning for more workers than the CPUs this process may run on (as its DataLoader is made and as
    it makes each iterator; ember's workers take turns in this process, but the program is PyTorch's); None when
    there is nothing to warn of."""
    if num_workers == 0:
        return None
    cpuset_checked = hasattr(os, "sched_getaffinity")
    cpus = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
    if cpus is not None and num_workers <= cpus:
        return None
    if cpus is None:
        suggested = "DataLoader is not able to compute a suggested max number of worker in current system."
    else:
        suggested = (f"Our suggested max number of worker in current system is {cpus}"
                     f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, which is smaller than "
                     "what this DataLoader is going to create.")
    return (f"This DataLoader will create {num_workers} worker processes in total. {suggested} Please be aware that "
            "excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to "
            "avoid potential slowness/freeze if necessary.")


def _check_worker_options(num_workers: int, timeout: float, prefetch_factor: int | None,
                          persistent_workers: bool) -> None:
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing. Let num_workers > 0 "
                         "to enable multiprocessing, otherwise set prefetch_factor to None.")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")

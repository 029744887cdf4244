"""In-process stand-ins for PyTorch's DataLoader workers.

PyTorch gives each of ``num_workers`` worker processes its own copy of an IterableDataset. Each worker iterates
its copy (``get_worker_info()`` tells it its id, so that it can read its own shard of the stream), collates its own
batches, and the loader yields the workers' batches in turn: batch requests go round-robin to the workers still
running, ``prefetch_factor`` per worker ahead, and a worker whose stream has ended gets no more (the requests it
was already sent are dropped). A stream that does not shard itself is therefore read once per worker, as in
PyTorch.

ember has no worker processes: ``worker_batches`` runs the same copies in this process, one batch at a time in
that order, with ``get_worker_info()`` answering for the worker whose code is running (None outside), so a
program gets PyTorch's batches in PyTorch's order. Each worker has its own Python, NumPy and ember random states,
seeded as PyTorch seeds its workers (Python's and ember's with ``base_seed + id``, NumPy's with four words that
mix ``base_seed`` and ``id``), so a worker draws PyTorch's numbers from each; ``worker_init_fn`` runs once per
worker; the calling process's random states are left as they were. A map-style dataset's batch k is fetched by
worker k % num_workers with that worker's states (``Worker.run``), so its random augmentations draw PyTorch's
numbers; its workers share the one dataset (nothing is iterated, so no copy is needed: a worker's changes to it
are seen by the others, unlike PyTorch's copies).
"""

from __future__ import annotations

import copy
import itertools
import random
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy

from ... import random as ember_random

_current: list[WorkerInfo | None] = [None]
_END = object()


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker's code, as PyTorch's: ``id`` (0 to num_workers - 1),
    ``num_workers``, ``seed`` (this worker's random seed) and ``dataset`` (this worker's copy)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


def current() -> WorkerInfo | None:
    return _current[0]


def _swap_random_states(states: list) -> None:
    """Put ``states`` (Python's, NumPy's and an ember generator holding ember's) in place and the current ones
    into ``states``."""
    python, numpy_state = random.getstate(), numpy.random.get_state()
    random.setstate(states[0])
    numpy.random.set_state(states[1])
    states[0], states[1] = python, numpy_state
    ember_random.swap_states(ember_random.default_generator, states[2])


def numpy_seed(base_seed: int, worker_id: int) -> numpy.ndarray:
    """The seed PyTorch's worker gives ``numpy.random``: four 32-bit words that NumPy's ``SeedSequence`` makes of
    the worker's id and the base seed's two halves (PyTorch's ``_generate_state`` computes the same words), so
    that NumPy's stream differs from Python's ``random``, seeded with ``base_seed + id``."""
    return numpy.random.SeedSequence([worker_id, base_seed & 0xFFFF_FFFF, base_seed >> 32, 0]).generate_state(4)


class Worker:
    """One worker: its copy of the dataset, its random states, and the iterator of the current epoch."""

    def __init__(self, dataset, worker_id: int, num_workers: int, base_seed: int,
                 init_fn: Callable[[int], None] | None, copy_dataset: bool = True) -> None:
        seed = base_seed + worker_id
        self.info = WorkerInfo(worker_id, num_workers, seed, copy.deepcopy(dataset) if copy_dataset else dataset)
        self._states = [random.Random(seed).getstate(),
                        numpy.random.RandomState(numpy_seed(base_seed, worker_id)).get_state(),
                        ember_random.Generator().manual_seed(seed)]
        self._iterator: Iterator | None = None
        if init_fn is not None:
            self.run(init_fn, worker_id)

    def run(self, fn: Callable, *args):
        """``fn(*args)`` as this worker's code: its worker info and random states in place meanwhile."""
        outer = _current[0]
        _swap_random_states(self._states)  # the caller's states are kept in self._states meanwhile
        _current[0] = self.info
        try:
            return fn(*args)
        finally:
            _current[0] = outer
            _swap_random_states(self._states)

    def start_epoch(self) -> None:
        self._iterator = None

    def next_batch(self, batch_size: int | None, drop_last: bool, collate: Callable):
        """The worker's next batch (or sample, without batching), collated in the worker; ``_END`` when its stream
        has ended."""
        return self.run(self._next_batch, batch_size, drop_last, collate)

    def _next_batch(self, batch_size, drop_last, collate):
        if self._iterator is None:
            self._iterator = iter(self.info.dataset)
        if batch_size is None:
            sample = next(self._iterator, _END)
            return sample if sample is _END else collate(sample)
        batch = list(itertools.islice(self._iterator, batch_size))
        if not batch or (drop_last and len(batch) < batch_size):
            return _END
        return collate(batch)


def worker_batches(workers: list[Worker], prefetch_factor: int, batch_size: int | None, drop_last: bool,
                   collate: Callable) -> Iterator:
    """The workers' batches in the order PyTorch's loader yields them (see the module docstring)."""
    n = len(workers)
    running = [True] * n
    turn = itertools.cycle(range(n))
    requests: deque[int] = deque()

    def request() -> None:  # the next running worker in turn gets one more request
        for _ in range(n):
            w = next(turn)
            if running[w]:
                requests.append(w)
                return

    for worker in workers:
        worker.start_epoch()
    for _ in range(prefetch_factor * n):
        request()
    while requests:
        w = requests.popleft()
        if not running[w]:  # sent before its stream ended: dropped
            continue
        batch = workers[w].next_batch(batch_size, drop_last, collate)
        if batch is _END:
            running[w] = False
        request()
        if batch is not _END:
            yield batch

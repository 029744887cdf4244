"""``Join``: training with uneven inputs across ranks (PyTorch's ``torch.distributed.algorithms.Join``).

    with Join([model]):              # model: a DistributedDataParallel
        for x, y in my_shard:        # ranks may have different numbers of batches
            ...

Each joinable's ``join()`` context is entered; a rank that runs out of data
waits at the end of the block, contributing zero gradients to the others'
all-reduces, until every rank is done.
"""

from __future__ import annotations

from contextlib import ExitStack


class Join:
    """Enter the ``join()`` of every joinable (DistributedDataParallel) for the block."""

    def __init__(self, joinables: list, enable: bool = True, throw_on_early_termination: bool = False,
                 **kwargs) -> None:
        if not joinables:
            raise ValueError("Join expects at least one joinable (e.g. a DistributedDataParallel model)")
        self._joinables = joinables
        self._options = dict(enable=enable, throw_on_early_termination=throw_on_early_termination, **kwargs)
        self._stack = ExitStack()

    def __enter__(self) -> Join:
        for joinable in self._joinables:
            self._stack.enter_context(joinable.join(**self._options))
        return self

    def __exit__(self, *exc) -> bool:
        return self._stack.__exit__(*exc)

"""``Join``: training with uneven inputs across ranks (PyTorch's ``torch.distributed.algorithms.Join``).

    with Join([model]):              # model: a DistributedDataParallel
        for x, y in my_shard:        # ranks may have different numbers of batches
            ...

The DistributedDataParallel model's ``join()`` context is entered; a rank that runs out of data
waits at the end of the block, contributing zero gradients to the others'
all-reduces, until every rank is done. The other joinables (a ``ZeroRedundancyOptimizer``: ``Join([model,
optimizer])``, PyTorch's Join tutorial) give a ``join_hook()`` whose ``main_hook()`` that waiting rank runs in
each round after the model's shadowed backward. Differences from PyTorch: the model must be among the joinables
(ember's rounds are counted by its forward), and no ``post_hook`` is called (ZeroRedundancyOptimizer's does nothing;
the model's end of the block, the copy from the last rank to join, is its ``join()``'s).
"""

from __future__ import annotations

from contextlib import ExitStack


class Join:
    """Enter the DistributedDataParallel model's ``join()`` for the block, with the other joinables' join hooks."""

    def __init__(self, joinables: list, enable: bool = True, throw_on_early_termination: bool = False,
                 **kwargs) -> None:
        if not joinables:
            raise ValueError("Join expects at least one joinable (e.g. a DistributedDataParallel model)")
        self._joinables = joinables
        self._options = dict(enable=enable, throw_on_early_termination=throw_on_early_termination, **kwargs)
        self._stack = ExitStack()

    def __enter__(self) -> Join:
        models = [j for j in self._joinables if not hasattr(j, "join_hook")]
        if not models:
            raise ValueError("Join: ember counts the rounds of uneven inputs in a DistributedDataParallel model's "
                             "forward; pass the model among the joinables (Join([model, optimizer]))")
        self._hooks = [j.join_hook(**self._options) for j in self._joinables if hasattr(j, "join_hook")]
        main_hooks = [h.main_hook for h in self._hooks]
        for model in models:
            self._stack.enter_context(model.join(**self._options, main_hooks=main_hooks))
            main_hooks = []  # (once per round)
        return self

    def __exit__(self, *exc) -> bool:
        return self._stack.__exit__(*exc)

"""``Join``: training with uneven inputs across ranks (PyTorch's ``torch.distributed.algorithms.join``), with its
``Joinable`` and ``JoinHook`` for any class that takes part.

    with Join([model]):              # model: a DistributedDataParallel
        for x, y in my_shard:        # ranks may have different numbers of batches
            ...

Any ``Joinable`` (PyTorch's protocol: ``join_hook()``, ``join_device``, ``join_process_group``, and
``Join.notify_join_context(self)`` before each iteration's collectives) takes part as in PyTorch: a rank that
leaves the block early shadows the others' iterations with an all-reduce of zeros, running each hook's
``main_hook()``, until every rank has left; then each ``post_hook(is_last_joiner)``. With
``throw_on_early_termination=True`` every rank instead raises PyTorch's RuntimeError once one runs out of data.

With a DistributedDataParallel model among the joinables, the model's ``join()`` context is entered; a rank that
runs out of data waits at the end of the block, contributing zero gradients to the others' all-reduces, until every
rank is done. The other joinables (a ``ZeroRedundancyOptimizer``: ``Join([model, optimizer])``, PyTorch's Join
tutorial) give a ``join_hook()`` whose ``main_hook()`` that waiting rank runs in each round after the model's
shadowed backward. Differences from PyTorch in that case: ember's rounds are counted by the model's forward, no
``post_hook`` is called (ZeroRedundancyOptimizer's does nothing; the model's end of the block, the copy from the
last rank to join, is its ``join()``'s), and ``throw_on_early_termination`` is refused (the model's ``join()``'s
NotImplementedError).
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from contextlib import ExitStack
from typing import Any, NamedTuple

__all__ = ["Join", "JoinHook", "Joinable"]

_SKEW_WARNING_ROUNDS = 1000  # PyTorch's threshold for its uneven-input skew warning


class JoinHook:
    """What a joined rank runs for one ``Joinable``: ``main_hook()`` once per iteration the other ranks still
    train (shadowing that iteration's collectives), ``post_hook(is_last_joiner)`` once every rank has joined."""

    def main_hook(self) -> None:
        """Shadow one training iteration's collectives of this joinable (nothing by default)."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once all ranks have joined; ``is_last_joiner`` says whether this rank was among the last."""


class _JoinConfig(NamedTuple):
    """What ``Join`` tells each of its joinables: whether the join logic is on, whether to throw on uneven inputs,
    and whether it is the first joinable (the one whose ``notify_join_context`` communicates)."""

    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config() -> _JoinConfig:
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable(ABC):
    """A class that takes part in ``Join``: it gives a ``join_hook()``, the ``join_device`` and
    ``join_process_group`` of the join's own collectives, and calls ``Join.notify_join_context(self)`` before its
    collectives of each iteration."""

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        """The ``JoinHook`` of this joinable; ``kwargs`` are those given to ``Join``, the same for every joinable."""

    @property
    @abstractmethod
    def join_device(self) -> Any:
        """The device of the join's collectives."""

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        """The process group of the join's collectives."""


def _is_model(joinable) -> bool:
    """A DistributedDataParallel model (ember's has ``join()`` and no ``join_hook``)."""
    return not hasattr(joinable, "join_hook")


def _all_reduce(value: float, device, group, async_op: bool = False):
    """The join's one-number all-reduce: ``value`` summed over ``group`` (or the Work, with ``async_op``)."""
    from ... import full
    from ..collectives import all_reduce

    tensor = full((1,), value, device=device)
    work = all_reduce(tensor, group=group, async_op=async_op)
    return work if async_op else tensor.item()


class Join:
    """The join context manager over ``joinables`` (see the module's text): a DistributedDataParallel model's
    ``join()`` with the others' main hooks, or PyTorch's generic protocol over ``Joinable`` objects."""

    def __init__(self, joinables: list, enable: bool = True, throw_on_early_termination: bool = False,
                 **kwargs) -> None:
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._enable, self._throw_on_early_termination = enable, throw_on_early_termination
        self._kwargs = kwargs
        self._stack = ExitStack()
        self._models = [j for j in joinables if _is_model(j)]
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables if not _is_model(j)]
        if not self._models:
            self._set_joinable_configs()
            self._extract_dist_info()

    def _set_joinable_configs(self) -> None:
        for i, joinable in enumerate(self._joinables):
            joinable._join_config = _JoinConfig(self._enable, self._throw_on_early_termination, i == 0)

    def _extract_dist_info(self) -> None:
        """The process group (one for all the joinables, as PyTorch requires) and the first joinable's device."""
        from ..process_group import get_rank

        for joinable in self._joinables:
            if not hasattr(joinable, "join_process_group"):
                raise ValueError(f"Join: {type(joinable).__name__} is not a Joinable (no join_process_group); "
                                 "with a ZeroRedundancyOptimizer, pass the DistributedDataParallel model among the "
                                 "joinables (Join([model, optimizer]))")
        groups = [j.join_process_group for j in self._joinables]
        if any(g != groups[0] for g in groups[1:]):
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group, self._device = groups[0], self._joinables[0].join_device
        self._rank = get_rank(self._process_group)

    def __enter__(self) -> Join:
        if self._models:
            options = dict(enable=self._enable, throw_on_early_termination=self._throw_on_early_termination,
                           **self._kwargs)
            main_hooks = [h.main_hook for h in self._join_hooks]
            for model in self._models:
                self._stack.enter_context(model.join(**options, main_hooks=main_hooks))
                main_hooks = []  # (once per round)
        return self

    def __exit__(self, exc_type, exc, traceback) -> bool:
        if self._models:
            return self._stack.__exit__(exc_type, exc, traceback)
        if not self._enable or exc_type is not None:
            return False  # an exception raised in the block propagates as it is
        is_last_joiner, rounds = True, 0
        while self._count_nonjoined() > 0:
            if rounds == _SKEW_WARNING_ROUNDS + 1:
                warnings.warn(f"Detected uneven input skew of greater than {_SKEW_WARNING_ROUNDS}. This means that "
                              f"rank {self._rank} has at least {_SKEW_WARNING_ROUNDS} fewer inputs than other "
                              "currently-active ranks. This level of skew could lead to performance degradation "
                              "during training.", stacklevel=2)
            if self._throw_on_early_termination:
                self._notify_procs_to_terminate()
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner, rounds = False, rounds + 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)
        return False

    def _count_nonjoined(self) -> float:
        """The ranks still training: each contributes 1 in its ``notify_join_context``, a joined rank 0 here."""
        return _all_reduce(0.0, self._device, self._process_group)

    def _notify_procs_to_terminate(self) -> None:
        """Tell the ranks still training (their check in ``notify_join_context``) to stop, and stop this one."""
        _all_reduce(1.0, self._device, self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Called by ``joinable`` before its collectives of each iteration: the first joinable of the context
        all-reduces a 1 (counted by the joined ranks' shadow) and, with ``throw_on_early_termination``, raises
        PyTorch's RuntimeError on every rank once one has run out of data. The all-reduce's Work, or None for the
        other joinables and outside a join context."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        device, group = joinable.join_device, joinable.join_process_group
        work = _all_reduce(1.0, device, group, async_op=True)
        if config.throw_on_early_termination and _all_reduce(0.0, device, group):
            raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work

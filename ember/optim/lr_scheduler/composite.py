"""Schedulers made of schedulers: ``SequentialLR`` (one after another) and ``ChainedScheduler`` (all at once)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from ..optimizer import Optimizer
from .base import LRScheduler, group_values
from .plateau import ReduceLROnPlateau


def _check_children(owner: str, optimizer: Optimizer, schedulers: Sequence[LRScheduler]) -> None:
    if len(schedulers) < 1:
        raise ValueError(f"{owner} expects at least one scheduler, but got no scheduler.")
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
                f"specified when calling `step`, but got one at index {i} in the given schedulers sequence."
            )
        if s.optimizer is not optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got scheduler "
                f"{type(s).__name__} at index {i} with a different optimizer than {type(optimizer).__name__}."
            )


class _Composite(LRScheduler):
    """state_dict nests the children's state_dicts under ``_schedulers``."""

    _schedulers: list[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        state = self._attributes_except("_schedulers")
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        for s, child in zip(self._schedulers, self._load_all_but(state_dict, "_schedulers")):
            s.load_state_dict(child)


class SequentialLR(_Composite):
    """Run ``schedulers[0]`` until ``milestones[0]``, then ``schedulers[1]`` (restarted at its epoch 0), ...

    Args:
        optimizer: the wrapped optimizer (shared by every scheduler).
        schedulers: the schedulers, in order.
        milestones: the epochs at which the next scheduler takes over (one fewer than schedulers).
        last_epoch: index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler], milestones: list[int],
                 last_epoch: int = -1) -> None:
        _check_children(type(self).__name__, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
                f"milestone points, but got number of schedulers {len(schedulers)} and the number of milestones "
                f"to be equal to {len(milestones)}"
            )
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # The children stepped once when they were built; undo that and start the first one afresh.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for s in self._schedulers:
            _undo_step(s)
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)  # the next scheduler starts at its own epoch 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


def _undo_step(scheduler: LRScheduler) -> None:
    for child in getattr(scheduler, "_schedulers", ()):
        _undo_step(child)
    if not hasattr(scheduler, "_schedulers"):
        scheduler.last_epoch -= 1


class ChainedScheduler(_Composite):
    """Step every scheduler in ``schedulers`` at each ``step()``; their (chainable) effects multiply.

    Args:
        schedulers: the schedulers to chain.
        optimizer: their optimizer (default: the first scheduler's).
    """

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{type(self).__name__} expects at least one scheduler to be chained, but got no scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_children(type(self).__name__, optimizer, schedulers)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = group_values(optimizer, "lr")

    def step(self) -> None:
        for s in self._schedulers:
            s.step()
        self._last_lr = group_values(self.optimizer, "lr")

"""``LRScheduler``: the base of every learning-rate scheduler.

A scheduler owns no learning rate of its own: each ``step()`` advances
``last_epoch`` and writes ``get_lr()`` into every ``optimizer.param_groups[i]['lr']``.
Most ``get_lr`` are *chainable* (computed from the group's current lr, as PyTorch's
are), so several schedulers can act on one optimizer; ``_closed_form_lr`` (the lr
as a function of ``last_epoch`` and ``base_lrs``) serves ``step(epoch)`` and
``SequentialLR``'s milestones.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from ... import _warnings
from ...utils import hooks as _hooks
from ..optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different "
    "from None, the closed form is used instead of the new chainable form, where available. Please open an "
    "issue if you are unable to replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose."
)

STEP_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you "
    "should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to "
    "do this will result in PyTorch skipping the first value of the learning rate schedule. See more details "
    "at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)

_F = TypeVar("_F", bound=Callable)


def warn_outside_step(scheduler: Any, through: dict[str, str] | None = None) -> None:
    """PyTorch's warning for a scheduler's ``get_lr`` called other than by ``step()``: the learning rates it
    computes are those of the next step, the current ones are ``get_last_lr()``. ``through``: as
    ``_warnings.warn``'s (PyTorch's lr_scheduler module issues it from a helper's frame; its SWALR at the caller's
    line)."""
    if not getattr(scheduler, "_get_lr_called_within_step", False):
        _warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                       through=through)


def warns_outside_step(get_lr: _F) -> _F:
    """A scheduler's ``get_lr``, which warns (as PyTorch's do) when called other than by ``step()``."""
    @functools.wraps(get_lr)
    def checked(self):
        warn_outside_step(self, through={"": "torch.optim.lr_scheduler"})
        return get_lr(self)

    return cast(_F, checked)



def _note_optimizer_step(optimizer: Optimizer, args: tuple, kwargs: dict) -> None:
    """A global step pre-hook: the optimizer has stepped (a scheduler's first step warns when it has not)."""
    optimizer._opt_called = True


# appended, not registered: a handle would take an id from RemovableHandle's counter, which the program's own hooks
# number from 0 in PyTorch (whose schedulers wrap optimizer.step instead)
_hooks.optimizer_step_pre_hooks.append(_note_optimizer_step)


def check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def group_values(optimizer: Optimizer, key: str) -> list:
    """``[group[key] for each param group]``."""
    return [group[key] for group in optimizer.param_groups]


def per_group(name: str, optimizer: Optimizer, value) -> list:
    """One value per param group: a list/tuple of the right length, or one value repeated."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(value)} values, param_groups has {n}."
            )
        return list(value)
    return [value] * n


def set_momentum(group: dict, value: float, use_beta1: bool) -> None:
    """Set a group's momentum: ``betas[0]`` for Adam-like optimizers, else ``momentum`` (cycling schedulers)."""
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def check_cycles_momentum(optimizer: Optimizer) -> bool:
    """For ``cycle_momentum=True``: whether the optimizer's momentum is ``betas[0]`` (else ``momentum``)."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    return "betas" in optimizer.defaults


class LRScheduler:
    """Base class: adjusts each param group's ``'lr'`` once per ``step()``.

    Args:
        optimizer: the optimizer whose learning rates are scheduled.
        last_epoch: index of the last step taken; -1 (default) starts afresh and records each
            group's ``'initial_lr'``; resuming (``>= 0``) needs ``'initial_lr'`` in every group.

    Attributes: ``base_lrs`` (the groups' ``initial_lr``), ``last_epoch``. Call ``step()`` after
    ``optimizer.step()``; the other order warns, as in PyTorch.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(
                    f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler with "
                    f"last_epoch >= 0 (last_epoch={last_epoch}); load the optimizer's state_dict first, or "
                    "pass last_epoch=-1 for a fresh run"
                )
        self.base_lrs = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """The step at construction, which sets the lr of epoch 0."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rates for ``last_epoch`` (chainable form); use ``get_last_lr()`` to read them."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates this scheduler set last, one per param group."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or, deprecated, jump to ``epoch``) and set each group's ``'lr'``."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            _warnings.warn(STEP_ORDER_WARNING)
        self._step_count += 1
        if epoch is not None:
            _warnings.warn(EPOCH_DEPRECATION_WARNING)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self._lrs_of_step()
        else:
            self.last_epoch = epoch
            values = self._closed_form_lr() if hasattr(self, "_closed_form_lr") else self._lrs_of_step()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = group_values(self.optimizer, "lr")

    def _lrs_of_step(self) -> list[float]:
        """``get_lr()`` called by a step (which does not warn)."""
        self._get_lr_called_within_step = True
        try:
            return self.get_lr()
        finally:
            self._get_lr_called_within_step = False

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer."""
        return self._attributes_except()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def _attributes_except(self, *keys: str) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer" and k not in keys}

    def _load_all_but(self, state_dict: dict[str, Any], key: str):
        """Load every entry but ``key`` (which subclasses store specially) and return that one."""
        state = dict(state_dict)
        special = state.pop(key)
        self.__dict__.update(state)
        return special

    def _current_lrs(self) -> list[float]:
        return group_values(self.optimizer, "lr")

    def _scaled(self, factor: float) -> list[float]:
        """Every group's current lr times ``factor``."""
        return [group["lr"] * factor for group in self.optimizer.param_groups]

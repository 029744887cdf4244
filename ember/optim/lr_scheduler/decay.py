"""Schedulers that multiply the learning rate by a factor: lambda, step, multistep, constant, linear, exponential,
polynomial."""

from __future__ import annotations

import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ..optimizer import Optimizer
from .base import LRScheduler, warns_outside_step


class _LambdaBase(LRScheduler):
    """Holds one ``lr_lambda(epoch)`` per param group; state_dict keeps callable objects' ``__dict__``."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """Plain functions and lambdas are not saved (``None``); callable objects save their ``__dict__``."""
        state = self._attributes_except("lr_lambdas")
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        for fn, attrs in zip(self.lr_lambdas, self._load_all_but(state_dict, "lr_lambdas")):
            if attrs is not None:
                fn.__dict__.update(attrs)


class LambdaLR(_LambdaBase):
    """lr = initial_lr * lr_lambda(epoch).

    Args:
        optimizer: the wrapped optimizer.
        lr_lambda: a function of the epoch, or a list of them (one per param group).
        last_epoch: index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        super().__init__(optimizer, lr_lambda, last_epoch)

    @warns_outside_step
    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaBase):
    """lr <- lr * lr_lambda(epoch) at every step after the first (the initial lr is kept at epoch 0).

    Args: as :class:`LambdaLR`.
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        super().__init__(optimizer, lr_lambda, last_epoch)

    @warns_outside_step
    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        return [g["lr"] * fn(self.last_epoch) for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """lr = initial_lr * gamma ** (epoch // step_size).

    Args:
        optimizer: the wrapped optimizer.
        step_size: period of the decay, in epochs.
        gamma: multiplicative factor (default: 0.1).
        last_epoch: index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    @warns_outside_step
    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size:
            return self._current_lrs()
        return self._scaled(self.gamma)

    def _closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = initial_lr * gamma ** (number of milestones <= epoch); a repeated milestone counts twice.

    Args:
        optimizer: the wrapped optimizer.
        milestones: epoch indices (increasing).
        gamma: multiplicative factor (default: 0.1).
        last_epoch: index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    @warns_outside_step
    def get_lr(self) -> list[float]:
        hits = self.milestones.get(self.last_epoch, 0)
        return self._scaled(self.gamma**hits) if hits else self._current_lrs()

    def _closed_form_lr(self) -> list[float]:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma**passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = initial_lr * factor until epoch ``total_iters``, then initial_lr.

    Args:
        optimizer: the wrapped optimizer.
        factor: multiplier in [0, 1] (default: 1/3).
        total_iters: number of epochs at the reduced lr (default: 5).
        last_epoch: index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if not 0 <= factor <= 1.0:
            raise ValueError(f"Constant multiplicative factor expected to be between 0 and 1, but got {factor}.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    @warns_outside_step
    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return self._scaled(self.factor)
        if self.last_epoch == self.total_iters:
            return self._scaled(1.0 / self.factor)
        return self._current_lrs()

    def _closed_form_lr(self) -> list[float]:
        factor = 1.0 if self.last_epoch >= self.total_iters else self.factor
        return [base * factor for base in self.base_lrs]


class LinearLR(LRScheduler):
    """lr goes linearly from initial_lr * start_factor to initial_lr * end_factor over ``total_iters`` epochs.

    Args:
        optimizer: the wrapped optimizer.
        start_factor: multiplier at epoch 0, in (0, 1] (default: 1/3).
        end_factor: multiplier from epoch ``total_iters`` on, in [0, 1] (default: 1.0).
        total_iters: length of the ramp in epochs (default: 5).
        last_epoch: index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1.0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or equal to 1, "
                f"but got {start_factor}."
            )
        if not 0 <= end_factor <= 1.0:
            raise ValueError(f"Ending multiplicative factor expected to be between 0 and 1, but got {end_factor}.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    @warns_outside_step
    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return self._scaled(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        # ratio of consecutive multipliers f(e) / f(e-1), f(e) = start + (end - start) * e / total
        delta = self.end_factor - self.start_factor
        return self._scaled(1.0 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta))

    def _closed_form_lr(self) -> list[float]:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * done) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = initial_lr * gamma ** epoch.

    Args:
        optimizer: the wrapped optimizer.
        gamma: multiplicative factor per epoch.
        last_epoch: index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    @warns_outside_step
    def get_lr(self) -> list[float]:
        return self._current_lrs() if self._is_initial else self._scaled(self.gamma)

    def _closed_form_lr(self) -> list[float]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - min(epoch, total_iters) / total_iters) ** power: reaches 0 at ``total_iters``.

    Args:
        optimizer: the wrapped optimizer.
        total_iters: epochs over which the lr decays (default: 5).
        power: the polynomial's power (default: 1.0, linear).
        last_epoch: index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    @warns_outside_step
    def get_lr(self) -> list[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        # ratio of consecutive multipliers f(e) / f(e-1), f(e) = (1 - e / total) ** power
        return self._scaled(((1.0 - self.last_epoch / self.total_iters)
                             / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power)

    def _closed_form_lr(self) -> list[float]:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (1.0 - done) ** self.power for base in self.base_lrs]

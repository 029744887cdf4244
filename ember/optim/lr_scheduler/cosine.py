"""Annealing schedules: cosine annealing, cosine with warm restarts, and the one-cycle policy."""

from __future__ import annotations

import math

from ..optimizer import Optimizer
from .base import LRScheduler, check_cycles_momentum, check_optimizer, per_group, set_momentum, warns_outside_step


def _cos_anneal(start: float, end: float, pct: float) -> float:
    """From ``start`` (pct=0) to ``end`` (pct=1) along half a cosine."""
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _linear_anneal(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


class CosineAnnealingLR(LRScheduler):
    r"""lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2 (SGDR without restarts).

    Computed recursively from the current lr, as PyTorch does, so it composes with other
    schedulers; past ``T_max`` the lr rises again along the cosine (period ``2 * T_max``).

    Args:
        optimizer: the wrapped optimizer.
        T_max: number of epochs of the half period.
        eta_min: minimum learning rate (default: 0).
        last_epoch: index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    @warns_outside_step
    def get_lr(self) -> list[float]:
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and e > 0:  # resumed at last_epoch > 0: nothing to recurse from
            return self._closed_form_lr()
        groups = self.optimizer.param_groups
        if (e - 1 - T) % (2 * T) == 0:  # leaving the minimum: the ratio below would divide by zero
            return [g["lr"] + (base - lo) * (1 - math.cos(math.pi / T)) / 2 for base, g in zip(self.base_lrs, groups)]
        ratio = (1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
        return [ratio * (g["lr"] - lo) + lo for g in groups]

    def _closed_form_lr(self) -> list[float]:
        return [_cos_anneal(base, self.eta_min, self.last_epoch / self.T_max) for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every ``T_i`` epochs; ``T_i`` starts at ``T_0`` and is multiplied by ``T_mult``.

    ``step(epoch)`` accepts fractional epochs (e.g. ``epoch + i / iters``), as in PyTorch.

    Args:
        optimizer: the wrapped optimizer.
        T_0: epochs until the first restart (positive int).
        T_mult: growth factor of the period after each restart (int >= 1, default: 1).
        eta_min: minimum learning rate (default: 0).
        last_epoch: index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    @warns_outside_step
    def get_lr(self) -> list[float]:
        return [_cos_anneal(base, self.eta_min, self.T_cur / self.T_i) for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or go to (possibly fractional) ``epoch``."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            self._seek(epoch)
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self._lrs_of_step()):
            group["lr"] = lr
        self._last_lr = self._current_lrs()

    def _seek(self, epoch: float) -> None:
        """Set ``T_cur`` and ``T_i`` for an absolute epoch."""
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        if epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            # restarts before `epoch`: largest n with T_0 * (T_mult^n - 1) / (T_mult - 1) <= epoch
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult**n


_PHASE_KEYS = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): lr rises from ``max_lr / div_factor`` to ``max_lr``, then
    anneals to ``initial_lr / final_div_factor``; momentum moves the opposite way. Step once per batch.

    Args:
        optimizer: the wrapped optimizer.
        max_lr: peak learning rate (one value, or one per group).
        total_steps: length of the cycle; or give ``epochs`` and ``steps_per_epoch``.
        pct_start: fraction of the cycle spent increasing the lr (default: 0.3).
        anneal_strategy: ``'cos'`` (default) or ``'linear'``.
        cycle_momentum: also cycle ``momentum`` (SGD, RMSprop) or ``betas[0]`` (Adam) (default: True).
        base_momentum, max_momentum: momentum range (defaults: 0.85, 0.95).
        div_factor: initial_lr = max_lr / div_factor (default: 25).
        final_div_factor: min_lr = initial_lr / final_div_factor (default: 1e4).
        three_phase: a third phase annihilates the lr after a symmetric warm-up/cool-down (default: False).
        last_epoch: index of the last batch (default: -1).

    Raises ValueError when stepped more than ``total_steps`` times.
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85, max_momentum: float | list[float] = 0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        # PyTorch's attribute names and layout, so that state_dict() holds PyTorch's keys (a checkpoint loads in
        # either library): each phase's last step and the group keys its lr and momentum move between
        self._anneal_func_type = anneal_strategy
        warm = float(pct_start * self.total_steps)
        if three_phase:
            phases = [(warm - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (2 * warm - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                      (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            phases = [(warm - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        self._schedule_phases = [dict(zip(_PHASE_KEYS, phase)) for phase in phases]
        groups = optimizer.param_groups
        if last_epoch == -1:
            for group, peak in zip(groups, per_group("max_lr", optimizer, max_lr)):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = check_cycles_momentum(optimizer)
            if last_epoch == -1:
                tops = per_group("max_momentum", optimizer, max_momentum)
                bottoms = per_group("base_momentum", optimizer, base_momentum)
                for group, top, bottom in zip(groups, tops, bottoms):
                    set_momentum(group, top, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = top, bottom
        super().__init__(optimizer, last_epoch)

    @warns_outside_step
    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        anneal = _cos_anneal if self._anneal_func_type == "cos" else _linear_anneal
        phases = self._schedule_phases
        start, i = 0.0, 0
        while step > phases[i]["end_step"] and i < len(phases) - 1:
            start, i = phases[i]["end_step"], i + 1
        end, lr_from, lr_to, m_from, m_to = (phases[i][key] for key in _PHASE_KEYS)
        pct = (step - start) / (end - start)
        lrs = []
        for group in self.optimizer.param_groups:
            lrs.append(anneal(group[lr_from], group[lr_to], pct))
            if self.cycle_momentum:
                set_momentum(group, anneal(group[m_from], group[m_to], pct), self.use_beta1)
        return lrs


def _total_steps(total_steps: int | None, epochs: int | None, steps_per_epoch: int | None) -> int:
    if total_steps is not None:
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
    if not isinstance(epochs, int) or epochs <= 0:
        raise ValueError(f"Expected positive integer epochs, but got {epochs}")
    if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
        raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
    return epochs * steps_per_epoch

"""``CyclicLR``: the cyclical learning-rate policy (Smith), stepped once per batch."""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any

from ..optimizer import Optimizer
from .base import LRScheduler, check_cycles_momentum, check_optimizer, per_group, set_momentum, warns_outside_step

_MODES = ("triangular", "triangular2", "exp_range")


class CyclicLR(LRScheduler):
    """Cycles each group's lr between ``base_lr`` and ``max_lr`` along a triangle, and momentum inversely
    between ``max_momentum`` and ``base_momentum``. Step once per batch.

    Args:
        optimizer: the wrapped optimizer.
        base_lr: lower lr of the cycle (one value, or one per group); written into each group at the start.
        max_lr: upper lr of the cycle; the amplitude ``max_lr - base_lr`` is scaled by ``scale_fn``.
        step_size_up: batches in the rising half of a cycle (default: 2000).
        step_size_down: batches in the falling half (default: ``step_size_up``).
        mode: ``'triangular'`` (amplitude kept), ``'triangular2'`` (halved each cycle) or ``'exp_range'``
            (times ``gamma ** iterations``); ignored when ``scale_fn`` is given (default: ``'triangular'``).
        gamma: the base of ``'exp_range'`` (default: 1.0).
        scale_fn: a custom amplitude scale, a function of the cycle number or of the iteration.
        scale_mode: what ``scale_fn`` is evaluated on: ``'cycle'`` (default) or ``'iterations'``.
        cycle_momentum: also cycle ``momentum`` (SGD, RMSprop) or ``betas[0]`` (Adam) (default: True); as in
            PyTorch it sets SGD's momentum even when the optimizer was built without one.
        base_momentum, max_momentum: the momentum range (defaults: 0.8, 0.9).
        last_epoch: index of the last batch (default: -1).

    ``state_dict()`` keeps a custom ``scale_fn`` only when it is a callable object (its ``__dict__``), as
    PyTorch does; functions and lambdas are saved as ``None``.
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float], max_lr: float | list[float],
                 step_size_up: int = 2000, step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: float | list[float] = 0.8,
                 max_momentum: float | list[float] = 0.9, last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        base_lrs = per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in _MODES and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        if scale_fn is None:  # the built-in modes fix what they scale by
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = check_cycles_momentum(optimizer)
            self.base_momentums = per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    set_momentum(group, top, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = top, bottom
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at ``x`` (a cycle number or an iteration, per ``scale_mode``)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        if self.mode == "exp_range":
            return self.gamma**x
        return 1.0

    @warns_outside_step
    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        rise = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * rise * scale for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, bottom, top in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                set_momentum(group, top - (top - bottom) * rise * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        state = self._attributes_except("_scale_fn_custom")
        fn = self._scale_fn_custom
        state["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else dict(fn.__dict__)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        attrs = self._load_all_but(state_dict, "_scale_fn_custom")
        if attrs is not None:
            self._scale_fn_custom.__dict__.update(attrs)

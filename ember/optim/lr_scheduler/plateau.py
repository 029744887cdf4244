"""``ReduceLROnPlateau``: cut the learning rate when a metric stops improving."""

from __future__ import annotations

import math
from typing import Any, SupportsFloat

from ... import _warnings
from ..optimizer import Optimizer
from .base import EPOCH_DEPRECATION_WARNING, LRScheduler, check_optimizer, group_values


class ReduceLROnPlateau(LRScheduler):
    """Multiply each group's lr by ``factor`` once the metric passed to ``step(metric)`` has not
    improved for more than ``patience`` epochs.

    "Improved" means, for ``mode='min'``: ``metric < best * (1 - threshold)`` (``threshold_mode='rel'``)
    or ``metric < best - threshold`` (``'abs'``); mirrored for ``'max'``. After a cut, ``cooldown``
    epochs pass before bad epochs count again. An lr never goes below ``min_lr``, and a cut smaller
    than ``eps`` is skipped.

    Args:
        optimizer: the wrapped optimizer.
        mode: ``'min'`` (default) or ``'max'``.
        factor: multiplier of the lr, < 1 (default: 0.1).
        patience: bad epochs tolerated before a cut (default: 10).
        threshold: minimum significant change (default: 1e-4).
        threshold_mode: ``'rel'`` (default) or ``'abs'``.
        cooldown: epochs to wait after a cut (default: 0).
        min_lr: lower bound, one value or one per group (default: 0).
        eps: minimal applied decay (default: 1e-8).
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: float | list[float] = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError(f"Factor should be < 1.0, but got {factor}.")
        check_optimizer(optimizer)
        self.factor = factor
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.default_min_lr, self.min_lrs = None, list(min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * n
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = group_values(optimizer, "lr")
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown! Expected 'min' or 'max'")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown! Expected 'rel' or 'abs'")
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def is_better(self, a: float, best: float) -> bool:
        """Whether metric ``a`` improves on ``best`` by more than the threshold."""
        if self.threshold_mode == "rel":
            scale = 1.0 - self.threshold if self.mode == "min" else 1.0 + self.threshold
            return a < best * scale if self.mode == "min" else a > best * scale
        return a < best - self.threshold if self.mode == "min" else a > best + self.threshold

    def step(self, metrics: SupportsFloat, epoch: int | None = None) -> None:
        """Record this epoch's metric and cut the lr if it has plateaued."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            _warnings.warn(EPOCH_DEPRECATION_WARNING)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = group_values(self.optimizer, "lr")

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new param group "
                    "being added to the optimizer. Please modify the `min_lrs` field to match the length of the "
                    "`optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, floor in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, floor)
            if old - new > self.eps:
                group["lr"] = new

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)

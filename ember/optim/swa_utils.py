"""Weight averaging with PyTorch's API: ``AveragedModel`` (SWA or EMA copies of a model), ``SWALR`` and
``update_bn``.

``AveragedModel(model)`` keeps a deep copy whose parameters are the running mean of the ones passed to
``update_parameters`` (stochastic weight averaging); with ``multi_avg_fn=get_ema_multi_avg_fn(decay)`` (or
``avg_fn=get_ema_avg_fn(decay)``) they are an exponential moving average instead, as diffusion and
self-supervised training keep them. The first ``update_parameters`` copies the model's parameters; buffers are
copied on every update, or averaged like parameters when ``use_buffers=True``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

from .. import _creation
from .._dtype import int64
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.instancenorm import _InstanceNorm
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from .lr_scheduler.base import LRScheduler, per_group, warn_outside_step
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """An in-place update of a list of averages: ``ema = decay * ema + (1 - decay) * current`` (a ``lerp_``)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _) -> None:
        floating = ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex()
        for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
            if floating:
                p_ema.lerp_(p_model, 1 - decay)
            else:
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """An in-place update of a list of running means: ``avg += (current - avg) / (num_averaged + 1)``."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        floating = averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex()
        weight = 1 / (num_averaged + 1)
        for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
            if floating:
                p_avg.lerp_(p_model, float(weight))
            else:
                p_avg.add_((p_model - p_avg) * weight)

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """``(ema, current, num_averaged) -> decay * ema + (1 - decay) * current``, one tensor at a time."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """``(avg, current, num_averaged) -> avg + (current - avg) / (num_averaged + 1)``, one tensor at a time."""

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters average those of the model it is updated from.

    Args:
        model: the model to copy and average.
        device: where the copy lives (default: where ``model`` is).
        avg_fn: ``(averaged, current, num_averaged) -> new averaged``, applied tensor by tensor.
        multi_avg_fn: ``(averaged_list, current_list, num_averaged)`` updating the lists in place. Give at most
            one of the two; with neither, parameters are an equal-weight running mean (SWA).
        use_buffers: average buffers with the parameters (default False: copy them from ``model``).

    ``n_averaged`` (a long buffer) counts the updates; ``forward`` calls the averaged copy.
    """

    def __init__(self, model: Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _creation.tensor(0, dtype=int64))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, module: Module) -> Iterable[Tensor]:
        return itertools.chain(module.parameters(), module.buffers()) if self.use_buffers else module.parameters()

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters into the average (the first call copies them)."""
        averaged = [p.detach() for p in self._tensors(self.module)]
        current = [p.detach() for p in self._tensors(model)]
        n = int(self.n_averaged.item())
        with no_grad():
            if n == 0:
                for p_avg, p_model in zip(averaged, current):
                    p_avg.copy_(p_model)
            elif self.multi_avg_fn is not None:
                # PyTorch groups the tensors by dtype and calls multi_avg_fn once per group
                groups: dict = {}
                for p_avg, p_model in zip(averaged, current):
                    pair = groups.setdefault(p_avg.dtype, ([], []))
                    pair[0].append(p_avg)
                    pair[1].append(p_model)
                for avg_list, model_list in groups.values():
                    self.multi_avg_fn(avg_list, model_list, self.n_averaged)
            else:
                # PyTorch's CPU path: the tensor-by-tensor running mean, cast back by copy_ (integer buffers too)
                avg_fn = self.avg_fn or get_swa_avg_fn()
                for p_avg, p_model in zip(averaged, current):
                    p_avg.copy_(avg_fn(p_avg, p_model, self.n_averaged))
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_avg.copy_(b_model.detach())
            self.n_averaged.add_(1)


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device=None) -> None:
    """Recompute every batch norm's running statistics as the plain mean over one pass of ``loader``.

    Each batch (or its first element, when a batch is a list or tuple) goes through ``model`` in training mode
    with ``momentum=None``; momenta and the training flag are restored afterwards. Instance norms are left alone,
    as in PyTorch.
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to ``swa_lr`` over ``anneal_epochs`` steps, then holds it there.

    Args:
        optimizer: the optimizer whose learning rates are scheduled.
        swa_lr: the final lr, one value or one per param group (stored as ``group['swa_lr']``).
        anneal_epochs: steps of annealing (default 10; 0 switches at once).
        anneal_strategy: ``"cos"`` (default) or ``"linear"``.
        last_epoch: as for every scheduler.

    Chainable: each step moves the group's current lr, so it can follow another scheduler mid-run.
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: Literal["cos", "linear"] = "cos", last_epoch: int = -1) -> None:
        for value, group in zip(per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2 if self._anneal_strategy == "cos" else t

    def get_lr(self) -> list[float]:
        warn_outside_step(self)  # (at the caller's line, as PyTorch's SWALR's)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # undo the previous step's blend to recover the lr it started from, then blend afresh
        prev_alpha = self._anneal(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        alpha = self._anneal(max(0, min(1, step / max(1, self.anneal_epochs))))
        lrs = []
        for group in self.optimizer.param_groups:
            lr, swa_lr = group["lr"], group["swa_lr"]
            start = swa_lr if prev_alpha == 1 else (lr - prev_alpha * swa_lr) / (1 - prev_alpha)
            lrs.append(swa_lr * alpha + start * (1 - alpha))
        return lrs

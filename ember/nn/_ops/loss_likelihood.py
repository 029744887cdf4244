"""Negative log-likelihood losses of a distribution's parameters: poisson_nll_loss and gaussian_nll_loss.

Composed of differentiable ember ops as PyTorch writes them, so first and higher-order gradients follow from
those ops' (the target's included).
"""

from __future__ import annotations

import math

from ..._autocast import full_precision
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .loss import checked_reduction, reduce_loss


@full_precision
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (``log_input``, input being the log-rate) or input - target * log(input + eps)
    (input the rate); ``full`` adds Stirling's approximation of log(target!) where target > 1. Input and target
    broadcast together."""
    reduction = checked_reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return reduce_loss(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """0.5 (log(var) + (input - target)^2 / var), plus 0.5 log(2 pi) when ``full``.

    ``var`` is the input's shape (heteroscedastic), that shape with one dimension of size 1 or without its last
    dimension (homoscedastic), or a number (PyTorch takes only a float); ValueError for another shape or a
    negative entry. It is clamped at ``eps`` for the loss, while its gradient passes as if unclamped (PyTorch
    clamps in place, untracked)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * input.new_ones(input.shape)
    elif (var < 0).any():
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:  # one variance per row of the last dimension
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")  # only one dimension of size 1 may broadcast
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)

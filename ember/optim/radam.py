"""RAdam (Liu et al., 2019): Adam whose adaptive step is switched on once its variance is tractable."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._tensor import Tensor
from ._helpers import check_betas, lerp_, second_moment_
from .optimizer import Optimizer, check_nonneg, compat_options, step_counter


class RAdam(Optimizer):
    r"""RAdam.

    For each parameter :math:`\theta` with gradient :math:`g`, at step t (from 1)::

        g <- -g                                          if maximize
        theta <- theta * (1 - lr * weight_decay)         if decoupled_weight_decay
        g <- g + weight_decay * theta                    otherwise
        m <- beta1 * m + (1 - beta1) * g
        v <- beta2 * v + (1 - beta2) * g^2
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
        if rho_t > 5:  r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
                       theta <- theta - lr * m / (1 - beta1^t) * r * sqrt(1 - beta2^t) / (sqrt(v) + eps)
        else:          theta <- theta - lr * m / (1 - beta1^t)          (SGD with momentum)

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default: 1e-3).
        betas: decay rates of the first and second moment averages (default: (0.9, 0.999)).
        eps: added to the denominator for numerical stability (default: 1e-8).
        weight_decay: weight decay coefficient (default: 0).
        decoupled_weight_decay: shrink the parameter directly, as AdamW does, instead of adding an L2
            term to the gradient (default: False).
        maximize: maximize the objective instead of minimizing it (default: False).
        foreach, capturable, differentiable: accepted for PyTorch compatibility.

    State per parameter: ``step``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_nonneg(lr=lr, eps=eps)
        check_betas(betas)
        check_nonneg(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
                        decoupled_weight_decay=decoupled_weight_decay,
                        **compat_options(differentiable, foreach=foreach, capturable=capturable))
        super().__init__(params, defaults)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["exp_avg"] = Tensor._make(xp.zeros_like(p))
        state["exp_avg_sq"] = Tensor._make(xp.zeros_like(p))

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, (beta1, beta2) = group["lr"], group["betas"]
        step = state["step"]._data
        step += 1
        t = float(step)
        g = self._adam_family_grad(p, g, group)
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        tmp, denom = self._scratch(p), self._scratch(p, 2)
        lerp_(m, g, 1 - beta1, tmp)
        second_moment_(v, g, beta2, tmp)
        bias1, bias2 = 1 - beta1**t, 1 - beta2**t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2**t / bias2
        xp.divide(m, bias1, out=tmp)
        tmp *= lr
        if rho_t > 5.0:  # the variance of the adaptive step is finite: rectify and apply it
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            xp.sqrt(v, out=denom)
            denom += group["eps"]
            xp.divide(math.sqrt(bias2), denom, out=denom)
            tmp *= denom
            tmp *= rect
        p -= tmp

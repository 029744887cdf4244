"""NAdam (Dozat, 2016): Adam with Nesterov momentum and a momentum schedule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._tensor import Tensor
from ._helpers import check_betas, lerp_, second_moment_
from .optimizer import Optimizer, add_scaled, check_nonneg, compat_options, step_counter


class NAdam(Optimizer):
    r"""NAdam.

    For each parameter :math:`\theta` with gradient :math:`g`, at step t (from 1)::

        g <- -g                                          if maximize
        theta <- theta * (1 - lr * weight_decay)         if decoupled_weight_decay
        g <- g + weight_decay * theta                    otherwise
        mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))
        P <- P * mu_t                                    (mu_product, from 1)
        m <- beta1 * m + (1 - beta1) * g
        v <- beta2 * v + (1 - beta2) * g^2
        d = sqrt(v / (1 - beta2^t)) + eps
        theta <- theta - lr * (1 - mu_t) / (1 - P) * g / d
                       - lr * mu_{t+1} / (1 - P * mu_{t+1}) * m / d

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default: 2e-3).
        betas: decay rates of the first and second moment averages (default: (0.9, 0.999)).
        eps: added to the denominator for numerical stability (default: 1e-8).
        weight_decay: weight decay coefficient (default: 0).
        momentum_decay: how fast the momentum schedule moves towards beta1 (default: 4e-3).
        decoupled_weight_decay: shrink the parameter directly, as AdamW does (NAdamW), instead of adding
            an L2 term to the gradient (default: False).
        maximize: maximize the objective instead of minimizing it (default: False).
        foreach, capturable, differentiable: accepted for PyTorch compatibility.

    State per parameter: ``step``, ``mu_product`` (0-d), ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_nonneg(lr=lr, eps=eps)
        check_betas(betas)
        check_nonneg(weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                        maximize=maximize,
                        **compat_options(differentiable, foreach=foreach, capturable=capturable))
        super().__init__(params, defaults)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["mu_product"] = step_counter()
        state["mu_product"]._data += 1
        state["exp_avg"] = Tensor._make(xp.zeros_like(p))
        state["exp_avg_sq"] = Tensor._make(xp.zeros_like(p))

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, (beta1, beta2) = group["lr"], group["betas"]
        decay = group["momentum_decay"]
        step = state["step"]._data
        step += 1
        t = float(step)
        g = self._adam_family_grad(p, g, group)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * decay))
        product = state["mu_product"]._data
        product *= mu  # kept in the state's dtype, as PyTorch keeps it
        product = float(product)
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        tmp, denom = self._scratch(p), self._scratch(p, 2)
        lerp_(m, g, 1 - beta1, tmp)
        second_moment_(v, g, beta2, tmp)
        xp.divide(v, 1 - beta2**t, out=denom)
        xp.sqrt(denom, out=denom)
        denom += group["eps"]
        xp.divide(g, denom, out=tmp)
        add_scaled(p, tmp, -lr * (1.0 - mu) / (1.0 - product), tmp)
        xp.divide(m, denom, out=tmp)
        add_scaled(p, tmp, -lr * mu_next / (1.0 - product * mu_next), tmp)

"""Adamax (Kingma & Ba, 2014): Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._tensor import Tensor
from ._helpers import check_betas, lerp_
from .optimizer import Optimizer, add_scaled, check_nonneg, compat_options, step_counter


class Adamax(Optimizer):
    r"""Adamax.

    For each parameter :math:`\theta` with gradient :math:`g`, at step t (from 1)::

        g <- -g                                   if maximize
        g <- g + weight_decay * theta             if weight_decay != 0
        m <- beta1 * m + (1 - beta1) * g          (exp_avg)
        u <- max(beta2 * u, |g| + eps)            (exp_inf)
        theta <- theta - lr / (1 - beta1^t) * m / u

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default: 2e-3).
        betas: decay rates of the first moment and of the infinity norm (default: (0.9, 0.999)).
        eps: added to ``|g|`` for numerical stability (default: 1e-8).
        weight_decay: L2 penalty added to the gradient (default: 0).
        maximize: maximize the objective instead of minimizing it (default: False).
        foreach, capturable, differentiable: accepted for PyTorch compatibility.

    State per parameter: ``step``, ``exp_avg``, ``exp_inf``.
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        check_nonneg(lr=lr, eps=eps)
        check_betas(betas)
        check_nonneg(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
                        **compat_options(differentiable, foreach=foreach, capturable=capturable))
        super().__init__(params, defaults)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["exp_avg"] = Tensor._make(xp.zeros_like(p))
        state["exp_inf"] = Tensor._make(xp.zeros_like(p))

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        step = state["step"]._data
        step += 1
        g = self._decayed_grad(p, g, group["weight_decay"], group["maximize"])
        m, u, tmp = state["exp_avg"]._data, state["exp_inf"]._data, self._scratch(p)
        lerp_(m, g, 1 - beta1, tmp)
        u *= beta2
        xp.abs(g, out=tmp)
        tmp += group["eps"]
        xp.maximum(u, tmp, out=u)
        xp.divide(m, u, out=tmp)
        add_scaled(p, tmp, -group["lr"] / (1 - beta1 ** float(step)), tmp)


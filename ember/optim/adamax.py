"""Adamax (Kingma & Ba, 2014): Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._tensor import Tensor
from ._helpers import check_betas, lerp_
from .optimizer import Optimizer, add_scaled, check_nonneg, compat_options, state_arrays, step_counter


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
        foreach: ``False`` runs the readable reference ``_single_tensor_adamax``, as PyTorch's single-tensor path;
            otherwise the threaded in-place update runs (the same arithmetic).
        capturable, differentiable: accepted for PyTorch compatibility.

    State per parameter: ``step``, ``exp_avg``, ``exp_inf``.
    """

    _tensor_steps_required = True

    _older_options = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        check_nonneg(lr=lr, eps=eps)
        check_betas(betas)
        check_nonneg(weight_decay=weight_decay)
        defaults = compat_options(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                                  maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["exp_avg"] = Tensor._make(xp.zeros_like(p))
        state["exp_inf"] = Tensor._make(xp.zeros_like(p))

    def _reference_step(self, params: list, grads: list, states: list, group: dict[str, Any]) -> bool:
        beta1, beta2 = group["betas"]
        _single_tensor_adamax(params, grads, state_arrays(states, "exp_avg"), state_arrays(states, "exp_inf"),
                              state_arrays(states, "step"), eps=group["eps"], beta1=beta1, beta2=beta2,
                              lr=group["lr"], weight_decay=group["weight_decay"], maximize=group["maximize"])
        return True

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


def _single_tensor_adamax(params: list, grads: list, exp_avgs: list, exp_infs: list, state_steps: list, *,
                          eps: float, beta1: float, beta2: float, lr: float, weight_decay: float,
                          maximize: bool) -> None:
    """The reference Adamax step (``foreach=False``), parameter by parameter, as PyTorch's: in place on the
    arrays ``params`` and the state arrays (``state_steps``: 0-d arrays)."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_inf, step_t = exp_avgs[i], exp_infs[i], state_steps[i]
        step_t += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        exp_avg += (1 - beta1) * (grad - exp_avg)  # PyTorch's lerp_(grad, 1 - beta1)
        exp_inf *= beta2
        xp.maximum(exp_inf, xp.abs(grad) + eps, out=exp_inf)
        clr = lr / (1 - beta1 ** float(step_t))
        param -= clr * (exp_avg / exp_inf)

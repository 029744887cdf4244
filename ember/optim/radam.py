"""RAdam (Liu et al., 2019): Adam whose adaptive step is switched on once its variance is tractable."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._tensor import Tensor
from ._helpers import adam_family_grad, check_betas, lerp_, second_moment_
from .optimizer import Optimizer, check_nonneg, compat_options, state_arrays, step_counter


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
        foreach: ``False`` runs the readable reference ``_single_tensor_radam``, as PyTorch's single-tensor path;
            otherwise the threaded in-place update runs (the same arithmetic).
        capturable, differentiable: accepted for PyTorch compatibility.

    State per parameter: ``step``, ``exp_avg``, ``exp_avg_sq``.
    """

    _tensor_steps_required = True

    _older_options = {"foreach": None, "maximize": False, "differentiable": False, "decoupled_weight_decay": False,
                      "capturable": False}

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_nonneg(lr=lr, eps=eps)
        check_betas(betas)
        check_nonneg(weight_decay=weight_decay)
        defaults = compat_options(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
                                  foreach=foreach, capturable=capturable,
                                  decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["exp_avg"] = Tensor._make(xp.zeros_like(p))
        state["exp_avg_sq"] = Tensor._make(xp.zeros_like(p))

    def _reference_step(self, params: list, grads: list, states: list, group: dict[str, Any]) -> bool:
        beta1, beta2 = group["betas"]
        _single_tensor_radam(params, grads, state_arrays(states, "exp_avg"), state_arrays(states, "exp_avg_sq"),
                             state_arrays(states, "step"), beta1=beta1, beta2=beta2, lr=group["lr"],
                             weight_decay=group["weight_decay"], eps=group["eps"],
                             decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"])
        return True

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


def _single_tensor_radam(params: list, grads: list, exp_avgs: list, exp_avg_sqs: list, state_steps: list, *,
                         beta1: float, beta2: float, lr: float, weight_decay: float, eps: float,
                         decoupled_weight_decay: bool, maximize: bool) -> None:
    """The reference RAdam step (``foreach=False``), parameter by parameter, as PyTorch's: in place on the
    arrays ``params`` and the state arrays (``state_steps``: 0-d arrays)."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t += 1
        step = float(step_t)
        grad = adam_family_grad(param, grad, lr=lr, weight_decay=weight_decay,
                                decoupled_weight_decay=decoupled_weight_decay)
        exp_avg += (1 - beta1) * (grad - exp_avg)  # PyTorch's lerp_(grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:  # the adaptive step's variance is tractable: rectify it
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = bias_correction2**0.5 / (xp.sqrt(exp_avg_sq) + eps)
            param -= bias_corrected_exp_avg * lr * adaptive_lr * rect
        else:
            param -= bias_corrected_exp_avg * lr

"""NAdam (Dozat, 2016): Adam with Nesterov momentum and a momentum schedule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._tensor import Tensor
from ._helpers import adam_family_grad, check_betas, lerp_, second_moment_
from .optimizer import Optimizer, add_scaled, check_nonneg, compat_options, state_arrays, step_counter


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
        foreach: ``False`` runs the readable reference ``_single_tensor_nadam``, as PyTorch's single-tensor path;
            otherwise the threaded in-place update runs (the same arithmetic).
        capturable, differentiable: accepted for PyTorch compatibility.

    State per parameter: ``step``, ``mu_product`` (0-d), ``exp_avg``, ``exp_avg_sq``.
    """

    _tensor_steps_required = True

    _older_options = {"maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                      "decoupled_weight_decay": False}
    _capturable_operands = "params, mu_products and state_steps"

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_nonneg(lr=lr, eps=eps)
        check_betas(betas)
        check_nonneg(weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = compat_options(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                  momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                  maximize=maximize, foreach=foreach, capturable=capturable,
                                  differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["mu_product"] = step_counter()
        state["mu_product"]._data += 1
        state["exp_avg"] = Tensor._make(xp.zeros_like(p))
        state["exp_avg_sq"] = Tensor._make(xp.zeros_like(p))

    def _reference_step(self, params: list, grads: list, states: list, group: dict[str, Any]) -> bool:
        beta1, beta2 = group["betas"]
        _single_tensor_nadam(params, grads, state_arrays(states, "exp_avg"), state_arrays(states, "exp_avg_sq"),
                             state_arrays(states, "mu_product"), state_arrays(states, "step"), beta1=beta1,
                             beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                             momentum_decay=group["momentum_decay"], eps=group["eps"],
                             decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"])
        return True

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


def _single_tensor_nadam(params: list, grads: list, exp_avgs: list, exp_avg_sqs: list, mu_products: list,
                         state_steps: list, *, beta1: float, beta2: float, lr: float, weight_decay: float,
                         momentum_decay: float, eps: float, decoupled_weight_decay: bool, maximize: bool) -> None:
    """The reference NAdam step (``foreach=False``), parameter by parameter, as PyTorch's: in place on the
    arrays ``params`` and the state arrays (``mu_products``, ``state_steps``: 0-d arrays)."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_avg_sq, mu_product, step_t = exp_avgs[i], exp_avg_sqs[i], mu_products[i], state_steps[i]
        step_t += 1
        step = float(step_t)
        bias_correction2 = 1 - beta2**step
        grad = adam_family_grad(param, grad, lr=lr, weight_decay=weight_decay,
                                decoupled_weight_decay=decoupled_weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu  # in the state's dtype, as PyTorch's
        exp_avg += (1 - beta1) * (grad - exp_avg)  # PyTorch's lerp_(grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        denom = xp.sqrt(exp_avg_sq / bias_correction2) + eps
        mu_product_next = float(mu_product) * mu_next
        param -= lr * (1.0 - mu) / (1.0 - float(mu_product)) * (grad / denom)
        param -= lr * mu_next / (1.0 - mu_product_next) * (exp_avg / denom)

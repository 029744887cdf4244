"""Adadelta (Zeiler, 2012): step sizes from running averages of squared gradients and squared updates."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._tensor import Tensor
from .optimizer import Optimizer, add_scaled, check_nonneg, compat_options, state_arrays, step_counter


class Adadelta(Optimizer):
    r"""Adadelta.

    For each parameter :math:`\theta` with gradient :math:`g`::

        g <- -g                                   if maximize
        g <- g + weight_decay * theta             if weight_decay != 0
        v <- rho * v + (1 - rho) * g^2            (square_avg)
        delta <- sqrt(u + eps) / sqrt(v + eps) * g
        u <- rho * u + (1 - rho) * delta^2        (acc_delta)
        theta <- theta - lr * delta

    Args:
        params: parameters or parameter groups to optimize.
        lr: factor applied to the update (default: 1.0).
        rho: decay rate of both running averages, in [0, 1] (default: 0.9).
        eps: added inside the square roots (default: 1e-6).
        weight_decay: L2 penalty added to the gradient (default: 0).
        maximize: maximize the objective instead of minimizing it (default: False).
        foreach: ``False`` runs the readable reference ``_single_tensor_adadelta``, as PyTorch's single-tensor
            path; otherwise the threaded in-place update runs (the same arithmetic).
        capturable, differentiable: accepted for PyTorch compatibility.

    State per parameter: ``step``, ``square_avg``, ``acc_delta``.
    """

    _tensor_steps_required = True

    _older_options = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
    _capturable_on_xla = False

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_nonneg(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonneg(eps=eps, weight_decay=weight_decay)
        defaults = compat_options(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                  capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["square_avg"] = Tensor._make(xp.zeros_like(p))
        state["acc_delta"] = Tensor._make(xp.zeros_like(p))

    def _reference_step(self, params: list, grads: list, states: list, group: dict[str, Any]) -> bool:
        _single_tensor_adadelta(params, grads, state_arrays(states, "square_avg"), state_arrays(states, "acc_delta"),
                                state_arrays(states, "step"), lr=group["lr"], rho=group["rho"], eps=group["eps"],
                                weight_decay=group["weight_decay"], maximize=group["maximize"])
        return True

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        rho, eps = group["rho"], group["eps"]
        state["step"]._data += 1
        g = self._decayed_grad(p, g, group["weight_decay"], group["maximize"])
        v, u = state["square_avg"]._data, state["acc_delta"]._data
        tmp, delta = self._scratch(p), self._scratch(p, 2)
        v *= rho
        xp.multiply(g, g, out=tmp)
        add_scaled(v, tmp, 1 - rho, tmp)
        xp.add(u, eps, out=delta)
        xp.sqrt(delta, out=delta)
        xp.add(v, eps, out=tmp)
        xp.sqrt(tmp, out=tmp)
        delta /= tmp
        delta *= g
        u *= rho
        xp.multiply(delta, delta, out=tmp)
        add_scaled(u, tmp, 1 - rho, tmp)
        add_scaled(p, delta, -group["lr"], tmp)


def _single_tensor_adadelta(params: list, grads: list, square_avgs: list, acc_deltas: list, state_steps: list, *,
                            lr: float, rho: float, eps: float, weight_decay: float, maximize: bool) -> None:
    """The reference Adadelta step (``foreach=False``), parameter by parameter, as PyTorch's: in place on the
    arrays ``params`` and the state arrays (``state_steps``: 0-d arrays)."""
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs, acc_deltas, state_steps):
        step += 1
        grad = -grad if maximize else grad
        if weight_decay != 0:
            grad = grad + weight_decay * param
        square_avg *= rho
        square_avg += (1 - rho) * grad * grad
        std = xp.sqrt(square_avg + eps)
        delta = xp.sqrt(acc_delta + eps) / std * grad
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        param -= lr * delta

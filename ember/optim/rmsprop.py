"""RMSprop (Hinton's lecture 6e), with momentum and the centered variant."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._tensor import Tensor
from .optimizer import Optimizer, add_scaled, check_nonneg, compat_options, state_arrays, step_counter


class RMSprop(Optimizer):
    r"""RMSprop.

    For each parameter :math:`\theta` with gradient :math:`g`::

        g <- -g                                    if maximize
        g <- g + weight_decay * theta              if weight_decay != 0
        v <- alpha * v + (1 - alpha) * g^2
        if centered: gbar <- alpha * gbar + (1 - alpha) * g ;  d <- sqrt(v - gbar^2) + eps
        else:        d <- sqrt(v) + eps
        if momentum > 0: b <- momentum * b + g / d ;  theta <- theta - lr * b
        else:            theta <- theta - lr * g / d

    Note: ``eps`` is added outside the square root (as PyTorch does; TensorFlow adds it inside).

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default: 1e-2).
        alpha: smoothing constant of the squared-gradient average (default: 0.99).
        eps: added to the denominator for numerical stability (default: 1e-8).
        weight_decay: L2 penalty added to the gradient (default: 0).
        momentum: momentum factor (default: 0).
        centered: normalize by an estimate of the gradient's variance (default: False).
        maximize: maximize the objective instead of minimizing it (default: False).
        foreach: ``False`` runs the readable reference ``_single_tensor_rmsprop``, as PyTorch's single-tensor path;
            otherwise the threaded in-place update runs (the same arithmetic).
        capturable, differentiable: accepted for PyTorch compatibility.

    State per parameter: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0),
    ``grad_avg`` (centered).
    """

    _tensor_steps_required = True

    _older_options = {"momentum": 0, "centered": False, "foreach": None, "maximize": False, "differentiable": False,
                      "capturable": False}

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        check_nonneg(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = compat_options(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                  weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                  maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["square_avg"] = Tensor._make(xp.zeros_like(p))
        if group["momentum"] > 0:
            state["momentum_buffer"] = Tensor._make(xp.zeros_like(p))
        if group["centered"]:
            state["grad_avg"] = Tensor._make(xp.zeros_like(p))

    def _reference_step(self, params: list, grads: list, states: list, group: dict[str, Any]) -> bool:
        _single_tensor_rmsprop(params, grads, state_arrays(states, "square_avg"), state_arrays(states, "grad_avg"),
                               state_arrays(states, "momentum_buffer"), state_arrays(states, "step"),
                               lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                               weight_decay=group["weight_decay"], momentum=group["momentum"],
                               centered=group["centered"], maximize=group["maximize"])
        return True

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        alpha, momentum, lr = group["alpha"], group["momentum"], group["lr"]
        state["step"]._data += 1
        g = self._decayed_grad(p, g, group["weight_decay"], group["maximize"])
        sq, tmp = state["square_avg"]._data, self._scratch(p)
        sq *= alpha
        xp.multiply(g, g, out=tmp)
        add_scaled(sq, tmp, 1 - alpha, tmp)
        if group["centered"]:
            avg = state["grad_avg"]._data
            avg *= alpha
            add_scaled(avg, g, 1 - alpha, tmp)
            xp.multiply(avg, avg, out=tmp)
            xp.subtract(sq, tmp, out=tmp)
            xp.sqrt(tmp, out=tmp)
        else:
            xp.sqrt(sq, out=tmp)
        tmp += group["eps"]
        xp.divide(g, tmp, out=tmp)
        if momentum > 0:
            buf = state["momentum_buffer"]._data
            buf *= momentum
            buf += tmp
            add_scaled(p, buf, -lr, tmp)
        else:
            add_scaled(p, tmp, -lr, tmp)


def _single_tensor_rmsprop(params: list, grads: list, square_avgs: list, grad_avgs: list, momentum_buffer_list: list,
                           state_steps: list, *, lr: float, alpha: float, eps: float, weight_decay: float,
                           momentum: float, centered: bool, maximize: bool) -> None:
    """The reference RMSprop step (``foreach=False``), parameter by parameter, as PyTorch's: in place on the
    arrays ``params`` and the state arrays (``grad_avgs``/``momentum_buffer_list`` entries are None when not
    ``centered``/``momentum > 0``; ``state_steps``: 0-d arrays)."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        square_avg = square_avgs[i]
        state_steps[i] += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if centered:
            grad_avg = grad_avgs[i]
            grad_avg += (1 - alpha) * (grad - grad_avg)  # PyTorch's lerp_(grad, 1 - alpha)
            avg = xp.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = xp.sqrt(square_avg)
        avg = avg + eps
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf *= momentum
            buf += grad / avg
            param -= lr * buf
        else:
            param -= lr * (grad / avg)

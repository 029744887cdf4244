"""Adagrad (Duchi et al., 2011), with learning-rate decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._sparse import update_rows
from .._tensor import Tensor
from .optimizer import Optimizer, add_scaled, check_nonneg, compat_options, state_arrays, step_counter


class Adagrad(Optimizer):
    r"""Adagrad.

    For each parameter :math:`\theta` with gradient :math:`g`, at step t (from 1)::

        g <- -g                                   if maximize
        g <- g + weight_decay * theta             if weight_decay != 0
        s <- s + g^2                              (s starts at initial_accumulator_value)
        theta <- theta - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default: 1e-2).
        lr_decay: learning-rate decay per step (default: 0).
        weight_decay: L2 penalty added to the gradient (default: 0).
        initial_accumulator_value: starting value of the squared-gradient sum (default: 0).
        eps: added to the denominator for numerical stability (default: 1e-10).
        maximize: maximize the objective instead of minimizing it (default: False).
        foreach: ``False`` runs the readable reference ``_single_tensor_adagrad``, as PyTorch's single-tensor path;
            otherwise the threaded in-place update runs (the same arithmetic).
        differentiable, fused: accepted for PyTorch compatibility.

    State per parameter (created at construction, as in PyTorch): ``step``, ``sum``.
    Difference from PyTorch: a group's own ``initial_accumulator_value`` is honoured (PyTorch
    starts every group's sum at the constructor's value).

    Sparse gradients (``Embedding(sparse=True)``): PyTorch's sparse path — only the gradient's rows of
    ``sum`` and of the parameter change; ``weight_decay`` is refused (RuntimeError), as in PyTorch.
    """

    _tensor_steps_required = True

    _older_options = {"foreach": None, "maximize": False, "differentiable": False, "fused": None}

    _sparse_grads = True

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        check_nonneg(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                     initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = compat_options(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                  initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                  maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p._data, self.state[p], group)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["sum"] = Tensor._make(xp.full_like(p, group["initial_accumulator_value"]))

    def _reference_step(self, params: list, grads: list, states: list, group: dict[str, Any]) -> bool:
        _single_tensor_adagrad(params, grads, state_arrays(states, "sum"), state_arrays(states, "step"),
                               lr=group["lr"], weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                               eps=group["eps"], maximize=group["maximize"])
        return True

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        step = state["step"]._data
        step += 1
        clr = group["lr"] / (1 + (float(step) - 1) * group["lr_decay"])
        g = self._decayed_grad(p, g, group["weight_decay"], group["maximize"])
        total, tmp = state["sum"]._data, self._scratch(p)
        xp.multiply(g, g, out=tmp)
        total += tmp
        xp.sqrt(total, out=tmp)
        tmp += group["eps"]
        xp.divide(g, tmp, out=tmp)
        add_scaled(p, tmp, -clr, tmp)

    def _update_sparse(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        # On the gradient's (distinct) rows r only: s[r] += g^2; p[r] -= clr * g / (sqrt(s[r]) + eps)
        if group["weight_decay"]:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        step = state["step"]._data
        step += 1
        clr = group["lr"] / (1 + (float(step) - 1) * group["lr_decay"])
        g = g.coalesce()
        values = -g.values if group["maximize"] else g.values
        rows, total = tuple(g.indices), state["sum"]._data
        total_rows = total[rows]
        total_rows += values * values
        total[rows] = total_rows
        update_rows(p, g, values / (xp.sqrt(total_rows) + group["eps"]), -clr)


def _single_tensor_adagrad(params: list, grads: list, state_sums: list, state_steps: list, *, lr: float,
                           weight_decay: float, lr_decay: float, eps: float, maximize: bool) -> None:
    """The reference dense Adagrad step (``foreach=False``), parameter by parameter, as PyTorch's: in place on
    the arrays ``params`` and the state arrays (``state_steps``: 0-d arrays)."""
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t += 1
        step = float(step_t)
        grad = -grad if maximize else grad
        if weight_decay != 0:
            grad = grad + weight_decay * param
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum += grad * grad
        std = xp.sqrt(state_sum) + eps
        param -= clr * (grad / std)

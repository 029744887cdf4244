"""Rprop (Riedmiller & Braun, 1993): resilient backpropagation, a per-element step size driven by gradient signs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._tensor import Tensor
from .optimizer import Optimizer, check_nonneg, compat_options, state_arrays, step_counter


class Rprop(Optimizer):
    r"""Resilient backpropagation.

    For each parameter :math:`\theta` with gradient :math:`g`, elementwise, at each step::

        g <- -g                                   if maximize
        f <- etaplus   where g * prev > 0
             etaminus  where g * prev < 0
             1         where g * prev == 0
        step_size <- clamp(step_size * f, step_size_min, step_size_max)
        g <- 0                                    where f == etaminus (a sign change: skip this step)
        theta <- theta - sign(g) * step_size
        prev <- g

    Only the gradient's sign is used, so Rprop suits full-batch training.

    Args:
        params: parameters or parameter groups to optimize.
        lr: the initial step size of every element (default: 1e-2).
        etas: ``(etaminus, etaplus)``, the factors shrinking and growing the step size; ``0 < etaminus < 1 <
            etaplus`` (default: (0.5, 1.2)).
        step_sizes: ``(step_size_min, step_size_max)``, the clamp of the step size (default: (1e-6, 50)).
        maximize: maximize the objective instead of minimizing it (default: False).
        foreach: ``False`` runs the readable reference ``_single_tensor_rprop``, as PyTorch's single-tensor path;
            otherwise the in-place update runs (the same arithmetic).
        capturable, differentiable: accepted for PyTorch compatibility.

    State per parameter: ``step``, ``prev`` (the last gradient followed, 0 where skipped), ``step_size``.
    A tensor ``lr`` is not supported (a Python number only).
    """

    _tensor_steps_required = True

    _older_options = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def __init__(self, params: Iterable, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        check_nonneg(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = compat_options(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                  differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["prev"] = Tensor._make(xp.zeros_like(p))
        # a complex parameter's real and imaginary parts are two real elements, each starting at lr
        lr = complex(group["lr"], group["lr"]) if p.dtype.kind == "c" else group["lr"]
        state["step_size"] = Tensor._make(xp.full_like(p, lr))

    def _reference_step(self, params: list, grads: list, states: list, group: dict[str, Any]) -> bool:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        _single_tensor_rprop(params, grads, state_arrays(states, "prev"), state_arrays(states, "step_size"),
                             state_arrays(states, "step"), step_size_min=step_size_min,
                             step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus,
                             maximize=group["maximize"])
        return True

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        etaminus, etaplus = group["etas"]
        step = state["step"]._data
        step += 1
        g = self._decayed_grad(p, g, 0, group["maximize"])
        prev, step_size, factor = state["prev"]._data, state["step_size"]._data, self._scratch(p)
        xp.multiply(g, prev, out=factor)
        skip = _sign_factors_(factor, etaminus, etaplus)
        step_size *= factor
        xp.clip(step_size, *group["step_sizes"], out=step_size)
        prev[...] = g
        prev[skip] = 0
        xp.sign(prev, out=factor)
        factor *= step_size
        p -= factor


def _sign_factors_(s, etaminus: float, etaplus: float):
    """``s`` (holding ``g * prev``) becomes the step-size factors in place, in PyTorch's order: etaplus where
    positive, etaminus where negative, 1 where zero; returns the mask ``s == etaminus`` (the skipped elements)."""
    xp.sign(s, out=s)
    s[s > 0] = etaplus
    s[s < 0] = etaminus
    s[s == 0] = 1
    return s == s.dtype.type(etaminus)


def _single_tensor_rprop(params: list, grads: list, prevs: list, step_sizes: list, state_steps: list, *,
                         step_size_min: float, step_size_max: float, etaminus: float, etaplus: float,
                         maximize: bool) -> None:
    """The reference Rprop step (``foreach=False``), parameter by parameter, as PyTorch's: in place on the
    arrays ``params`` and the state arrays (``state_steps``: 0-d arrays)."""
    for param, grad, prev, step_size, step_t in zip(params, grads, prevs, step_sizes, state_steps):
        grad = -grad if maximize else grad
        step_t += 1
        sign = xp.multiply(grad, prev, out=xp.empty_like(prev))  # an array also for 0-d parameters
        skip = _sign_factors_(sign, etaminus, etaplus)
        step_size *= sign
        xp.clip(step_size, step_size_min, step_size_max, out=step_size)
        grad = xp.array(grad, copy=True)
        grad[skip] = 0
        param -= xp.sign(grad) * step_size
        prev[...] = grad

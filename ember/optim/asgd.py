"""ASGD (Polyak & Juditsky, 1992): stochastic gradient descent with a decaying step and iterate averaging."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._dtype import get_default_dtype
from .._tensor import Tensor
from .optimizer import Optimizer, add_scaled, check_nonneg, compat_options, state_arrays, step_counter


class ASGD(Optimizer):
    r"""Averaged stochastic gradient descent.

    For each parameter :math:`\theta` with gradient :math:`g`, at step t (from 1), with ``eta`` and ``mu`` the
    values left by the previous step (``lr`` and 1 at the first)::

        g <- -g                                   if maximize
        g <- g + weight_decay * theta             if weight_decay != 0
        theta <- theta * (1 - lambd * eta) - eta * g
        ax <- ax + mu * (theta - ax)              (ax <- theta while mu == 1)
        eta <- lr / (1 + lambd * lr * t) ** alpha
        mu <- 1 / max(1, t - t0)

    ``ax`` is the running average of the iterates, taken from step ``t0`` on; the parameters themselves are not
    replaced by it (copy ``state['ax']`` in to evaluate the averaged model, as in PyTorch).

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default: 1e-2).
        lambd: decay term (default: 1e-4).
        alpha: power of the ``eta`` update (default: 0.75).
        t0: the step at which averaging starts (default: 1e6).
        weight_decay: L2 penalty added to the gradient (default: 0).
        maximize: maximize the objective instead of minimizing it (default: False).
        foreach: ``False`` runs the readable reference ``_single_tensor_asgd``, as PyTorch's single-tensor path;
            otherwise the in-place update runs (the same arithmetic).
        capturable, differentiable: accepted for PyTorch compatibility.

    State per parameter: ``step``, ``eta``, ``mu`` (0-d tensors of the default dtype, as PyTorch's) and ``ax``.
    A tensor ``lr`` is not supported (a Python number only).
    """

    _older_options = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
    _capturable_operands = "params, mus, etas, and state_steps"

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_nonneg(lr=lr, weight_decay=weight_decay)
        defaults = compat_options(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                                  maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["eta"] = Tensor._make(xp.asarray(group["lr"], dtype=get_default_dtype().np))
        state["mu"] = Tensor._make(xp.ones((), dtype=get_default_dtype().np))
        state["ax"] = Tensor._make(xp.zeros_like(p))

    def _reference_step(self, params: list, grads: list, states: list, group: dict[str, Any]) -> bool:
        _single_tensor_asgd(params, grads, state_arrays(states, "ax"), state_arrays(states, "mu"),
                            state_arrays(states, "eta"), _step_counts(states), lambd=group["lambd"],
                            lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
                            weight_decay=group["weight_decay"], maximize=group["maximize"])
        return True

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        if group["foreach"] and not isinstance(state["step"], Tensor):
            # PyTorch's foreach step groups its lists of tensors, a number among them refused by the binding
            raise TypeError("_group_tensors_by_device_and_dtype(): incompatible function arguments: state_steps "
                            f"holds {type(state['step']).__name__} {state['step']!r}, not a tensor")
        eta, mu = state["eta"]._data, state["mu"]._data
        step = _step_counts([state])[0]
        step += 1  # (in place for a tensor's array; a number is rebound here only, as in PyTorch)
        g = self._decayed_grad(p, g, group["weight_decay"], group["maximize"])
        ax, tmp = state["ax"]._data, self._scratch(p)
        eta_value = float(eta)
        p *= 1 - group["lambd"] * eta_value
        add_scaled(p, g, -eta_value, tmp)
        if float(mu) != 1:
            xp.subtract(p, ax, out=tmp)
            tmp *= mu
            ax += tmp
        else:
            ax[...] = p
        _schedule_(eta, mu, float(step), lr=group["lr"], lambd=group["lambd"], alpha=group["alpha"], t0=group["t0"])


def _step_counts(states: list) -> list:
    """Each state's ``step``: a tensor's 0-d array (advanced in place by ``+= 1``), or the Python number itself
    that code written for PyTorch before 1.12 stores (A3C's SharedAdam-style shared optimizers). PyTorch's ASGD
    accepts such a number where its other optimizers refuse it: its ``step_t += 1`` rebinds a local name, so every
    step schedules ``eta`` and ``mu`` from that number plus one and ``state['step']`` keeps its value."""
    return [s["step"]._data if isinstance(s["step"], Tensor) else s["step"] for s in states]


def _schedule_(eta, mu, step: float, *, lr: float, lambd: float, alpha: float, t0: float) -> None:
    """The next step's ``eta`` and ``mu`` (0-d arrays, in place) after step ``step``."""
    eta[...] = lr / ((1 + lambd * lr * step) ** alpha)
    mu[...] = 1 / max(1, step - t0)


def _single_tensor_asgd(params: list, grads: list, axs: list, mus: list, etas: list, state_steps: list, *,
                        lambd: float, lr: float, t0: float, alpha: float, weight_decay: float,
                        maximize: bool) -> None:
    """The reference ASGD step (``foreach=False``), parameter by parameter, as PyTorch's: in place on the
    arrays ``params`` and the state arrays (``mus``, ``etas``: 0-d arrays; ``state_steps``: 0-d arrays or
    numbers, see ``_step_counts``)."""
    for param, grad, ax, mu, eta, step_t in zip(params, grads, axs, mus, etas, state_steps):
        grad = -grad if maximize else grad
        step_t += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        eta_value = float(eta)
        param *= 1 - lambd * eta_value  # decay term
        param -= eta_value * grad
        if float(mu) != 1:  # averaging
            ax += (param - ax) * mu
        else:
            ax[...] = param
        _schedule_(eta, mu, float(step_t), lr=lr, lambd=lambd, alpha=alpha, t0=t0)

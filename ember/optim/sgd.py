"""Stochastic gradient descent, with momentum, dampening, Nesterov, weight decay and maximize."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from .._backend import xp
from .._parallel import parallel_blocks
from .._sparse import SparseTensor, update_rows
from .._tensor import Tensor
from .optimizer import Optimizer, add_scaled, check_nonneg, compat_options, decayed_grad_into


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum).

    For each parameter :math:`\theta` with gradient :math:`g`, at step t::

        g <- -g                         if maximize
        g <- g + weight_decay * theta   if weight_decay != 0
        if momentum != 0:
            b <- g                                   (t = 1)
            b <- momentum * b + (1 - dampening) * g  (t > 1)
            g <- g + momentum * b   if nesterov else   b
        theta <- theta - lr * g

    Note: like PyTorch, the velocity accumulates gradients and ``lr`` multiplies it at the end;
    Sutskever et al. fold ``lr`` into the velocity (``v = momentum * v + lr * g``). The two
    agree for a constant ``lr`` and differ once a scheduler changes it.

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default: 1e-3, PyTorch 2.x's default).
        momentum: momentum factor (default: 0).
        dampening: dampening of the gradient added to the momentum buffer (default: 0).
        weight_decay: L2 penalty added to the gradient (default: 0).
        nesterov: Nesterov momentum; needs ``momentum > 0`` and ``dampening == 0`` (default: False).
        maximize: maximize the objective instead of minimizing it (default: False).
        foreach: ``False`` runs the readable reference ``_single_tensor_sgd``, as PyTorch's single-tensor path;
            otherwise the threaded in-place update runs (the same arithmetic).
        differentiable, fused: accepted for PyTorch compatibility (see ``compat_options``).

    State per parameter: ``momentum_buffer`` (only when ``momentum != 0``).

    Sparse gradients (``Embedding(sparse=True)``): as in PyTorch, with every option but ``weight_decay``
    (PyTorch's RuntimeError); the update touches only the rows the gradient has. The momentum buffer is
    then a sparse tensor, as in PyTorch, but kept coalesced (PyTorch's grows by the gradient's entries
    each step; the values are the same).
    """

    _older_options = {"nesterov": False, "maximize": False, "foreach": None, "differentiable": False, "fused": False}

    _sparse_grads = True

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        check_nonneg(lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = compat_options(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                  nesterov=nesterov, maximize=maximize, foreach=foreach,
                                  differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        momentum, buf, first = group["momentum"], None, False
        if momentum:
            t = state.get("momentum_buffer")
            if t is None:  # the first step copies the gradient into it
                t = state["momentum_buffer"] = Tensor._make(xp.empty_like(g))
                first = True
            buf = t._data
        decayed = group["weight_decay"] or group["maximize"]
        kernel = partial(_sgd_rows, weight_decay=group["weight_decay"], maximize=group["maximize"], momentum=momentum,
                         dampening=group["dampening"], nesterov=group["nesterov"], lr=group["lr"], first=first)
        # every element is updated on its own: split among the intra-op threads, in cache-sized blocks
        parallel_blocks(kernel, p, g, self._scratch(g, 1) if decayed else None, buf, self._scratch(p))

    def _reference_step(self, params: list, grads: list, states: list, group: dict[str, Any]) -> bool:
        buffers = [s["momentum_buffer"]._data if "momentum_buffer" in s else None for s in states]
        _single_tensor_sgd(params, grads, buffers, weight_decay=group["weight_decay"], momentum=group["momentum"],
                           lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                           maximize=group["maximize"])
        if group["momentum"]:
            for state, buf in zip(states, buffers):
                state.setdefault("momentum_buffer", Tensor._make(buf))
        return True

    def _update_sparse(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        # The dense update's arithmetic on the gradient's rows: g + weight_decay * p would be dense (PyTorch
        # refuses it: add(sparse, dense)); the momentum buffer m * b + (1 - d) * g stays sparse.
        if group["weight_decay"]:
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead. (SGD's "
                               "weight_decay adds the dense parameter to the sparse gradient; PyTorch refuses it)")
        g = g.coalesce()
        if group["maximize"]:
            g = g.with_values(-g.values)
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = SparseTensor.wrap(g.copy())
            else:
                buf._data = (buf._data.with_values(buf._data.values * momentum)
                             + g.with_values(g.values * (1 - group["dampening"]))).coalesce()
            b = buf._data
            g = (g + b.with_values(b.values * momentum)).coalesce() if group["nesterov"] else b
        update_rows(p, g, g.values, -group["lr"])


def _single_tensor_sgd(params: list, grads: list, momentum_buffer_list: list, *, weight_decay: float,
                       momentum: float, lr: float, dampening: float, nesterov: bool, maximize: bool) -> None:
    """The reference SGD step (``foreach=False``), parameter by parameter, as PyTorch's: in place on the arrays
    ``params``; ``momentum_buffer_list[i]`` is None before parameter i's first step and is set then."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = momentum_buffer_list[i] = xp.array(grad)  # (a copy; an array even for a 0-d grad)
            else:
                buf *= momentum
                buf += (1 - dampening) * grad
            grad = grad + momentum * buf if nesterov else buf
        param -= lr * grad


def _sgd_rows(p, g, gbuf, buf, tmp, *, weight_decay, maximize, momentum, dampening, nesterov, lr, first):
    """One SGD step on matching pieces of the arrays (see ``SGD``); gbuf holds the decayed gradient."""
    if gbuf is not None:
        g = decayed_grad_into(p, g, weight_decay, maximize, gbuf)
    if buf is not None:
        if first:
            buf[...] = g
        else:
            buf *= momentum
            add_scaled(buf, g, 1 - dampening, tmp)
        if nesterov:
            xp.multiply(buf, momentum, out=tmp)
            tmp += g
            g = tmp
        else:
            g = buf
    add_scaled(p, g, -lr, tmp)

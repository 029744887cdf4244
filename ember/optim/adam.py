"""Adam and AdamW (Adam with decoupled weight decay)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import partial
from typing import Any

from .._backend import xp
from .._kernels import optim as compiled
from .._kernels._omp import region_threads
from .._kernels.policy import policy
from .._parallel import parallel_blocks, parallel_for
from .._tensor import Tensor
from ._helpers import adam_family_grad, check_betas, lerp_, second_moment_
from .optimizer import (
    Optimizer,
    adam_family_decay,
    add_scaled,
    check_nonneg,
    compat_options,
    decayed_grad_into,
    step_counter,
)


class Adam(Optimizer):
    r"""Adam (Kingma & Ba, 2014), with optional AMSGrad.

    For each parameter :math:`\theta` with gradient :math:`g`, at step t (from 1)::

        g <- -g                                  if maximize
        theta <- theta * (1 - lr * weight_decay) if decoupled_weight_decay  (AdamW)
        g <- g + weight_decay * theta            otherwise (L2 penalty)
        m <- beta1 * m + (1 - beta1) * g
        v <- beta2 * v + (1 - beta2) * g^2
        v_max <- max(v_max, v)                   if amsgrad (then v_max replaces v below)
        theta <- theta - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default: 1e-3).
        betas: decay rates of the first and second moment averages (default: (0.9, 0.999)).
        eps: added to the denominator for numerical stability (default: 1e-8).
        weight_decay: weight decay coefficient (default: 0).
        amsgrad: use the maximum of past second moments (default: False).
        maximize: maximize the objective instead of minimizing it (default: False).
        decoupled_weight_decay: shrink the parameter directly instead of adding an L2 term to the
            gradient, i.e. AdamW (default: False).
        foreach: ``False`` runs the readable reference ``_single_tensor_adam``, as PyTorch's single-tensor path;
            otherwise the threaded in-place update runs (the same arithmetic).
        capturable, differentiable, fused: accepted for PyTorch compatibility.

    State per parameter: ``step`` (0-d float tensor), ``exp_avg``, ``exp_avg_sq``, and
    ``max_exp_avg_sq`` when ``amsgrad``.
    """

    _tensor_steps_required = True

    _older_options = {"amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                      "differentiable": False, "decoupled_weight_decay": False, "fused": None}

    _sparse_error = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        check_nonneg(lr=lr, eps=eps)
        check_betas(betas)
        check_nonneg(weight_decay=weight_decay)
        defaults = compat_options(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                  maximize=maximize, foreach=foreach, capturable=capturable,
                                  differentiable=differentiable, fused=fused,
                                  decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_counter()
        state["exp_avg"] = Tensor._make(xp.zeros_like(p))
        state["exp_avg_sq"] = Tensor._make(xp.zeros_like(p))
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = Tensor._make(xp.zeros_like(p))

    def _reference_step(self, params: list, grads: list, states: list, group: dict[str, Any]) -> bool:
        beta1, beta2 = group["betas"]
        _single_tensor_adam(params, grads, [s["exp_avg"]._data for s in states],
                            [s["exp_avg_sq"]._data for s in states],
                            [s["max_exp_avg_sq"]._data for s in states] if group["amsgrad"] else None,
                            [s["step"]._data for s in states], amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2,
                            lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                            maximize=group["maximize"], decoupled_weight_decay=group["decoupled_weight_decay"])
        return True

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, (beta1, beta2) = group["lr"], group["betas"]
        step = state["step"]._data
        step += 1
        t = float(step)
        shrink, weight_decay = adam_family_decay(group)
        decayed = weight_decay or group["maximize"]
        # theta -= lr / (1 - beta1^t) * m / (sqrt(v) / c + eps) with c = sqrt(1 - beta2^t), computed as
        # theta -= (lr c / (1 - beta1^t)) * m / (sqrt(v) + eps c): one pass fewer over the arrays
        c = math.sqrt(1 - beta2**t)
        step_size, eps_c = -lr * c / (1 - beta1**t), group["eps"] * c
        region = not decayed and not group["amsgrad"] and region_threads(p.size, p.size)  # (policy.omp: 0 at once)
        if not decayed and not group["amsgrad"] and _one_pass(p, g, state, region):
            # one compiled pass (_kernels.optim.adam: _adam_rows' arithmetic in its order, the same bits) where the
            # reference makes about ten NumPy passes: the LLaMA-style step's 39 AdamW updates (820 Ki values) 1.75 ->
            # 0.36 ms of CPU at one thread. As one region on numba's OpenMP threads (policy.omp), or in chunks of
            # elements over ember's threads from ``min_elementwise_elements``.
            dt = p.dtype.type
            args = (dt(1 if shrink is None else shrink), dt(1 - beta1), dt(beta2), dt(1 - beta2), dt(eps_c),
                    dt(step_size))
            flat = (p.reshape(-1), g.reshape(-1), state["exp_avg"]._data.reshape(-1),
                    state["exp_avg_sq"]._data.reshape(-1))
            if region:
                compiled.adam.parallel(*flat, *args)
            else:
                parallel_for(lambda lo, hi: compiled.adam(*(a[lo:hi] for a in flat), *args), p.size, p.size,
                             policy.min_elementwise_elements)
            return
        kernel = partial(_adam_rows, shrink=shrink, weight_decay=weight_decay, maximize=group["maximize"],
                         beta1=beta1, beta2=beta2, eps_c=eps_c, step_size=step_size)
        # every element is updated on its own: split among the intra-op threads, in cache-sized blocks
        parallel_blocks(kernel, p, g, state["exp_avg"]._data, state["exp_avg_sq"]._data, self._scratch(p),
                        self._scratch(g, 1) if decayed else None,
                        state["max_exp_avg_sq"]._data if group["amsgrad"] else None)


def _one_pass(p, g, state: dict[str, Any], region: int) -> bool:
    """Whether Adam's update of p runs as ``_kernels.optim.adam``'s one compiled pass: float32 or float64
    C-contiguous arrays of one dtype, at least ``policy.min_compiled_elements`` of them (or ``region``: one region
    on numba's OpenMP threads, ``_omp.region_threads``'s answer), compiled kernels on."""
    if not (region or policy.compiles(p.size, policy.min_compiled_elements)):
        return False
    m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
    return p.dtype in (xp.float32, xp.float64) and all(type(a) is xp.ndarray and a.dtype == p.dtype
                                                        and a.shape == p.shape and a.flags.c_contiguous
                                                        for a in (p, g, m, v))


def _single_tensor_adam(params: list, grads: list, exp_avgs: list, exp_avg_sqs: list, max_exp_avg_sqs: list | None,
                        state_steps: list, *, amsgrad: bool, beta1: float, beta2: float, lr: float,
                        weight_decay: float, eps: float, maximize: bool, decoupled_weight_decay: bool) -> None:
    """The reference Adam/AdamW step (``foreach=False``), parameter by parameter, as PyTorch's: in place on the
    arrays ``params`` and the state arrays (``state_steps``: 0-d arrays)."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t += 1
        grad = adam_family_grad(param, grad, lr=lr, weight_decay=weight_decay,
                                decoupled_weight_decay=decoupled_weight_decay)
        exp_avg += (1 - beta1) * (grad - exp_avg)  # PyTorch's lerp_(grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        step = float(step_t)
        bias_correction1 = 1 - beta1**step
        bias_correction2_sqrt = math.sqrt(1 - beta2**step)
        if amsgrad:
            xp.maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
            denom = xp.sqrt(max_exp_avg_sqs[i]) / bias_correction2_sqrt + eps
        else:
            denom = xp.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
        param -= (lr / bias_correction1) * exp_avg / denom


def _adam_rows(p, g, m, v, tmp, gbuf, vmax, *, shrink, weight_decay, maximize, beta1, beta2, eps_c, step_size):
    """One Adam step on matching pieces of the arrays (see ``Adam``); gbuf holds the decayed gradient."""
    if shrink is not None:
        p *= shrink
    if gbuf is not None:
        g = decayed_grad_into(p, g, weight_decay, maximize, gbuf)
    lerp_(m, g, 1 - beta1, tmp)  # the Adam family's moment helpers (_helpers.py)
    second_moment_(v, g, beta2, tmp)
    if vmax is not None:
        v = xp.maximum(vmax, v, out=vmax)
    xp.sqrt(v, out=tmp)
    tmp += eps_c
    xp.divide(m, tmp, out=tmp)
    add_scaled(p, tmp, step_size, tmp)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): ``theta *= 1 - lr * weight_decay``
    before the Adam update, instead of an L2 term in the gradient.

    Same arguments and state as :class:`Adam`, except ``weight_decay`` defaults to 1e-2 and
    ``decoupled_weight_decay`` is always True.
    """

    _forced_options = {"decoupled_weight_decay": True}  # (PyTorch's AdamW loads every state as AdamW's)

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # (PyTorch's: a state dict from before the option is AdamW's all the same)
            group["decoupled_weight_decay"] = True

"""SparseAdam: Adam for sparse gradients (``Embedding(sparse=True)``), updating only the rows they have."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .._backend import xp
from .._kernels import embedding as compiled
from .._parallel import parallel_for
from .._sparse import compiled_rows, update_rows
from .._tensor import Tensor
from ._helpers import check_betas
from .optimizer import Optimizer, check_nonneg


class SparseAdam(Optimizer):
    r"""Lazy Adam: each step changes the moments and the parameter only on the rows ``r`` the (coalesced)
    sparse gradient :math:`g` has; other rows keep their moments undecayed. At step t (from 1)::

        g <- -g                                       if maximize
        m[r] <- beta1 * m[r] + (1 - beta1) * g
        v[r] <- beta2 * v[r] + (1 - beta2) * g^2
        theta[r] <- theta[r] - lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m[r] / (sqrt(v[r]) + eps)

    Args:
        params: parameters or parameter groups to optimize (dense tensors with sparse gradients).
        lr: learning rate (default: 1e-3).
        betas: decay rates of the moment averages (default: (0.9, 0.999)).
        eps: added to the denominator (default: 1e-8).
        maximize: maximize the objective instead of minimizing it (default: False).

    State per parameter, as in PyTorch: ``step`` (a Python int), ``exp_avg``, ``exp_avg_sq`` (dense).
    A dense gradient is PyTorch's RuntimeError.
    """

    _sparse_grads = True

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        check_nonneg(lr=lr, eps=eps)
        check_betas(betas)
        params = list(params)
        flat = [p for g in params for p in (g["params"] if isinstance(g, dict) else [g])]
        sparse = [i for i, p in enumerate(flat) if isinstance(p, Tensor) and p.is_sparse]
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["exp_avg"] = Tensor._make(xp.zeros_like(p))
        state["exp_avg_sq"] = Tensor._make(xp.zeros_like(p))

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")

    def _update_sparse(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        # m[r] += (1 - beta1) * (g - m[r]) is beta1 * m[r] + (1 - beta1) * g; the same for v[r] with g^2
        state["step"] += 1
        t = state["step"]
        beta1, beta2 = group["betas"]
        g = g.coalesce()
        rows, values = tuple(g.indices), (-g.values if group["maximize"] else g.values)
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        step_size = group["lr"] * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        if (len(rows) == 1 and p.ndim == 2 and p.dtype == values.dtype and compiled_rows(values)
                and all(a.flags.c_contiguous for a in (p, m, v))):
            # one pass over each row, the same arithmetic (the same bits), split among the threads by rows
            c = p.dtype.type
            args = (rows[0], values, c(1 - beta1), c(1 - beta2), c(-step_size), c(group["eps"]))
            parallel_for(lambda lo, hi: compiled.sparse_adam_rows(p, m, v, *args, lo, hi), rows[0].size, values.size)
            return
        m_rows = m[rows]
        m_rows += (values - m_rows) * (1 - beta1)
        m[rows] = m_rows
        v_rows = v[rows]
        v_rows += (values * values - v_rows) * (1 - beta2)
        v[rows] = v_rows
        update_rows(p, g, m_rows / (xp.sqrt(v_rows) + group["eps"]), -step_size)

"""Batch normalisation with statistics over every rank of a process group (``nn.SyncBatchNorm`` in training).

Forward: each rank sums its own part of every channel; two all-reduces give the global mean and then the global
biased variance (two passes, as a single process computes them, so 2 ranks x batch B match one process x 2B).
Under create_graph the gradients are recorded without a derivative of their own, as PyTorch's SyncBatchNorm's
(whose backward ops have none): differentiating them again raises PyTorch's error.
Backward: the input gradient needs the means of ``g * w`` and ``g * w * xhat`` over the whole global batch, so their
per-channel sums are all-reduced too (summed, as PyTorch does: each rank's input gradient then includes what
the other ranks' losses contribute through the shared statistics). Weight and bias gradients stay local sums;
DistributedDataParallel averages them like any other parameter's.
"""

from __future__ import annotations

from ..._backend import xp
from ..._creation import from_numpy
from ..._tensor import Tensor
from ...autograd.graph import Node
from ...autograd.no_derivative import gradient_without_derivative
from ...autograd.recorded import is_recorded
from .norm import _update_running


def _all_reduce_sum(array, group):
    """Sum ``array`` over the group (through ember.distributed's checked collective), in place."""
    from ... import distributed

    distributed.all_reduce(from_numpy(array), group=group)
    return array


class SyncBatchNorm(Node):
    def forward(self, x, w, b, eps, group, stats):
        axes = (0, *range(2, x.ndim))
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        local_count = x.size // x.shape[1] if x.shape[1] else 0
        totals = xp.concatenate([x.sum(axis=axes, dtype=xp.float64), [float(local_count)]])
        _all_reduce_sum(totals, group)
        count = totals[-1]
        mean = (totals[:-1] / count).astype(x.dtype).reshape(shape)
        xc = x - mean
        var = _all_reduce_sum((xc * xc).sum(axis=axes, dtype=xp.float64), group) / count
        invstd = (1 / xp.sqrt(var + eps)).astype(x.dtype).reshape(shape)
        stats.extend((mean, var.astype(x.dtype), int(count)))
        xc *= invstd
        out = xc * w.reshape(shape) if w is not None else xc.copy()
        if b is not None:
            out += b.reshape(shape)
        self.saved, self.axes, self.shape, self.count, self.group = (xc, invstd, w), axes, shape, count, group
        return out

    def backward(self, g):
        if is_recorded(g):  # as PyTorch's, whose backward's ops have no derivative: the gradient as plain arrays
            recorded_w = self.saved[2]
            self.saved = tuple(a.t._data if is_recorded(a) else a for a in self.saved)
            grads = self.backward(g.t._data)
            return tuple(None if a is None else
                         gradient_without_derivative(a, "batch_norm_backward_elemt", g, recorded_w) for a in grads)
        xhat, invstd, w = self.saved
        axes, shape = self.axes, self.shape
        gx = gw = gb = None
        gw_local, gb_local = (g * xhat).sum(axis=axes), g.sum(axis=axes)
        if self.needs_input_grad[0]:
            scale = w.reshape(-1) if w is not None else 1
            # sums over the global batch of gxhat = g * w and of gxhat * xhat
            sums = xp.concatenate([gb_local * scale, gw_local * scale]).astype(xp.float64)
            _all_reduce_sum(sums, self.group)
            c = xhat.shape[1]
            m1 = (sums[:c] / self.count).astype(g.dtype).reshape(shape)
            m2 = (sums[c:] / self.count).astype(g.dtype).reshape(shape)
            gxhat = g * w.reshape(shape) if w is not None else g
            gx = invstd * (gxhat - m1 - xhat * m2)
        if self.needs_input_grad[1]:
            gw = gw_local
        if self.needs_input_grad[2]:
            gb = gb_local
        return gx, gw, gb


def sync_batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None,
                    bias: Tensor | None, momentum: float, eps: float, group) -> Tensor:
    """Training-mode batch norm with the batch statistics of every rank in ``group``; updates running stats."""
    stats: list = []
    out = SyncBatchNorm.apply(input, weight, bias, eps=eps, group=group, stats=stats)
    mean, var, count = stats
    if count <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got {count} over all ranks "
                         f"(input size {list(input.shape)} on this rank)")
    if running_mean is not None and running_var is not None:
        _update_running([mean, var], running_mean, running_var, momentum, count)
    return out

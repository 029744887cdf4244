"""What a root FSDP unit (FSDP1 or ``fully_shard``) does around its forward: cast the inputs, and make sure
every unit's gathered parameters are let go when the backward that follows ends."""

from __future__ import annotations

from contextlib import nullcontext

from ..._backend import xp
from ..._dtype import np_kind
from ..._tensor import Tensor
from ...autograd.engine import queue_callback
from ...autograd.grad_mode import _GradState
from ...utils._pytree import tree_flatten, tree_map
from ..reduce_op import ReduceOp


def cast_inputs(dtype, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Floating-point tensors among the arguments cast to ``dtype`` (None: unchanged)."""
    if dtype is None:
        return args, kwargs

    def cast(x):
        return x.to(dtype) if isinstance(x, Tensor) and np_kind(x._data.dtype) == "f" else x

    return tree_map(cast, args), tree_map(cast, kwargs)


class BackwardEnd:
    """Runs ``finish()`` once at the end of each backward through a root's outputs (queued by a hook on them)."""

    def __init__(self, finish) -> None:
        self.finish = finish
        self.queued = False

    def arm(self, output) -> None:
        if not _GradState.enabled:
            return
        for t in tree_flatten(output)[0]:
            if isinstance(t, Tensor) and t.requires_grad:
                t.register_hook(self._hook)

    def _hook(self, grad):
        if not self.queued:
            self.queued = True
            queue_callback(self._run)
        return None

    def _run(self) -> None:
        self.queued = False
        self.finish()


def run_unit(handle, forward, reshard: bool):
    """``forward()`` with the unit's parameters gathered around it (``handle`` None: a unit without any)."""
    if handle is None:
        return forward()
    hooks = handle.pre_forward()
    try:
        with hooks if hooks is not None else nullcontext():
            return forward()
    finally:
        handle.post_forward(reshard)


def clip_grad_norm(handles: list, params: list, max_norm: float, norm_type: float = 2.0) -> Tensor:
    """Scale the gradients of ``handles``' shards and of the other ``params`` so that their global
    ``norm_type``-norm is at most ``max_norm``; returns that norm. Collective over the units' shard group
    (their replicas hold the same shards; parameters outside every unit are whole on each rank)."""
    norm_type = float(norm_type)
    owned = {id(p) for h in handles for p in h.sharded_params()}
    sharded = [p._grad._data for h in handles for p in h.sharded_params() if p._grad is not None]
    local = [p._grad._data for p in params if id(p) not in owned and p._grad is not None]
    infinite = norm_type == float("inf")
    value = xp.array([_norm_power(sharded, norm_type)])
    comm = next((h.shard_comm for h in handles if h.shard_comm is not None), None)
    if comm is not None:
        comm.allreduce_(value, ReduceOp.MAX if infinite else ReduceOp.SUM)
    mine = _norm_power(local, norm_type)
    total = max(float(value[0]), mine) if infinite else (float(value[0]) + mine) ** (1.0 / norm_type)
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1.0:
        for g in sharded + local:
            g *= xp.asarray(coef, dtype=g.dtype)
    dtype = (sharded + local)[0].dtype if sharded + local else xp.float32
    return Tensor._make(xp.asarray(total, dtype=dtype))


def _norm_power(grads: list, norm_type: float) -> float:
    """The largest |g| (infinity norm) or the sum of |g|**norm_type over ``grads``, in float64."""
    if norm_type == float("inf"):
        return max((float(xp.abs(g).max()) for g in grads if g.size), default=0.0)
    return sum(float((xp.abs(g.astype(xp.float64)) ** norm_type).sum()) for g in grads)

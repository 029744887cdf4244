"""``DistributedOptimizer``: one optimizer per worker that owns parameters, stepped with a distributed autograd
context's gradients (``torch.distributed.optim.DistributedOptimizer``).

    opt = DistributedOptimizer(optim.SGD, param_rrefs, lr=0.05)   # param_rrefs: RRefs to parameters anywhere
    with dist_autograd.context() as context_id:
        ...; dist_autograd.backward(context_id, [loss])
        opt.step(context_id)

Each owner of some of the parameters gets a local optimizer over them (``optimizer_class(params, *args,
**kwargs)``, made there by ``rpc.remote``). ``step`` asks every owner, concurrently, to set each parameter's
``.grad`` to its gradient in the context and step; steps from several trainers on one owner take turns (a lock),
as in PyTorch. Parameters the context has no gradient for keep the ``.grad`` they had.
"""

from __future__ import annotations

import threading

from ...futures import wait_all
from .. import autograd as dist_autograd
from ..rpc import RRef, remote, rpc_async


class _LocalOptimizer:
    _lock = threading.Lock()  # one step at a time on a worker (trainers may step concurrently)

    def __init__(self, optimizer_class, local_params_rref: list[RRef], *args, **kwargs) -> None:
        self.optim = optimizer_class([rref.local_value() for rref in local_params_rref], *args, **kwargs)

    def step(self, context_id: int) -> None:
        grads = dist_autograd.get_gradients(context_id)
        with _LocalOptimizer._lock:
            for param, grad in grads.items():
                param.grad = grad
            self.optim.step()


def _step(optimizer_rref: RRef, context_id: int) -> None:
    optimizer_rref.local_value().step(context_id)


class DistributedOptimizer:
    """Optimise parameters spread over workers (``params_rref``: RRefs to them) with ``optimizer_class``."""

    def __init__(self, optimizer_class, params_rref: list[RRef], *args, **kwargs) -> None:
        per_owner: dict = {}
        for rref in params_rref:
            per_owner.setdefault(rref.owner(), []).append(rref)
        self.remote_optimizers = [remote(owner, _LocalOptimizer, args=(optimizer_class, rrefs, *args), kwargs=kwargs)
                                  for owner, rrefs in per_owner.items()]
        for rref in self.remote_optimizers:  # an optimizer that cannot be made fails here, as in PyTorch
            rref._get_future().wait()

    def step(self, context_id: int) -> None:
        """One step of every owner's optimizer with the gradients of ``context_id``; returns when all are done."""
        dist_autograd.get_gradients(context_id)  # an unknown context fails here, before any owner steps
        wait_all([rpc_async(rref.owner(), _step, args=(rref, context_id)) for rref in self.remote_optimizers])

"""``ember.distributed.autograd``: PyTorch's distributed autograd — backward passes across RPC calls.

    with dist_autograd.context() as context_id:
        loss = rpc.rpc_sync("ps", forward, args=(x,)).sum()   # the model's parameters live on "ps"
        dist_autograd.backward(context_id, [loss])            # gradients flow back to "ps"
        opt.step(context_id)                                  # DistributedOptimizer reads them there

Inside a context, RPC records every tensor that requires grad as it crosses workers (``rpc/_grad_context.py``).
``backward`` runs the local graph from the roots, collecting the gradients of leaves in the context (``.grad`` is
not touched, as in PyTorch) and sending those of received tensors back to their senders, which continue from the
tensors they sent, and so on (each arrival runs the local graph from there: PyTorch's "FAST mode", which sums
the same gradients). ``get_gradients(context_id)`` returns this worker's leaves' gradients.

Difference from PyTorch: graphs recorded in a context are kept until the context exits, so ``retain_graph`` is
accepted and a second ``backward`` in the same context works (PyTorch frees the graph unless ``retain_graph``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ..._tensor import Tensor
from ...autograd import _make_roots
from ...autograd.engine import run_backward
from ...autograd.graph import AccumulateGrad
from ...futures import wait_all
from ..rpc import _grad_context, api
from ..rpc._grad_context import DistAutogradContext, RecvRpcBackward


@contextmanager
def context() -> Iterator[int]:
    """A distributed autograd context for the block; yields its id. On exit every worker it reached forgets it."""
    if _grad_context.current_id() is not None:
        raise RuntimeError("Already have an autograd context id for this thread.")
    agent = api.current_agent()
    context_id = _grad_context.new_id(agent.id)
    with _grad_context.entered(context_id):
        try:
            yield context_id
        finally:
            _release(context_id)


def _release(context_id: int) -> None:
    """Forget the context here and tell the workers it reached (each tells its own; done once per worker)."""
    ctx = _grad_context.release(context_id)
    if ctx is None:
        return
    agent = api.current_agent() if api.is_initialized() else None
    if agent is None:
        return
    with _grad_context.entered(None):  # the release messages themselves belong to no context
        for worker in sorted(ctx.workers - {agent.id}):
            api.rpc_async(worker, _release, args=(context_id,))  # shutdown() waits for these


def get_gradients(context_id: int) -> dict[Tensor, Tensor]:
    """{leaf tensor on this worker: its gradient} accumulated by the backward passes of context ``context_id``."""
    ctx = _grad_context.retrieve(context_id)
    with ctx.lock:
        return dict(ctx.grads)


def backward(context_id: int, roots: Sequence[Tensor], retain_graph: bool = False) -> None:
    """Backpropagate from the scalar ``roots`` through this worker's graph and, over RPC, the others'.

    Returns when every worker reached has finished its part (their errors are raised here).
    """
    ctx = _grad_context.retrieve(context_id)
    roots = list(roots)
    for t in roots:
        if not isinstance(t, Tensor):
            raise TypeError(f"dist_autograd.backward: roots must be tensors, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError("requires_grad not set on root")
        if t.numel() != 1:
            raise RuntimeError(f"Tensor of shape {list(t.shape)} is not a scalar, all roots need to be scalar")
    _run(ctx, roots, None)


def _run(ctx: DistAutogradContext, roots: list[Tensor], grads) -> None:
    """This worker's part: the local graph from ``roots``, then the received tensors' gradients to their senders."""
    edges = _ends(roots)
    captured = run_backward(_make_roots(roots, grads), retain_graph=True, capture=set(edges), accumulate=False)
    onward = []
    for edge in edges:
        grad = captured.get(edge)
        if grad is None:
            continue
        node = edge[0]
        if type(node) is RecvRpcBackward:
            onward.append((node.sender, node.send_id, Tensor._make(grad)))
        elif (leaf := node.variable) is not None:
            ctx.accumulate(leaf, grad)
    with _grad_context.entered(None):
        futures = [api.rpc_async(sender, _continue, args=(ctx.id, send_id, grad))
                   for sender, send_id, grad in onward]
    wait_all(futures)


def _ends(roots: list[Tensor]) -> list[tuple]:
    """The edges where the local graph below ``roots`` ends: leaf accumulators and ``RecvRpcBackward`` nodes."""
    seen, stack, ends = set(), [], []
    for t in roots:
        edge = t._edge()
        if edge is not None and edge[0] not in seen:
            seen.add(edge[0])
            stack.append(edge[0])
    while stack:
        node = stack.pop()
        if type(node) is AccumulateGrad or type(node) is RecvRpcBackward:
            ends.append((node, 0))
            continue
        for edge in node.next_edges:
            if edge is not None and edge[0] not in seen:
                seen.add(edge[0])
                stack.append(edge[0])
    return ends


def _continue(context_id: int, send_id: int, grad: Tensor) -> None:
    """On the worker that sent tensor ``send_id``: the backward pass arrives with its gradient."""
    ctx = _grad_context.retrieve(context_id)
    with ctx.lock:
        tensor = ctx.sends[send_id]
    _run(ctx, [tensor], [grad])


__all__ = ["backward", "context", "get_gradients"]


from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks

"""The backward engine: walk the graph from the roots to the leaves.

    1. count, for every node reachable from the roots, how many edges point at it
    2. run ready nodes highest sequence number first (the reverse of the order
       forward created them; leaf accumulators first of all, so gradients land
       as early as possible), summing each gradient down to its input's shape
    3. free each node's saved arrays once it has run (unless retain_graph)
    4. when the queue is empty, run the callbacks queued during this backward

Iterative and deterministic: the same graph runs its nodes, and so fires its
hooks, in the same order in every process — what data-parallel training needs.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

from .._backend import xp
from .._tensor import Tensor
from .. import _trace as trace
from .grad_mode import _GradState
from .graph import AccumulateGrad, Node, add_to_grad

# One entry per backward in progress (backward may run inside a hook).
_callback_stack: list[list[Callable[[], None]]] = []


def queue_callback(callback: Callable[[], None]) -> None:
    """Run ``callback()`` once, when the backward that is running now finishes."""
    if not _callback_stack:
        raise RuntimeError("queue_callback can only be called while a backward pass is running")
    _callback_stack[-1].append(callback)


def sum_to_shape(grad, shape: tuple):
    """Sum a broadcast gradient back down to ``shape`` (the one place ops un-broadcast)."""
    if grad.shape == shape:
        return grad
    if grad.ndim < len(shape) or any(g < n for g, n in zip(grad.shape[grad.ndim - len(shape):], shape)):
        grad = xp.broadcast_to(grad, xp.broadcast_shapes(grad.shape, shape))
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and grad.shape[i + lead] != 1
    )
    out = grad.sum(axis=axes, keepdims=True) if axes else grad
    return out.reshape(shape)


def _count_dependencies(roots: list[Node]) -> dict[Node, int]:
    deps: dict[Node, int] = {}
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for edge in node.next_edges:
            if edge is None:
                continue
            child = edge[0]
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return deps


def _call_pre_hooks(node: Node, grads: list) -> None:
    for nr, hooks in node._pre_hooks.items():
        for hook in tuple(hooks):
            if grads[nr] is None:
                continue
            replaced = hook(Tensor._make(grads[nr]))
            if replaced is not None:
                grads[nr] = replaced._data


def _retain_grads(node: Node, grads: list) -> None:
    for nr, ref in node._retained.items():
        tensor = ref()
        if tensor is not None and grads[nr] is not None:
            add_to_grad(tensor, grads[nr])


def run_backward(roots: list[tuple[tuple[Node, int], object]], retain_graph: bool,
                 capture: dict | None = None, accumulate: bool = True) -> dict:
    """Backpropagate ``grad`` from each ``(edge, grad)`` root.

    ``capture`` maps edges whose incoming gradient should be returned (autograd.grad).
    With ``accumulate=False`` leaf accumulators are not run (nothing is written to .grad).
    Returns {edge: gradient} for the captured edges.
    """
    buffers: dict[Node, list] = {}
    for (node, nr), grad in roots:
        buf = buffers.setdefault(node, [None] * node.num_outputs)
        buf[nr] = grad if buf[nr] is None else buf[nr] + grad
    root_nodes = list(buffers)
    deps = _count_dependencies(root_nodes)
    order = itertools.count()  # tie-break for equal priorities, so the order stays deterministic
    ready = [(-n.seq, next(order), n) for n in root_nodes if deps.get(n, 0) == 0]
    heapq.heapify(ready)
    captured: dict = {}
    callbacks: list[Callable[[], None]] = []
    _callback_stack.append(callbacks)
    prev_grad_mode = _GradState.enabled
    _GradState.enabled = False  # backward math is never recorded (no create_graph)
    started = trace.start()
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            grads = buffers.pop(node)
            if node._pre_hooks:
                _call_pre_hooks(node, grads)
            if node._retained:
                _retain_grads(node, grads)
            if capture is not None:
                for nr, g in enumerate(grads):
                    if (node, nr) in capture:
                        captured[(node, nr)] = g
                if type(node) is AccumulateGrad and not accumulate:
                    continue
            node.check_saved_versions()
            node_started = None if started is None else trace.start()  # a span per node only while recording
            if node.num_outputs == 1:
                input_grads = node.backward(grads[0])
            else:
                input_grads = node.backward(*grads)
            if node_started is not None:
                trace.finish(node.name(), "backward", node_started)
            if _GradState.anomaly:
                from .anomaly import check_grads

                check_grads(node, input_grads)
            if not retain_graph:
                node.release()
            for edge, shape, g in zip(node.next_edges, node.input_shapes, input_grads):
                if edge is None:
                    continue
                child, nr = edge
                if g is not None:
                    if g.shape != shape:
                        g = sum_to_shape(g, shape)
                    buf = buffers.get(child)
                    if buf is None:
                        buf = buffers[child] = [None] * child.num_outputs
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                remaining = deps[child] - 1
                deps[child] = remaining
                if remaining == 0 and child in buffers:
                    heapq.heappush(ready, (-child.seq, next(order), child))
                elif remaining == 0:
                    _skip_subgraph(child, deps, buffers, ready, order)
        _GradState.enabled = prev_grad_mode
        trace.finish("backward", "autograd", started)
        while callbacks:
            callbacks.pop(0)()
    finally:
        _GradState.enabled = prev_grad_mode
        _callback_stack.pop()
    return captured


def _skip_subgraph(node: Node, deps: dict, buffers: dict, ready: list, order) -> None:
    """A node all of whose gradients were None: release its dependents' counts without running it."""
    stack = [node]
    while stack:
        n = stack.pop()
        for edge in n.next_edges:
            if edge is None:
                continue
            child = edge[0]
            deps[child] -= 1
            if deps[child] == 0:
                if child in buffers:
                    heapq.heappush(ready, (-child.seq, next(order), child))
                else:
                    stack.append(child)

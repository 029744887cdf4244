"""One backward pass over a whole batch of cotangents, as PyTorch's ``vmap`` of a vector-Jacobian product.

``jacrev``, the reverse-mode ``torch.autograd.functional.jacobian``/``hessian`` with ``vectorize=True`` and
``autograd.grad(..., is_grads_batched=True)`` need one vector-Jacobian product per cotangent (``n`` of them for a
Jacobian of ``n`` output elements: the standard basis). ``batched_vjp`` gets them all from one walk of the graph:
the walk runs under ``vmap`` over the cotangents, each node's backward formula running as ember ops
(``autograd/recorded.py``, the formulas ``create_graph`` records) on the batched cotangent, so every op of every
formula runs once, through its batching rule, on all ``n`` cotangents at once. The formulas are recorded (grad
mode on) only where the results must stay differentiable (``create_graph``) or carry forward-mode tangents.

Where that cannot apply (a formula step without a recorded counterpart, an ember path without a batching rule, a
formula that needs a cotangent's value as a Python object, a formula op without a batching rule), ``batched_vjp``
returns None and the callers compute the products one cotangent at a time, as before, without a warning.

Hooks (tensor and node hooks, retained gradients) run once, on the batch, as PyTorch's: where the graph has any,
a first walk runs the formulas alone, so that a walk that cannot run batched has run no hook before the callers'
walks one cotangent at a time run them (once per cotangent, never once more); where it can, a second walk runs
them with the formulas.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from .._tensor import Tensor
from ..autograd import engine, forward_ad
from ..autograd.graph import Node
from ..autograd.recorded import HigherOrderError, RecordedArray
from ._basis import Unbatched
from ._batched import BatchedTensor, NoBatchingRule, PerExampleValue, _State
from ._vmap import internal_vmap as vmap


def applies(outputs: Sequence[Tensor], inputs: Sequence[Tensor], seeds: Sequence[Tensor]) -> bool:
    """Whether ``batched_vjp`` may run: plain tensors (under an enclosing vmap the caller has unwrapped them),
    outputs that require grad, and each seed a batch of cotangents shaped as its output."""
    if any(type(t) is BatchedTensor for t in (*outputs, *inputs, *seeds)):
        return False
    return len(seeds) == len(outputs) and all(
        o.requires_grad and s.dim() == o.dim() + 1 and s.shape[1:] == o.shape for o, s in zip(outputs, seeds))


def batched_vjp(outputs: Sequence[Tensor], inputs: Sequence[Tensor], seeds: Sequence[Tensor], retain_graph: bool,
                create_graph: bool) -> list[Tensor | None] | None:
    """The vector-Jacobian products of ``outputs`` with respect to ``inputs`` for ``seeds[i]`` (``(n,
    *outputs[i].shape)``, a batch of ``n`` cotangents of output ``i``) from one backward walk (see the module
    docstring): per input a tensor ``(n, *input.shape)``, None for an input no output reaches. None where the walk
    cannot run batched (the graph is then kept, whatever ``retain_graph``, for the caller's walks one cotangent at
    a time). Check ``applies`` first."""
    tangents_only = not create_graph and forward_ad.has_tangent(*outputs)
    edges = [t._edge() for t in inputs]
    found: list[int] = []
    ran: list[Node] = []

    def body(hooks, *cotangents):
        found.clear()
        ran.clear()
        level = len(_State.levels)
        # A formula op without a batching rule sends the whole walk back to one pass per cotangent, silently, as
        # before: looping that op would warn of vmap's fallback where PyTorch has a rule (index_put, scatter).
        _State.levels[level - 1].no_loop = True
        roots = [(o._edge(), RecordedArray(c)) for o, c in zip(outputs, cotangents)]
        try:
            captured = engine.run_backward(roots, True, capture=set(edges), accumulate=False, create_graph=True,
                                           grad_mode=create_graph or tangents_only, ran=ran, hooks=hooks)
        except (NoBatchingRule, HigherOrderError, PerExampleValue) as missing:
            if isinstance(missing, NoBatchingRule) and missing.level != level:
                raise  # an enclosing vmap's batch: that vmap's fallback
            raise Unbatched from missing
        grads = [captured.get(edge) for edge in edges]
        found.extend(i for i, g in enumerate(grads) if g is not None)
        return [g.t if type(g) is RecordedArray else Tensor._make(g) for g in grads if g is not None]

    try:
        if engine.has_hooks([o._edge()[0] for o in outputs]):
            vmap(functools.partial(body, False))(*seeds)  # the trial: may it run batched?
        results = vmap(functools.partial(body, True))(*seeds)
    except Unbatched:
        return None
    if not retain_graph:  # free what the walk ran, as a walk without retain_graph would have (no more: a branch
        for node in ran:  # to other inputs, the graph below an input, stay for a later backward, as in PyTorch)
            node.release()
    grads: list[Tensor | None] = [None] * len(inputs)
    for i, g in zip(found, results):
        grads[i] = forward_ad.detached(g) if tangents_only else g
    return grads


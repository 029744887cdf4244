"""Gradients inside vmap: what ``torch.func.grad`` composed with ``vmap`` (per-example gradients) needs.

ember's backward runs on whole arrays, not through vmap's rules, so ``vmap(grad(f))`` gets per-example gradients
this way: the tensors ``grad`` differentiates with respect to become leaves batched at every active vmap level
(``grad_leaf``: an unbatched parameter is expanded to the batch, a view), so each example's function has its own
parameters, as it has in PyTorch; the batched computation is recorded like any other; ``autograd_grad``
differentiates the batch of outputs (one seed per example) with respect to those batched leaves, and each
example's gradient is its own slice.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import autograd
from .._backend import xp
from .._tensor import Tensor
from ..autograd import forward_ad
from ._batched import BatchedTensor, _State, visible_levels, wrap


def _unwrap_all(t: Tensor) -> tuple[Tensor, list[int]]:
    """The plain tensor under ``t``'s wrappers and the levels it is batched at (its leading dims, lowest first)."""
    levels = []
    while type(t) is BatchedTensor:
        levels.append(t._level)
        t = t._value
    return t, levels[::-1]


def _rewrap(core: Tensor, levels: list[int]) -> Tensor:
    for level in levels:
        core = wrap(core, level)
    return core


def grad_leaf(t: Tensor, connected: bool = False) -> Tensor:
    """A new leaf that requires grad, standing for ``t`` in a function being differentiated: inside vmap, batched at
    every active level (an unbatched ``t`` expanded to the batch without a copy), so that each example's gradient is
    its own. Outside vmap: ``t.detach().requires_grad_()``. ``connected``: a ``t`` that requires grad stays in its
    graph (the expansion recorded) rather than being detached."""
    core, levels = _unwrap_all(t)
    active = visible_levels()

    def batched(array):
        for position, level in enumerate(active):
            if level not in levels:
                size = _State.levels[level - 1].size
                array = xp.broadcast_to(xp.expand_dims(array, position), array.shape[:position] + (size,) +
                                        array.shape[position:])
        return array

    if connected and core.requires_grad:
        # a tensor of the caller's graph (grad's argument, requiring grad outside the transforms): the stand-in is
        # its expansion, recorded, so that the gradient, taken with create_graph, stays a function of it (MAML's
        # meta-gradient through vmap(grad(f))), as outside vmap (Scope.differentiable: a view, so that a use of
        # the caller's tensor itself in f is not this argument)
        leaf = core.view_as(core)
        for position, level in enumerate(active):
            if level not in levels:
                leaf = leaf.unsqueeze(position).expand(
                    *leaf.shape[:position], _State.levels[level - 1].size, *leaf.shape[position:])
        return _rewrap(leaf, active)
    leaf = Tensor._make(batched(core.detach()._data))
    leaf.requires_grad_()
    forward_ad.carry_tangent(core, leaf, batched)  # (forward-over-reverse under vmap: jacfwd(grad(f)))
    return _rewrap(leaf, active)


def autograd_grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor], grad_outputs=None,
                  retain_graph: bool | None = None, create_graph: bool = False,
                  allow_unused: bool | None = None, is_grads_batched: bool = False) -> tuple:
    """``torch.autograd.grad`` of possibly batched outputs with respect to possibly batched inputs (leaves made by
    ``grad_leaf``): per example, as PyTorch computes it inside vmap. Implicit seeds need each example's output to
    be a scalar, as PyTorch's. ``is_grads_batched``: ``grad_outputs`` (plain tensors) hold a batch of cotangents
    along their first dim, the same for every example (``jacrev`` inside vmap)."""
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if is_grads_batched:
        return _cotangent_batch(outputs, inputs, list(grad_outputs), retain_graph, create_graph, allow_unused)
    roots, seeds = [], []
    given = [None] * len(outputs) if grad_outputs is None else \
        ([grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs))
    seed_levels = {tuple(_unwrap_all(g)[1]) for g in given if g is not None}
    if all(not _unwrap_all(t)[1] for t in (*outputs, *inputs)) and seed_levels - {()}:
        return _batch_of_seeds(outputs, inputs, given, max(seed_levels, key=len), retain_graph, allow_unused)
    for out, seed in zip(outputs, given):
        core, levels = _unwrap_all(out)
        if seed is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            seed = Tensor._make(xp.ones(core._data.shape, dtype=core._data.dtype))
        else:
            seed_core, seed_levels = _unwrap_all(seed)
            seed = seed_core if seed_levels == levels else Tensor._make(
                xp.array(xp.broadcast_to(seed_core._data, core._data.shape)))
        roots.append(core)
        seeds.append(seed)
    cores = [_unwrap_all(t) for t in inputs]
    grads = autograd.grad(roots, [c for c, _ in cores], grad_outputs=seeds, retain_graph=retain_graph,
                          create_graph=create_graph, allow_unused=allow_unused)
    return tuple(None if g is None else _rewrap(g, levels) for g, (_, levels) in zip(grads, cores))


def _batch_of_seeds(outputs, inputs, given, levels, retain_graph, allow_unused) -> tuple:
    """Vector-Jacobian products of plain outputs for a batch of seeds (``vjp`` under vmap, a Jacobian's rows):
    autograd.grad with ``is_grads_batched``, the seeds' vmap levels flattened into its one batch dim."""
    lead = tuple(_State.levels[level - 1].size for level in levels)
    flat = []
    for out, seed in zip(outputs, given):
        core, seed_levels = _unwrap_all(seed if seed is not None else Tensor._make(xp.ones(out._data.shape,
                                                                                            out._data.dtype)))
        if tuple(seed_levels) != tuple(levels):
            core = Tensor._make(xp.broadcast_to(core._data, lead + tuple(out._data.shape)))
        flat.append(core.reshape(-1, *out._data.shape))
    grads = autograd.grad(outputs, inputs, grad_outputs=flat, retain_graph=retain_graph, allow_unused=allow_unused,
                          is_grads_batched=True)
    return tuple(None if g is None else _rewrap(g.reshape(*lead, *g.shape[1:]), list(levels)) for g in grads)


def _cotangent_batch(outputs, inputs, seeds, retain_graph, create_graph, allow_unused) -> tuple:
    """``autograd_grad`` with ``is_grads_batched``: each seed ``(n, *output.shape)`` broadcast over the output's vmap
    levels, one ``autograd.grad(is_grads_batched=True)`` of the plain tensors under the wrappers, and each
    gradient's batch of ``n`` put after its levels (logically ``(n, *input.shape)``). Seeds batched at vmap levels
    themselves go one cotangent at a time."""
    from .. import stack

    if any(_unwrap_all(s)[1] for s in seeds):
        rows = [autograd_grad(outputs, inputs, [s[k] for s in seeds], retain_graph=True, create_graph=create_graph,
                              allow_unused=allow_unused) for k in range(seeds[0].shape[0])]
        return tuple(None if any(g is None for g in per_input) else stack(per_input) for per_input in zip(*rows))
    roots, broadcast = [], []
    for out, seed in zip(outputs, seeds):
        core, levels = _unwrap_all(out)
        lead = len(core.shape) - out.dim()
        roots.append(core)
        broadcast.append(seed.reshape(seed.shape[0], *[1] * lead, *seed.shape[1:]).expand(seed.shape[0], *core.shape))
    cores = [_unwrap_all(t) for t in inputs]
    grads = autograd.grad(roots, [c for c, _ in cores], grad_outputs=broadcast, retain_graph=retain_graph,
                          create_graph=create_graph, allow_unused=allow_unused, is_grads_batched=True)
    return tuple(None if g is None else _rewrap(g.movedim(0, len(levels)), levels)
                 for g, (_, levels) in zip(grads, cores))

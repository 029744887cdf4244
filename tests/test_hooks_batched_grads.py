"""Hooks under ``autograd.grad(..., is_grads_batched=True)``: each hook runs once, on the batch of gradients, as
PyTorch's (its engine runs one backward under vmap). ember first walks the graph without hooks to learn whether the
batch can run at once (``func/_batched_vjp.py``): no hook may run in that trial, the hooks of a leaf given to
autograd.grad included (they are applied where the leaf's gradient is captured)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def _hooked(m, kind: str, calls: list):
    """x, w -> y through h = x * w, with the hooks of ``kind`` (each noting its calls, some changing the gradient)."""
    x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
    w = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
    h = x * w
    y = h.sum(0, keepdim=True) * h
    if "leaf" in kind:  # a leaf given to autograd.grad: its hook's result is the gradient returned
        x.register_hook(lambda g: calls.append(("x", tuple(g.shape))) or g * 2)
    if "leaf, None" in kind:
        w.register_hook(lambda g: calls.append(("w", tuple(g.shape))))
    if "tensor" in kind:
        h.register_hook(lambda g: calls.append(("h", tuple(g.shape))) or g * 3)
    if "pre" in kind:
        h.grad_fn.register_prehook(lambda go: calls.append(("pre", tuple(go[0].shape))) or (go[0] - 1,))
    if "post" in kind:
        h.grad_fn.register_hook(lambda gi, go: calls.append(("post", tuple(gi[0].shape), tuple(go[0].shape))))
    return x, w, y


KINDS = ["leaf", "leaf, None", "tensor", "pre", "post", "leaf, tensor, pre and post"]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_each_hook_runs_once_on_the_batch_as_pytorchs(kind, create_graph):
    out = {}
    for m in (torch, ember):
        calls: list = []
        x, w, y = _hooked(m, kind, calls)
        grads = m.autograd.grad(y, [x, w], grad_outputs=m.eye(3, dtype=m.float64), is_grads_batched=True,
                                create_graph=create_graph)
        out[m] = calls, [g.detach().numpy().copy() for g in grads], x.grad, w.grad
    (t_calls, t_grads, *t_leaf), (e_calls, e_grads, *e_leaf) = out[torch], out[ember]
    assert e_calls == t_calls
    for e, t in zip(e_grads, t_grads):
        np.testing.assert_allclose(e, t, rtol=1e-12)
    assert e_leaf == t_leaf == [None, None]  # autograd.grad leaves .grad alone



class _ReadsItsGradient(ember.autograd.Function):
    """A backward that reads its gradient's values through NumPy: no batching rule, so the batched walk stops there."""

    @staticmethod
    def forward(ctx, t):
        return t * 2

    @staticmethod
    def backward(ctx, g):
        return ember.tensor(np.asarray(g.numpy()) * 2)


def test_a_walk_that_cannot_run_batched_runs_each_hook_once_per_cotangent():
    """Where the batch cannot run at once, ember walks the graph one cotangent at a time: the trial without hooks
    (``engine.has_hooks`` says there are some) found that out, so no hook saw a batched walk that was abandoned."""
    x = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64, requires_grad=True)
    h = _ReadsItsGradient.apply(x)
    y = h * h
    calls: list = []
    h.register_hook(lambda g: calls.append(("h", tuple(g.shape))))
    y.grad_fn.register_prehook(lambda go: calls.append(("pre", tuple(go[0].shape))))
    g, = ember.autograd.grad(y, x, grad_outputs=ember.eye(3, dtype=ember.float64), is_grads_batched=True)
    assert calls == [("pre", (3,)), ("h", (3,))] * 3
    np.testing.assert_array_equal(g.numpy(), np.diag([8.0, 16.0, 24.0]))

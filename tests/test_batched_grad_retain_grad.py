"""``retain_grad()`` on a tensor of the graph that ``autograd.grad(..., is_grads_batched=True)`` runs: as PyTorch,
the batched gradient succeeds, and the retained ``.grad`` is the vmap's per-example stand-in, left behind when the
vmap ended (PyTorch's a dead batched wrapper): of the per-example shape, its values unreadable (a RuntimeError)."""

import pytest
import torch

import ember


@pytest.mark.parametrize("read", ["tolist", "numpy", "sum item"])
def test_retained_grad_under_is_grads_batched(read):
    outcomes = []
    for lib in (torch, ember):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        (gx,) = lib.autograd.grad((y * y).sum(), x, lib.tensor([1.0, 2.0]), is_grads_batched=True)
        retained = y.grad
        with pytest.raises(RuntimeError):
            {"tolist": retained.tolist, "numpy": retained.numpy, "sum item": retained.sum().item}[read]()
        outcomes.append((gx.tolist(), tuple(retained.shape), retained.requires_grad))
    assert outcomes[1] == outcomes[0] == ([[8.0] * 3, [16.0] * 3], (3,), False)

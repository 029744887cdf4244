"""The 0-"norm" (a count of non-zeros) has no gradient in PyTorch: its node's formula gives none (x.grad stays None,
autograd.grad calls the input unused), and dist's formula negating that for its second input is PyTorch's error."""

from __future__ import annotations

import pytest
import torch
from oracle import outcomes

import ember


def _grad_of(m, make):
    x = m.tensor([0.0, 1.5, -2.0], requires_grad=True)
    make(m, x).backward()
    return x.grad


@pytest.mark.parametrize("make", [
    lambda m, x: m.norm(x, p=0),
    lambda m, x: m.linalg.vector_norm(x * 2, 0),
    lambda m, x: m.norm(x.reshape(3, 1), p=0, dim=0).sum(),
    lambda m, x: m.dist(x, m.ones(3), p=0),
])
def test_zero_norm_leaves_no_gradient(make):
    assert _grad_of(ember, make) is None and _grad_of(torch, make) is None


def test_zero_norm_unused_in_autograd_grad_as_pytorch():
    def fn(m):
        x = m.tensor([0.0, 1.5, -2.0], requires_grad=True)
        return m.autograd.grad(m.norm(x, p=0), x, allow_unused=True)[0]

    (got, _), (want, _) = outcomes(fn)
    assert got is None and want is None


def test_zero_dist_of_two_inputs_needing_gradients_is_pytorchs_error():
    def fn(m):
        x = m.tensor([0.0, 1.5, -2.0], requires_grad=True)
        m.dist(x, m.ones(3, requires_grad=True), p=0).backward()

    (got, _), (want, _) = outcomes(fn)
    assert (type(got), str(got)) == (type(want), str(want))


@pytest.mark.parametrize("make", [
    lambda m, a, b: m.cdist(a, b, p=0).sum(),
    lambda m, a, b: m.nn.functional.pdist(a, p=0).sum(),
])
def test_zero_distance_functions_give_zero_gradients_as_pytorch(make):
    # (cdist's and pdist's own formulas: zeros, where the 0-norm's gives none)
    grads = []
    for m in (ember, torch):
        a = m.tensor([[0.0, 1.5, -2.0], [1.0, 1.5, 0.0]], requires_grad=True)
        b = m.tensor([[2.0, 0.0, -2.0]], requires_grad=True)
        make(m, a, b).backward()
        grads.append([None if t.grad is None else t.grad.tolist() for t in (a, b)])
    assert grads[0] == grads[1]

"""binary_cross_entropy's higher derivatives as PyTorch's: its double-backward formulas, not the derivative of the
clamped gradient (x - t) / max(x (1 - x), 1e-12): in the input (x^2 - 2 x t + t) / ((x + eps)^2 (1 - x + eps)^2),
0 at x = t = 0 and x = t = 1, where the clamp's derivative is 1e12; the target's gradient -logit(x) differentiated
as logit (infinite at 0 and 1). Values, weights, reductions, the target's derivatives and a third order."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

X = [0.0, 1.0, 0.0, 1.0, 0.3, 0.7, 1e-7, 0.5]
T = [0.0, 1.0, 1.0, 0.0, 0.2, 1.0, 0.0, 0.5]


def _derivatives(m, dtype, reduction, weighted, target_grad):
    d = getattr(m, dtype)
    x = m.tensor(X, dtype=d, requires_grad=True)
    t = m.tensor(T, dtype=d, requires_grad=target_grad)
    w = m.tensor([1.0, 2.0, 0.5, 1.5, 1.0, 3.0, 1.0, 2.0], dtype=d) if weighted else None
    wrt = [x, t] if target_grad else [x]
    y = m.nn.functional.binary_cross_entropy(x, t, weight=w, reduction=reduction)
    grads = m.autograd.grad(y, wrt, m.ones_like(y) * 0.75, create_graph=True)
    v = m.tensor(np.linspace(-1.0, 1.0, len(X)), dtype=d)
    second = m.autograd.grad(sum((g * v).sum() for g in grads), wrt, create_graph=True)
    third = m.autograd.grad(second[0].sum(), x)[0]
    return [g.detach().double().numpy() for g in (*grads, *second, third)]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("target_grad", [False, True])
def test_bce_higher_derivatives_at_0_and_1_as_pytorch(reduction, weighted, target_grad):
    ours, theirs = (_derivatives(m, "float64", reduction, weighted, target_grad) for m in (ember, torch))
    for what, a, b in zip(("gradient", "second order", "second order", "third order"), ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-12, equal_nan=True, err_msg=what)


def test_bce_second_derivative_in_float32_as_pytorch():
    ours, theirs = (_derivatives(m, "float32", "mean", True, True)[:-1] for m in (ember, torch))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)

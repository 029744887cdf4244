"""Losses of a single element: the mean's divisor is 1 (a 0-d or one-element loss), in every precision. The
binary cross-entropies of half-precision inputs round their gradient to the input's precision before dividing by
the element count, as PyTorch's kernels do; with one element that count is 1."""

from __future__ import annotations

import pytest
import torch

import ember


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("loss", ["binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss",
                                  "smooth_l1_loss"])
def test_a_one_element_loss_has_pytorchs_gradient(loss, dtype, reduction, shape):
    grads = []
    for m in (torch, ember):
        x = m.full(shape, 0.3, dtype=getattr(m, dtype), requires_grad=True)
        t = m.full(shape, 0.7, dtype=getattr(m, dtype))
        out = getattr(m.nn.functional, loss)(x, t, reduction=reduction)
        out.backward()
        grads.append((out.dtype, tuple(x.grad.shape), x.grad.float().reshape(-1).tolist()))
    assert str(grads[1][0]).split(".")[-1] == str(grads[0][0]).split(".")[-1]
    assert grads[1][1:] == grads[0][1:]

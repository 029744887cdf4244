"""A unary op on a plain float32/float64 tensor (graph.apply_one's common case) allocates its result once: the
tensor holds the array the op's forward computed, not a copy of it (a copy doubles the op's peak memory and
time), and the values, strides and gradient are PyTorch's."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch

import ember

N = 1 << 20  # 4 MiB of float32


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["exp", "neg", "abs", "sqrt"])
def test_a_unary_result_is_allocated_once(op, dtype, requires_grad):
    x = ember.rand(N, dtype=getattr(ember, dtype), requires_grad=requires_grad)
    getattr(x, op)()  # (first call: any lazily built kernel or cache outside the measurement)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        y = getattr(x, op)()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    result = y.numel() * y.element_size()
    assert peak < 1.5 * result, f"{op}: peak {peak} bytes for a {result}-byte result"
    t = torch.tensor(x.detach().numpy(), requires_grad=requires_grad)
    expected = getattr(t, op)()
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    assert y.stride() == expected.stride()
    if requires_grad:
        y.sum().backward()
        expected.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5)

"""float16/bfloat16 ``prod`` multiplies in the half dtype, as PyTorch's CPU kernel: a partial product beyond float16's
range is inf (a float32 running product, rounded at the end, gave a finite value), over all elements, a dim, with
keepdim, with ``dtype=``; an empty product is 1."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

VALUES = [[300.0, -300.0, 1e-3], [300.0, 1e-3, 300.0], [200.0, 200.0, 2.0, 1e-3], [1e-5, 1e-5, 3.0], [0.5, 2.5, 7.0]]
CALLS = {
    "all": lambda m, x, d: x.to(d).prod(),
    "dtype=": lambda m, x, d: x.prod(dtype=d),
    "dim": lambda m, x, d: m.stack([x, x.flip(0)]).to(d).prod(1),
    "dim keepdim": lambda m, x, d: m.stack([x, x.flip(0)]).to(d).prod(1, keepdim=True),
    "dim 0": lambda m, x, d: m.stack([x, x.flip(0)]).t().to(d).prod(0, dtype=d),
    "empty": lambda m, x, d: x[:0].to(d).prod(),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("values", range(len(VALUES)))
def test_half_prod_as_pytorch(values, call, dtype):
    got, want = (CALLS[call](m, m.tensor(VALUES[values]), getattr(m, dtype)) for m in (ember, torch))
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1] and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(np.asarray(got.float().tolist()), np.asarray(want.float().tolist()))


def test_half_prod_gradient_unchanged():
    x = [0.5, 2.5, 7.0]
    e = ember.tensor(x, dtype=ember.float16, requires_grad=True)
    t = torch.tensor(x, dtype=torch.float16, requires_grad=True)
    e.prod().backward()
    t.prod().backward()
    np.testing.assert_allclose(e.grad.float().tolist(), t.grad.float().tolist(), rtol=1e-3)

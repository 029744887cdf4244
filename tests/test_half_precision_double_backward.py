"""Ops that compute half-precision (float16, bfloat16) inputs in float32, as PyTorch's CPU kernels (lowp.py),
differentiated twice: their recorded gradients cast the gradients and saved inputs up and the results back, as
PyTorch's differentiates them (it raised HigherOrderError); the values are PyTorch's to half precision."""

import numpy as np
import pytest
import torch

import ember

OPS = {
    "var_mean": lambda m, x: m.var_mean(x, 1), "std_mean": lambda m, x: m.std_mean(x, 1),
    "var": lambda m, x: (m.var(x, 1),), "std": lambda m, x: (m.std(x, 0),), "sum": lambda m, x: (x * x,),
    "mean": lambda m, x: (m.mean(x * x, 1),), "cross_entropy": lambda m, x: (m.nn.functional.cross_entropy(x, m.tensor([0, 2])),),
    "layer_norm": lambda m, x: (m.nn.functional.layer_norm(x, (3,)) * x,), "var_mean 0-d": lambda m, x: m.var_mean(x[0, 1:]),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", list(OPS))
def test_twice_differentiated_as_pytorch(op, dtype):
    got = []
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0], [1.5, 2.5, -0.3]], dtype=getattr(m, dtype), requires_grad=True)
        outs = OPS[op](m, x)
        loss = sum((o * o).sum() for o in outs)
        (g,) = m.autograd.grad(loss, x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        assert g.dtype == x.dtype and gg.dtype == x.dtype
        got.append((g.detach().float().numpy(), gg.float().numpy()))
    for e, t in zip(got[1], got[0]):
        np.testing.assert_allclose(e, t, rtol=3e-2, atol=3e-2 * np.abs(t).max())

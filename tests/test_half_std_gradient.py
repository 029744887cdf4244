"""The gradient of ``std`` (and ``std_mean``'s deviation) of a float16 or bfloat16 input reads the standard deviation as PyTorch saves it: the result
rounded to the half type. ember computes the gradient in float32 and rounds it once; PyTorch rounds after each op
of its formula, so the two differ in the last bit of some elements, and the test compares ember's gradient with the
formula ``g (x - mean) / ((n - correction) std)`` computed in float64 from PyTorch's own half result, rounded once:
equal bit for bit. A gradient that read the unrounded float32 deviation differs in about a fifth of the elements."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

CASES = {  # name -> (shape, dim, correction, keepdim)
    "rows": ((8, 256), 1, 1, False),
    "rows_keepdim": ((8, 256), 1, 1, True),
    "columns_population": ((128, 6), 0, 0, False),
    "all": ((16, 40), None, 1, False),
    "two_dims": ((6, 20, 9), (0, 2), 2, False),
}


def _std(m, op, x, **kw):
    """``std`` or ``std_mean``'s deviation (one node: its gradient reads the same rounded result)."""
    return m.std(x, **kw) if op == "std" else m.std_mean(x, **kw)[0]


@pytest.mark.parametrize("op", ["std", "std_mean"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", list(CASES))
def test_half_std_gradient_reads_the_rounded_result(case, dtype, op):
    shape, dim, correction, keepdim = CASES[case]
    x = np.random.default_rng(3).standard_normal(shape) * 3 + 1
    xt = torch.tensor(x).to(getattr(torch, dtype))
    want = _std(torch, op, xt, dim=dim, correction=correction, keepdim=keepdim)
    g = torch.linspace(0.5, 1.5, want.numel(), dtype=torch.float64).reshape(want.shape)

    xe = ember.tensor(xt.float().numpy()).to(getattr(ember, dtype)).requires_grad_()
    got = _std(ember, op, xe, dim=dim, correction=correction, keepdim=keepdim)
    np.testing.assert_array_equal(got.detach().float().numpy(), want.float().numpy())
    got.backward(ember.tensor(g.numpy()).to(getattr(ember, dtype)))

    # the formula in float64 on PyTorch's half result and gradient, rounded once to the half type
    dims = tuple(range(x.ndim)) if dim is None else (dim,) if isinstance(dim, int) else dim
    x64 = xt.double()
    n = int(np.prod([x.shape[d] for d in dims]))
    std, g64 = want.double(), g.to(getattr(torch, dtype)).double()
    if not keepdim:
        for d in sorted(dims):
            std, g64 = std.unsqueeze(d), g64.unsqueeze(d)
    expected = (g64 * (x64 - x64.mean(dims, keepdim=True)) / ((n - correction) * std)).to(getattr(torch, dtype))
    assert xe.grad.dtype == getattr(ember, dtype)
    np.testing.assert_array_equal(xe.grad.float().numpy(), expected.float().numpy())
    # (and near PyTorch's own gradient, rounded op by op: its half ``x - mean`` loses the low bits of elements near
    # the mean, so the bound is a few units in the last place of the largest element)
    xt.requires_grad_()
    _std(torch, op, xt, dim=dim, correction=correction, keepdim=keepdim).backward(g.to(getattr(torch, dtype)))
    scale = float(expected.abs().max()) * (2 ** -6 if dtype == "bfloat16" else 2 ** -9)
    np.testing.assert_allclose(xe.grad.float().numpy(), xt.grad.float().numpy(), rtol=0, atol=scale)

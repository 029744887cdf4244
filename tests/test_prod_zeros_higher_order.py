"""prod's gradient takes another formula where an element is zero (the product of the others, no division by
zero); under create_graph that formula is recorded too. The first and second derivatives of prod over all
elements, over a dim (keepdim or not) and of cumprod, for inputs with no zero, one, two in a row and two apart,
0-d inputs and one element per product, against PyTorch in float64: with one factor, PyTorch's gradient is the
incoming one, without a history under create_graph (its second derivative is then an error)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

INPUTS = {
    "no zero": [[1.5, -2.0, 0.5], [3.0, 0.25, -1.0]],
    "one zero": [[1.5, 0.0, 0.5], [3.0, 0.25, -1.0]],
    "two zeros in a row": [[0.0, 0.0, 0.5], [3.0, 0.25, -1.0]],
    "two zeros apart": [[1.5, 0.0, 0.5], [3.0, 0.25, 0.0]],
    "0-d zero": 0.0,
    "0-d": 2.5,
    "one element": [0.0],
    "one element per product": [[0.0], [2.0]],
}
OPS = {
    "prod": lambda m, x: m.prod(x),
    "prod(dim)": lambda m, x: m.prod(x, -1),
    "prod(0, keepdim)": lambda m, x: m.prod(x, 0, keepdim=True),
    "method prod": lambda m, x: x.prod(),
    "cumprod": lambda m, x: m.cumprod(x, -1),
}


def _derivatives(m, op, data):
    """The value, the gradient (whether it has a history: PyTorch's gradient of one element is constant), and the
    second derivative or the error of asking for it."""
    x = m.tensor(data, dtype=m.float64, requires_grad=True)
    out = OPS[op](m, x)
    w = m.arange(1, out.numel() + 1, dtype=m.float64).reshape(out.shape)  # (a weight per output element)
    (g,) = m.autograd.grad((out * w).sum(), x, create_graph=True)
    try:
        (h,) = m.autograd.grad((g * g).sum(), x)
        second = np.asarray(h.tolist())
    except RuntimeError as err:
        second = str(err)
    return np.asarray(out.tolist()), np.asarray(g.tolist()), g.requires_grad, second


@pytest.mark.parametrize("data", list(INPUTS))
@pytest.mark.parametrize("op", list(OPS))
def test_prod_first_and_second_derivatives_at_zeros_as_pytorch(op, data):
    got, want = (_derivatives(m, op, INPUTS[data]) for m in (ember, torch))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12, err_msg="value")
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-12, err_msg="gradient")
    assert got[2] == want[2], "the gradient's requires_grad"
    if isinstance(want[3], str) or isinstance(got[3], str):  # (ember's message adds a hint after PyTorch's)
        assert isinstance(got[3], str) and got[3].startswith(want[3]), got[3]
    else:
        np.testing.assert_allclose(got[3], want[3], rtol=1e-12, atol=1e-12, err_msg="second derivative")

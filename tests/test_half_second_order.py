"""Second order of half-precision ops against PyTorch's: PyTorch's double-backward kernels compute a float16 or
bfloat16 op's gradient formula in float32 and round the result once, so the gradient taken with create_graph is of
the input's dtype, made by the formula's node (no cast node after it), and the second derivative is of that dtype
too. For each op: the dtypes, that the gradient's node is no cast (ember records the formula's ops where PyTorch has
one fused ...BackwardBackward0 node: the names differ by design), and the values of both derivatives."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def _f(m):
    return m.nn.functional


OPS = {
    "softmax": lambda m, x: m.softmax(x, 1),
    "log_softmax": lambda m, x: m.log_softmax(x, 1),
    "gelu": lambda m, x: _f(m).gelu(x),
    "gelu tanh": lambda m, x: _f(m).gelu(x, approximate="tanh"),
    "silu": lambda m, x: _f(m).silu(x),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "tanh": lambda m, x: m.tanh(x),
    "exp": lambda m, x: m.exp(x),
    "layer_norm": lambda m, x: _f(m).layer_norm(x, (4,)),
    "mse_loss": lambda m, x: _f(m).mse_loss(x, x.detach() * 0.5, reduction="none"),
    "square": lambda m, x: x * x,
    "softplus": lambda m, x: _f(m).softplus(x),
    "elu": lambda m, x: _f(m).elu(x),
}


def _second_order(m, op, dtype):
    x = m.tensor(np.random.default_rng(0).standard_normal((3, 4)) * 0.8, dtype=getattr(m, dtype), requires_grad=True)
    y = OPS[op](m, x)
    c = m.linspace(0.5, 2.0, 12).reshape(3, 4).to(x.dtype)  # (not uniform: layer_norm's sum of y * y is constant)
    (g,) = m.autograd.grad((y * y * c).sum(), x, create_graph=True)
    (gg,) = m.autograd.grad((g * g).sum(), x)
    return (str(g.dtype).split(".")[-1], str(gg.dtype).split(".")[-1], type(g.grad_fn).__name__,
            g.detach().float().numpy(), gg.float().numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", list(OPS))
def test_half_precision_second_order_as_pytorch(op, dtype):
    got, want = (_second_order(m, op, dtype) for m in (ember, torch))
    assert got[:2] == want[:2]
    assert got[2] != "ToCopyBackward0" and want[2] != "ToCopyBackward0"
    tol = 2e-2 if dtype == "float16" else 8e-2
    for e, t in zip(got[3:], want[3:]):
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol * np.abs(t).max())


# the piecewise-linear activations, whose first derivative PyTorch computes in float32 and rounds once: the gradient
# under create_graph of the input's dtype, PyTorch's node, and exactly PyTorch's values (f' is a constant there)
PIECEWISE = {
    "leaky_relu": lambda m, x: _f(m).leaky_relu(x, 0.1),
    "leaky_relu_": lambda m, x: _f(m).leaky_relu(x.clone(), 0.1, inplace=True),
    "rrelu eval": lambda m, x: _f(m).rrelu(x),
    "hardsigmoid": lambda m, x: _f(m).hardsigmoid(x),
    "hardtanh": lambda m, x: _f(m).hardtanh(x),
    "relu": lambda m, x: _f(m).relu(x),
}


def _piecewise(m, op, dtype):
    x = m.tensor([[-4.0, -0.5, 0.5, 4.0], [-2.7, 0.3, 1.1, -0.01]], dtype=getattr(m, dtype), requires_grad=True)
    go = m.tensor([[1.0, 2.0, 3.0, 4.0], [0.7, -1.3, 2.9, 5.0]], dtype=getattr(m, dtype), requires_grad=True)
    (g,) = m.autograd.grad(PIECEWISE[op](m, x), x, go, create_graph=True)
    edges = [type(f).__name__ for f, _ in g.grad_fn.next_functions]
    try:
        second = [s.dtype for s in m.autograd.grad(g.sum(), [x, go])] + \
            [s.float().tolist() for s in m.autograd.grad(g.sum(), [x, go])]
    except RuntimeError as err:  # (hardsigmoid's: PyTorch's "derivative ... is not implemented")
        second = str(err)
    return str(g.dtype).split(".")[-1], type(g.grad_fn).__name__, edges, g.detach().float().tolist(), \
        str(second).replace("torch.", "").replace("ember.", "")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", list(PIECEWISE))
def test_half_precision_piecewise_linear_second_order_is_pytorchs(op, dtype):
    assert _piecewise(ember, op, dtype) == _piecewise(torch, op, dtype)

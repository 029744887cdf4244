"""torch.special.gammainc / gammaincc, torch.igamma / igammac and the Tensor methods against PyTorch: values over
a wide range (a and x from 1e-3 to 1e4, float64 and float32, PyTorch's edge values: nan, 0, 1, inf), the
gradient with respect to x (first and second order), the gradient with respect to a refused as PyTorch refuses it,
integer operands refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
A = np.concatenate([10 ** RNG.uniform(-3, 4, 300), [0.0, 0.0, 1.0, -1.0, 1.0, 2.0, np.inf, 1.0, 1.0, 0.5, 100, 1e3,
                                                   1e4, 3.0, np.nan]])
X = np.concatenate([10 ** RNG.uniform(-3, 4, 300), [0.0, 1.0, 0.0, 1.0, -1.0, np.inf, 1.0, np.nan, 1e-300, 1e5, 100,
                                                   1001, 1e4 + 50, np.inf, 1.0]])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn", ["special.gammainc", "special.gammaincc", "igamma", "igammac", "Tensor.igamma",
                                "Tensor.igammac"])
def test_incomplete_gamma_values_as_pytorch(fn, dtype):
    results = []
    for m in (torch, ember):
        a, x = m.tensor(A, dtype=getattr(m, dtype)), m.tensor(X, dtype=getattr(m, dtype))
        name = fn.split(".")[-1]
        out = getattr(a, name)(x) if fn.startswith("Tensor") else getattr(m.special if "special" in fn else m, name)(a, x)
        assert str(out.dtype).split(".")[1] == dtype
        results.append(out.double().numpy())
    theirs, ours = results
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    # (PyTorch's float64 values are within 1.3e-9 of the exact ones here, ember's within 1e-11; float32: PyTorch
    # computes in float32)
    tol = dict(rtol=3e-9, atol=1e-300) if dtype == "float64" else dict(rtol=3e-4, atol=1e-7)  # (subnormals)
    np.testing.assert_allclose(ours, theirs, **tol)


@pytest.mark.parametrize("upper", [False, True])
def test_incomplete_gamma_gradients_as_pytorch(upper):
    grads = []
    for m in (torch, ember):
        a = m.tensor([0.5, 2.0, 30.0, 7.0], dtype=m.float64)
        x = m.tensor([0.3, 2.5, 25.0, 12.0], dtype=m.float64, requires_grad=True)
        y = (m.igammac if upper else m.igamma)(a, x)
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        grads.append((y.grad_fn.name(), g.detach().numpy(), gg.numpy()))
    assert grads[0][0] == grads[1][0]
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=3e-9)  # (the value PyTorch multiplies: see above)
    np.testing.assert_allclose(grads[1][2], grads[0][2], rtol=3e-9)


@pytest.mark.parametrize("upper", [False, True])
def test_incomplete_gamma_refuses_what_pytorch_refuses(upper):
    outcomes = []
    for m in (torch, ember):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        y = (m.igammac if upper else m.igamma)(a, m.tensor([1.0, 3.0]))
        with pytest.raises(NotImplementedError) as err:
            y.sum().backward()
        with pytest.raises(NotImplementedError) as int_err:
            (m.igammac if upper else m.igamma)(m.tensor([1, 2]), m.tensor([1, 2]))
        outcomes.append((str(err.value), str(int_err.value)))
    assert outcomes[0] == outcomes[1]

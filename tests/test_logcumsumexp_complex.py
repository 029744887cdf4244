"""logcumsumexp of complex tensors, as PyTorch computes it: values (the imaginary part accumulated, not wrapped),
gradients, infinities, 0-d and one-element inputs."""

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("dtype,tol", [("complex64", 2e-5), ("complex128", 1e-12)])
@pytest.mark.parametrize("shape,dim", [((6,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 2), -2)])
def test_values_and_gradients_match_pytorch(dtype, tol, shape, dim):
    rng = np.random.default_rng(0)
    z = rng.standard_normal(shape) * 3 + 1j * rng.standard_normal(shape) * 4
    g = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    t = torch.tensor(z, dtype=getattr(torch, dtype), requires_grad=True)
    e = ember.tensor(z, dtype=getattr(ember, dtype), requires_grad=True)
    rt, re_ = torch.logcumsumexp(t, dim), ember.logcumsumexp(e, dim)
    assert re_.dtype == getattr(ember, dtype) and re_.stride() == rt.stride()
    np.testing.assert_allclose(re_.detach().numpy(), rt.detach().numpy(), rtol=tol, atol=tol)
    rt.backward(torch.tensor(g, dtype=rt.dtype))
    re_.backward(ember.tensor(g, dtype=re_.dtype))
    np.testing.assert_allclose(e.grad.numpy(), t.grad.resolve_conj().numpy(), rtol=tol * 10, atol=tol * 10)


def test_infinities_and_small_inputs():
    z = np.array([complex(-np.inf, 0), 1 + 1j, complex(-np.inf, 2), 1000 + 3j, -1000j])
    for x in (z, z[1:2], np.array(1 + 1j)):
        t, e = torch.tensor(x), ember.tensor(x)
        np.testing.assert_array_equal(ember.logcumsumexp(e, 0).numpy(), torch.logcumsumexp(t, 0).numpy())
        np.testing.assert_array_equal(e.logcumsumexp(-1).numpy(), t.logcumsumexp(-1).numpy())

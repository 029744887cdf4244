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


def test_gradient_of_large_real_parts_stays_finite():
    # exp(x) alone overflows at a real part of 800; PyTorch's gradient takes the running sum in log space
    z = np.array([800 + 2j, 801 - 1j, 700 + 0.5j, -750 + 1j])
    g = np.array([1 + 1j, 2 - 1j, 0.5j, 0j])
    t = torch.tensor(z, requires_grad=True)
    e = ember.tensor(z, requires_grad=True)
    torch.logcumsumexp(t, 0).backward(torch.tensor(g))
    ember.logcumsumexp(e, 0).backward(ember.tensor(g))
    np.testing.assert_allclose(e.grad.numpy(), t.grad.resolve_conj().numpy(), rtol=1e-12, atol=1e-12)


def test_gradient_of_large_real_parts_under_create_graph():
    z = np.array([800 + 2j, 801 - 1j, 700 + 0.5j])
    grads = []
    for lib in (torch, ember):
        x = lib.tensor(z, requires_grad=True)
        (gx,) = lib.autograd.grad(lib.logcumsumexp(x, 0).abs().sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(gx.abs().sum(), x)
        grads.append((gx.detach().resolve_conj().numpy() if lib is torch else gx.detach().numpy(),
                      gg.resolve_conj().numpy() if lib is torch else gg.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)


def test_nans_and_equal_infinities_as_pytorch():
    # PyTorch's step: a NaN in either operand (real or imaginary part) gives nan + nanj; two -inf real parts keep
    # the running value (the first one starts from -inf + 0j)
    inf, nan = np.inf, np.nan
    for x in ([complex(nan, 0), 1 + 1j], [complex(1, nan), 1 + 1j], [1 + 1j, complex(nan, 0)],
              [complex(-inf, 1), complex(-inf, 2)], [complex(-inf, 5), 1 + 1j, complex(-inf, 3)],
              [complex(3, 1), complex(3, 2)], [complex(inf, 1), complex(-inf, 2)]):
        t, e = torch.tensor(x, dtype=torch.complex128), ember.tensor(x, dtype=ember.complex128)
        got, want = ember.logcumsumexp(e, 0).numpy(), torch.logcumsumexp(t, 0).numpy()
        for part in ("real", "imag"):  # (apart: NaN positions per part)
            np.testing.assert_array_equal(getattr(got, part), getattr(want, part), err_msg=f"{x} {part}")


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_node_reads_as_pytorchs(dtype):
    names = []
    for m in (torch, ember):
        y = m.logcumsumexp(m.ones(3, dtype=getattr(m, dtype), requires_grad=True), 0)
        names.append((type(y.grad_fn).__name__, y.grad_fn.name()))
    assert names[0] == names[1] == ("LogcumsumexpBackward0",) * 2

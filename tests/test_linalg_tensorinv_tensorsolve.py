"""``torch.linalg.tensorinv`` and ``tensorsolve`` (missing in ember), against torch: values, shapes, gradients,
``dims``, complex input, PyTorch's keyword names and its errors."""

import numpy as np
import pytest
import torch

import ember


def _grads(m, fn, *arrays, **kwargs):
    inputs = [m.tensor(a, requires_grad=True) for a in arrays]
    out = fn(m)(*inputs, **kwargs)
    w = m.tensor(np.random.RandomState(9).randn(*out.shape)).to(out.dtype)
    loss = (out * w).real.sum() if out.is_complex() else (out * w).sum()
    return [out.detach().numpy(), *(g.numpy() for g in m.autograd.grad(loss, inputs))]


def _same(fn, *arrays, **kwargs):
    for e, t in zip(_grads(ember, fn, *arrays, **kwargs), _grads(torch, fn, *arrays, **kwargs)):
        assert e.shape == t.shape and e.dtype == t.dtype
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-10)


RS = np.random.RandomState(0)


@pytest.mark.parametrize("shape, ind", [((4, 6, 8, 3), 2), ((4, 6, 24), 2), ((6, 2, 3), 1), ((5, 5), 1)])
def test_tensorinv_as_torch(shape, ind):
    _same(lambda m: m.linalg.tensorinv, RS.randn(*shape), ind=ind)


def test_tensorinv_complex_and_identity():
    a = RS.randn(2, 3, 6) + 1j * RS.randn(2, 3, 6)
    _same(lambda m: m.linalg.tensorinv, a, ind=2)
    x = ember.tensor(RS.randn(4, 6, 8, 3))
    eye = ember.tensordot(ember.linalg.tensorinv(x, ind=2), x, 2)
    np.testing.assert_allclose(eye.numpy(), np.eye(24).reshape(8, 3, 8, 3), atol=1e-10)


@pytest.mark.parametrize("a_shape, b_shape, dims", [((2, 3, 6), (2, 3), None), ((6, 2, 3), (2, 3), (0,)),
                                                    ((2, 3, 2, 3), (2, 3), None), ((2, 4, 2), (4,), [0])])
def test_tensorsolve_as_torch(a_shape, b_shape, dims):
    _same(lambda m: m.linalg.tensorsolve, RS.randn(*a_shape), RS.randn(*b_shape), dims=dims)


def test_pytorchs_keyword_names():
    for m in (ember, torch):
        a = m.tensor(RS.randn(2, 3, 6))
        assert tuple(m.linalg.tensorinv(input=a, ind=2).shape) == (6, 2, 3)
        assert tuple(m.linalg.tensorsolve(input=a, other=m.ones(2, 3, dtype=a.dtype)).shape) == (6,)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.tensorinv(m.ones(4, 6, 8, 3), ind=0),
    lambda m: m.linalg.tensorinv(m.ones(4, 6, 8, 3), ind=1),
    lambda m: m.linalg.tensorinv(m.ones(4), ind=1),
    lambda m: m.linalg.tensorinv(m.ones(2, 2, 4), ind=1.5),
    lambda m: m.linalg.tensorinv(m.ones(2, 2, dtype=m.int64), ind=1),
    lambda m: m.linalg.tensorinv(m.zeros(2, 2), ind=1),
    lambda m: m.linalg.tensorsolve(m.ones(6, 4), m.ones(2, 3)),
    lambda m: m.linalg.tensorsolve(m.ones(2, 4, 2), m.ones(4), dims=0),
    lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(2, 3, dtype=m.float64)),
])
def test_errors_as_torch(call):
    messages = []
    for m in (ember, torch):
        with pytest.raises((RuntimeError, TypeError)) as info:
            call(m)
        messages.append((isinstance(info.value, RuntimeError), str(info.value)))
    assert messages[0] == messages[1]

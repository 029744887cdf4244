"""``torch.linalg.householder_product`` (missing in ember), against torch: the product of the reflectors (real and
complex, batched), its gradients with respect to the reflectors and tau, Q from ``geqrf``'s factors, and PyTorch's
errors."""

import numpy as np
import pytest
import torch

import ember

RS = np.random.RandomState(0)
CASES = [(RS.randn(5, 3), RS.rand(2)), (RS.randn(4, 4), RS.rand(4)),
         (RS.randn(2, 4, 4) + 1j * RS.randn(2, 4, 4), RS.rand(2, 3) + 1j * RS.rand(2, 3))]


def _run(m, a, t):
    A, T = m.tensor(a, requires_grad=True), m.tensor(t, requires_grad=True)
    Q = m.linalg.householder_product(A, T)
    w = m.tensor(np.random.RandomState(3).randn(*Q.shape)).to(Q.dtype)
    gs = m.autograd.grad((Q * w).real.sum() if Q.is_complex() else (Q * w).sum(), (A, T))
    return [Q.detach().numpy(), *(g.numpy() for g in gs)]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_and_gradients_as_torch(case):
    for e, t in zip(_run(ember, *CASES[case]), _run(torch, *CASES[case])):
        assert e.shape == t.shape and e.dtype == t.dtype
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


def test_q_of_torchs_geqrf_and_no_reflectors():
    a, tau = torch.geqrf(torch.tensor(RS.randn(6, 4)))
    q = ember.linalg.householder_product(ember.tensor(a.numpy()), ember.tensor(tau.numpy()))
    np.testing.assert_allclose(q.numpy(), torch.linalg.householder_product(a, tau).numpy(), atol=1e-12)
    for m in (ember, torch):
        eye = m.linalg.householder_product(m.ones(4, 2, dtype=m.float64), m.zeros(0, dtype=m.float64))
        np.testing.assert_array_equal(eye.numpy(), np.eye(4, 2))


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.householder_product(m.ones(2, 5), m.ones(1)),
    lambda m: m.linalg.householder_product(m.ones(5, 3), m.ones(4)),
    lambda m: m.linalg.householder_product(m.ones(5, 3), m.ones(2, dtype=m.float64)),
    lambda m: m.linalg.householder_product(m.ones(5), m.ones(2)),
    lambda m: m.linalg.householder_product(m.ones(2, 5, 3), m.ones(2)),
    lambda m: m.linalg.householder_product(m.ones(2, 5, 3), m.ones(3, 2)),
    lambda m: m.linalg.householder_product(m.ones(5, 3, dtype=m.int64), m.ones(2, dtype=m.int64)),
    lambda m: m.linalg.householder_product(m.ones(5, 3, dtype=m.float16), m.ones(2, dtype=m.float16)),
    lambda m: m.linalg.householder_product(m.ones(5, 3), [1.0]),
])
def test_errors_as_torch(call):
    messages = []
    for m in (ember, torch):
        with pytest.raises((RuntimeError, NotImplementedError, TypeError)) as info:
            call(m)
        messages.append((type(info.value).__name__.replace("_LinAlgError", "RuntimeError"), str(info.value)))
    assert messages[0] == messages[1]

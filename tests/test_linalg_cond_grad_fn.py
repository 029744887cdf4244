"""linalg.cond's graph and singular matrices, and householder_product with no reflectors, against torch.

PyTorch's cond for p in 'fro', 1, -1, inf, -inf fills the inverse of a singular matrix with inf in place and turns
the product's NaN into inf in place: the result's grad_fn is NanToNumBackward0 and backward raises (the inverse,
saved for its gradient, was modified); 'nuc' comes from the singular values (MulBackward0, differentiable); 2 / -2
are the quotient of the extreme singular values (SqueezeBackward1). householder_product with zero reflectors is
recorded (LinalgHouseholderProductBackward0) and gives no gradient."""

import numpy as np
import pytest
import torch

import ember

MATRICES = np.array([[[2.0, 1.0], [1.0, 3.0]], [[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]]])


def _cond(m, p, dtype="float64"):
    A = m.tensor(MATRICES.astype(dtype), requires_grad=True)
    c = m.linalg.cond(A) if p is None else m.linalg.cond(A, p)
    try:
        c.sum().backward()
        gradient = A.grad.numpy()
    except RuntimeError as error:
        gradient = str(error)
    return c.detach().numpy(), type(c.grad_fn).__name__, gradient


@pytest.mark.parametrize("p", ["fro", 1, -1, float("inf"), float("-inf"), "nuc", 2, -2, None])
def test_cond_values_graph_and_backward_as_torch(p):
    (e, e_node, e_grad), (t, t_node, t_grad) = _cond(ember, p), _cond(torch, p)
    assert e_node == t_node
    np.testing.assert_array_equal(np.isinf(e), np.isinf(t))
    np.testing.assert_array_equal(np.isnan(e), np.isnan(t))
    finite = np.isfinite(t) & (t < 1e10)  # (a near-singular matrix's huge value is rounding)
    # (and a singular matrix's tiny p=-2 value, sigma_min / sigma_max with sigma_min of rounding's size: LAPACK's
    # rounding, 2e-17 or 4e-17 by CPU; every other value is 1 or more)
    np.testing.assert_allclose(e[finite], t[finite], rtol=1e-12, atol=1e-15)
    if isinstance(t_grad, str):
        assert e_grad == t_grad
    else:
        assert not isinstance(e_grad, str)


def test_cond_complex_backward_error_as_torch():
    z = np.array([[1 + 1j, 2], [0.5j, 3]])
    messages = []
    for m in (torch, ember):
        A = m.tensor(z, requires_grad=True)
        c = m.linalg.cond(A, "fro")
        with pytest.raises(RuntimeError) as info:
            c.backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "LinalgInvEx" in messages[1]


def test_cond_singular_without_grad_is_inf():
    for p in ["fro", 1, float("inf")]:
        assert ember.linalg.cond(ember.zeros(2, 2), p).item() == torch.linalg.cond(torch.zeros(2, 2), p).item()


@pytest.mark.parametrize("a_grad, tau_grad", [(True, True), (False, True), (True, False), (False, False)])
def test_householder_product_without_reflectors_recorded_as_torch(a_grad, tau_grad):
    results = []
    for m in (torch, ember):
        A = m.ones(2, 3, 2, dtype=m.float64, requires_grad=a_grad)
        tau = m.zeros(2, 0, dtype=m.float64, requires_grad=tau_grad)
        Q = m.linalg.householder_product(A, tau)
        node = type(Q.grad_fn).__name__ if Q.grad_fn is not None else None
        if Q.requires_grad:
            Q.sum().backward()
        with m.no_grad():
            untracked = m.linalg.householder_product(A, tau).requires_grad
        results.append((Q.tolist(), Q.requires_grad, node, A.grad, tau.grad, untracked))
    assert results[0] == results[1]

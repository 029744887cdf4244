"""addmm with a sparse COO operand (its product, then the sum) for each alpha and beta, against PyTorch: values and
the dense operands' gradients (an alpha of 1 and one of 2 must each scale the product as given)."""

import numpy as np
import pytest
import torch

import ember


def _run(m, alpha, beta):
    rng = np.random.default_rng(3)
    dense_a = rng.standard_normal((3, 4)) * (rng.random((3, 4)) < 0.5)
    inp = m.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    other = m.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    a = m.tensor(dense_a).to_sparse()
    y = m.addmm(inp, a, other, beta=beta, alpha=alpha)
    (y * m.tensor(rng.standard_normal(y.shape))).sum().backward()
    grads = [None if t.grad is None else t.grad.numpy() for t in (inp, other)]
    return y.detach().numpy(), grads


@pytest.mark.parametrize("alpha,beta", [(1, 1), (2, 1), (0.5, 0), (1, 3), (2, 2), (-1, 0.5)])
def test_addmm_with_a_sparse_operand_as_pytorch(alpha, beta):
    (got_y, got_g), (want_y, want_g) = _run(ember, alpha, beta), _run(torch, alpha, beta)
    np.testing.assert_allclose(got_y, want_y, rtol=1e-12, atol=1e-12)
    for g, w in zip(got_g, want_g):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)

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


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
@pytest.mark.parametrize("fn", ["addmm", "sparse.addmm"])
@pytest.mark.parametrize("layout", ["coo", "csr", "dense"])
def test_sparse_addmm_and_beta_zero_as_pytorch(fn, layout):
    """torch.sparse.addmm (a COO, CSR or dense first operand) and torch.addmm with a sparse one: values, the dense
    operands' gradients and PyTorch's node name; beta=0 does not read the input (its NaN stays out of the
    result, as in PyTorch; it reached it), and a (1, n) input broadcasts."""
    rng = np.random.default_rng(4)
    dense_a = rng.standard_normal((3, 4)) * (rng.random((3, 4)) < 0.5)
    inp_values, other_values = rng.standard_normal((3, 2)), rng.standard_normal((4, 2))
    out = []
    for m in (ember, torch):
        a = m.tensor(dense_a)
        a = {"coo": a.to_sparse(), "csr": a.to_sparse_csr(), "dense": a}[layout]
        call = m.sparse.addmm if fn == "sparse.addmm" else m.addmm
        inp = m.tensor(inp_values, requires_grad=True)
        other = m.tensor(other_values, requires_grad=True)
        y = call(inp, a, other, beta=0.5, alpha=2.0)
        y.sum().backward()
        nan_input = m.full((3, 2), float("nan"), dtype=m.float64, requires_grad=True)
        y0 = call(nan_input, a, other.detach(), beta=0)
        y0.sum().backward()
        row = call(m.ones(1, 2, dtype=m.float64), a, other.detach())
        out.append([y.detach().numpy(), inp.grad.numpy(), other.grad.numpy(), y0.detach().numpy(),
                    nan_input.grad.numpy(), row.numpy(), type(y.grad_fn).__name__])
    got, want = out
    for g, w in zip(got[:-1], want[:-1]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert got[-1] == want[-1]

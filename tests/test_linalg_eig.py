"""``torch.linalg.eig`` and ``eigvals`` (missing in ember), against torch: complex results for real and complex
input (complex64 for float32), LAPACK's unit-norm eigenvectors (compared up to phase), PyTorch's derivative through
the eigenvalues and phase-free functions of the eigenvectors (real gradients for a real input), its error for a
loss that depends on the phase, and its errors for the dtypes and shapes it refuses."""

import numpy as np
import pytest
import torch

import ember


def _inputs(kind):
    rs = np.random.RandomState(0)
    if kind == "real":
        return rs.randn(2, 4, 4)
    if kind == "float32":
        return rs.randn(4, 4).astype(np.float32)
    return rs.randn(3, 3) + 1j * rs.randn(3, 3)


def _run(m, a):
    A = m.tensor(a, requires_grad=True)
    L, V = m.linalg.eig(A)
    w = m.tensor(np.random.RandomState(7).randn(*a.shape))
    loss = (L * m.arange(L.shape[-1])).real.sum() + (L.imag ** 2).sum() + ((V.abs() ** 2) * w).sum()
    (g,) = m.autograd.grad(loss, A)
    (gvals,) = m.autograd.grad(m.linalg.eigvals(A).abs().sum(), A)
    return [L.detach().numpy(), np.abs(V.detach().numpy()), g.numpy(), gvals.numpy()]


@pytest.mark.parametrize("kind", ["real", "complex", "float32"])
def test_eig_values_vectors_gradients_as_torch(kind):
    a = _inputs(kind)
    tol = dict(rtol=1e-4, atol=1e-5) if kind == "float32" else dict(rtol=1e-9, atol=1e-12)
    for e, t in zip(_run(ember, a), _run(torch, a)):
        assert e.dtype == t.dtype
        np.testing.assert_allclose(e, t, **tol)


def test_eigenvectors_satisfy_the_equation_and_node_names():
    a = _inputs("real")
    A = ember.tensor(a, requires_grad=True)
    L, V = ember.linalg.eig(A)
    np.testing.assert_allclose((A.to(ember.complex128) @ V).detach().numpy(),
                               (V * L[..., None, :]).detach().numpy(), atol=1e-12)
    assert type(L.grad_fn).__name__ == type(V.grad_fn).__name__ == "LinalgEigBackward0"
    assert type(ember.linalg.eigvals(A).grad_fn).__name__ == "LinalgEigBackward0"


def test_phase_dependent_loss_is_torchs_error():
    a = _inputs("real")
    for m in (ember, torch):
        A = m.tensor(a, requires_grad=True)
        _, V = m.linalg.eig(A)
        with pytest.raises(RuntimeError, match="specified up to multiplication by e"):
            m.autograd.grad(V.imag.sum(), A)


@pytest.mark.parametrize("make", [lambda m: m.ones(3, 3, dtype=m.float16), lambda m: m.ones(0, 0, dtype=m.bfloat16),
                                  lambda m: m.ones(3, 3, dtype=m.int64), lambda m: m.ones(3), lambda m: m.ones(2, 3)])
@pytest.mark.parametrize("name", ["eig", "eigvals"])
def test_errors_as_torch(make, name):
    messages = []
    for m in (ember, torch):
        with pytest.raises((RuntimeError, NotImplementedError)) as info:
            getattr(m.linalg, name)(make(m))
        messages.append((type(info.value).__name__, str(info.value)))
    assert messages[0] == messages[1]


def test_empty_batch():
    for m in (ember, torch):
        L, V = m.linalg.eig(m.ones(2, 0, 0))
        assert (tuple(L.shape), tuple(V.shape), str(L.dtype).rsplit(".")[-1]) == ((2, 0), (2, 0, 0), "complex64")

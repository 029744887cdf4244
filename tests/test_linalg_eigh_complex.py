"""``torch.linalg.eigh`` / ``eigvalsh`` of complex Hermitian matrices, against torch (S4's DPLR initialisation
takes the eigenvectors of a complex normal matrix's Hermitian part; ember refused complex input).

Real eigenvalues of the input's precision, complex eigenvectors, the ``UPLO`` triangle read, and PyTorch's
derivative: through the eigenvalues and through phase-independent functions of the eigenvectors.
"""

import numpy as np
import pytest
import torch

import ember


def _inputs(dtype_name):
    rs = np.random.RandomState(0)
    a = rs.randn(2, 4, 4) + 1j * rs.randn(2, 4, 4)
    w = rs.randn(2, 4, 4)
    return a.astype(dtype_name), w


def _run(m, a, w, uplo, through):
    A = m.tensor(a, requires_grad=True)
    L, V = m.linalg.eigh(A, UPLO=uplo)
    loss = (L * m.arange(4.0)).sum() if "L" in through else 0
    if "V" in through:
        loss = loss + ((V.abs() ** 2) * m.tensor(w, dtype=L.dtype)).sum()
    (g,) = m.autograd.grad(loss, A)
    return L, V, g


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("through", ["L", "V", "LV"])
def test_complex_eigh_values_and_gradient_as_torch(uplo, through):
    a, w = _inputs("complex128")
    (el, ev, eg), (tl, tv, tg) = _run(ember, a, w, uplo, through), _run(torch, a, w, uplo, through)
    assert str(el.dtype) == "ember.float64" and str(ev.dtype) == "ember.complex128"
    np.testing.assert_allclose(el.detach().numpy(), tl.detach().numpy(), rtol=1e-12, atol=1e-12)
    # eigenvectors are LAPACK's under both; compare their phase-free moduli
    np.testing.assert_allclose(np.abs(ev.detach().numpy()), np.abs(tv.detach().numpy()), atol=1e-10)
    np.testing.assert_allclose(eg.numpy(), tg.numpy(), rtol=1e-9, atol=1e-10)


def test_complex64_gives_float32_eigenvalues_and_eigvalsh():
    a, _ = _inputs("complex64")
    for m in (ember, torch):
        L, V = m.linalg.eigh(m.tensor(a))
        assert (str(L.dtype).rsplit(".")[-1], str(V.dtype).rsplit(".")[-1]) == ("float32", "complex64")
        np.testing.assert_allclose(m.linalg.eigvalsh(m.tensor(a)).numpy(), L.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ember.linalg.eigvalsh(ember.tensor(a)).numpy(),
                               torch.linalg.eigvalsh(torch.tensor(a)).numpy(), rtol=1e-5, atol=1e-5)


def test_phase_dependent_loss_is_torchs_error():
    a, _ = _inputs("complex128")
    for m in (ember, torch):
        A = m.tensor(a, requires_grad=True)
        _, V = m.linalg.eigh(A)
        with pytest.raises(RuntimeError, match="specified up to multiplication by e"):
            m.autograd.grad(V.imag.sum(), A)

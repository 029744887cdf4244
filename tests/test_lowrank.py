"""``torch.svd_lowrank`` and ``torch.pca_lowrank`` (missing in ember), against torch with the same seed: ember's
``randn`` draws PyTorch's numbers, so the random projection is the same and the singular values and gradients
agree to rounding; singular vectors are compared up to sign (the LAPACK builds may choose other signs)."""

import numpy as np
import pytest
import torch

import ember


def _run(m, a, seed=3, fn="svd_lowrank", sparse=False, **kwargs):
    m.manual_seed(seed)
    kwargs = {k: m.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    A = m.tensor(a, requires_grad=not sparse)
    u, s, v = getattr(m, fn)(A.to_sparse() if sparse else A, **kwargs)
    if sparse:
        return u.numpy(), s.numpy(), v.numpy(), None
    (g,) = m.autograd.grad(s.sum() + u.abs().sum() + (v ** 2).sum(), A)
    return u.detach().numpy(), s.detach().numpy(), v.detach().numpy(), g.numpy()


def _same(e, t, tol=1e-10):
    eu, es, ev, eg = e
    tu, ts, tv, tg = t
    assert eu.shape == tu.shape and es.shape == ts.shape and ev.shape == tv.shape and es.dtype == ts.dtype
    np.testing.assert_allclose(es, ts, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.abs(eu), np.abs(tu), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.abs(ev), np.abs(tv), rtol=tol, atol=tol)
    if eg is not None:
        np.testing.assert_allclose(eg, tg, rtol=tol, atol=tol)


A = np.random.RandomState(0).randn(2, 20, 12)


@pytest.mark.parametrize("kwargs", [{}, {"q": 4, "niter": 0}, {"q": 5, "M": np.ones((20, 12))}, {"niter": None}])
@pytest.mark.parametrize("wide", [False, True])
def test_svd_lowrank_as_torch(kwargs, wide):
    a = np.swapaxes(A, -1, -2).copy() if wide else A
    if wide and "M" in kwargs:
        kwargs = dict(kwargs, M=kwargs["M"].T.copy())
    _same(_run(ember, a, **kwargs), _run(torch, a, **kwargs))


@pytest.mark.parametrize("kwargs", [{}, {"q": 3, "center": False}, {"q": 2, "niter": 4}])
def test_pca_lowrank_as_torch(kwargs):
    _same(_run(ember, A, fn="pca_lowrank", **kwargs), _run(torch, A, fn="pca_lowrank", **kwargs))


@pytest.mark.filterwarnings("ignore:Sparse invariant checks")  # (PyTorch's own pca_lowrank builds a sparse tensor)
def test_float32_and_sparse_input():
    a = A[0].astype(np.float32)
    _same(_run(ember, a, q=4), _run(torch, a, q=4), tol=2e-4)
    sparse = A[0] * (np.random.RandomState(1).rand(20, 12) < 0.3)
    for fn in ("svd_lowrank", "pca_lowrank"):
        for x in (sparse, sparse.T.copy()):
            _same(_run(ember, x, fn=fn, sparse=True, q=4), _run(torch, x, fn=fn, sparse=True, q=4))


@pytest.mark.parametrize("kwargs", [{"q": 13}, {"q": -1}, {"niter": -1}])
def test_pca_lowrank_errors_as_torch(kwargs):
    messages = []
    for m in (ember, torch):
        with pytest.raises(ValueError) as info:
            m.pca_lowrank(m.tensor(A[0]), **kwargs)
        messages.append(str(info.value))
    assert messages[0] == messages[1]

"""Randomized low-rank SVD and PCA: ``torch.svd_lowrank`` and ``torch.pca_lowrank`` (PyTorch's ``torch._lowrank``).

Halko, Martinsson and Tropp's algorithms (arXiv:0909.4061): a random projection of A's columns, refined by
``niter`` subspace (power) iterations, each re-orthonormalised by QR (Algorithm 4.4), then the SVD of the small
projected matrix (Algorithm 5.1). Every step is an ember op, so gradients flow through QR and SVD as in
PyTorch; the Gaussian test matrix is drawn with ``randn`` from the global generator, the same numbers as PyTorch's
for the same seed. A may be sparse (COO): it is then only multiplied, never densified.
"""

from __future__ import annotations

from . import _dtype
from ._tensor import Tensor


def _matmul(a: Tensor | None, b: Tensor) -> Tensor:
    """a @ b, ``a`` dense or sparse (``b`` itself when ``a`` is None)."""
    if a is None:
        return b
    if a.is_sparse:
        from .sparse import mm

        return mm(a, b)
    return a @ b


def _floating_dtype(a: Tensor):
    """A's dtype when floating (float16, float32, float64), else float32, as PyTorch's ``get_floating_dtype``."""
    return a.dtype if a.dtype in (_dtype.float16, _dtype.float32, _dtype.float64) else _dtype.float32


def _approximate_basis(A: Tensor, q: int, niter: int | None = 2, M: Tensor | None = None) -> Tensor:
    """Q with ``q`` orthonormal columns such that Q Q^H (A - M) approximates A - M (Algorithm 4.4), without forming
    A - M."""
    from . import linalg, randn

    niter = 2 if niter is None else niter
    R = randn(A.shape[-1], q, dtype=A.dtype if A.is_complex() else _floating_dtype(A))

    def project(x: Tensor, adjoint: bool) -> Tensor:  # (A - M) x, or (A - M)^H x
        a = A.mH if adjoint else A
        out = _matmul(a, x)
        return out if M is None else out - _matmul(M.mH if adjoint else M, x)

    Q = linalg.qr(project(R, False)).Q
    for _ in range(niter):
        Q = linalg.qr(project(Q, True)).Q
        Q = linalg.qr(project(Q, False)).Q
    return Q


def _svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None):
    from . import linalg

    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:  # the algorithm takes a tall matrix: the SVD of A^H, its factors swapped back
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter=niter, M=M)
    B = _matmul(Q.mH, A) if not A.is_sparse else _matmul(A.mH, Q).mH  # (a sparse A is only ever the left operand)
    if M is not None:
        B = B - _matmul(Q.mH, M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q @ U
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None):
    """``(U, S, V)`` with A ≈ U diag(S) V^H (A - M when the mean ``M`` is given, broadcast to A), of rank ``q``,
    after ``niter`` subspace iterations: a randomized approximation, whose draws the global seed repeats."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2):
    """``(U, S, V)``: the principal directions of A's rows (the columns of V), from ``svd_lowrank`` of A with its
    column means subtracted (``center``); ``q`` defaults to min(6, m, n)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    if A.is_sparse:
        from . import ones, sparse

        if len(A.shape) != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        # the mean as M = 1 c^T, a rank-one product, so that A - M is never formed
        c = sparse.sum(A, dim=(-2,)).to_dense() / m
        M = ones(m, 1, dtype=_floating_dtype(A)) @ c.to(_floating_dtype(A))[None, :]
        return _svd_lowrank(A, q, niter=niter, M=M)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter, M=None)

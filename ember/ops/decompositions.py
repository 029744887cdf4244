"""Matrix factorizations: cholesky, qr, eigh, svd, lu (and lu_unpack), batched, with PyTorch's derivatives.

Each factorization is one node whose backward is PyTorch's formula for the real case
(noted beside it). Eigenvector and singular-vector gradients are gauge-invariant only
for losses that do not depend on the vectors' signs, as in PyTorch.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._backend import xp
from .._tensor import Tensor
from ..autograd.graph import MultiOutputNode, Node, torch_named
from ..return_types import result
from .solve import LinAlgError, _batch_prefix, check_matrix, empty_in_float32, mH, mT


def _diag(a):
    return xp.einsum("...ii->...i", a)


def _with_diag(a, values):
    """``a`` with its diagonal replaced by ``values`` (a scalar, or one value per row), as a new array: no write
    through a view, so that the formula also records itself under create_graph."""
    eye = xp.eye(a.shape[-1], dtype=bool)
    return xp.where(eye, values if xp.ndim(values) == 0 else values[..., None, :], a)


def _solve_lower_right(g, low):
    """G L^-1 (L lower triangular)."""
    return mT(xp.linalg.solve(mT(low), mT(g)))


def _hermitian_read(a, upper: bool):
    """The Hermitian (symmetric, for a real ``a``) matrix that ``a``'s lower (``upper``: upper) triangle
    describes, as LAPACK reads it: the other triangle and the diagonal's imaginary part are ignored."""
    low = xp.tril(mH(a) if upper else a, -1)
    return low + mH(low) + (_diag(a).real[..., None, :] * xp.eye(a.shape[-1], dtype=a.dtype))


# ------------------------------------------------------------------ Cholesky
def _cholesky_error(a, name: str) -> LinAlgError:
    """Which batch element and leading minor is not positive-definite, as PyTorch reports it."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for b, m in enumerate(flat):
        for k in range(1, m.shape[-1] + 1):
            try:
                xp.linalg.cholesky(m[:k, :k])
            except xp.linalg.LinAlgError:
                return LinAlgError(f"{name}: {_batch_prefix(a.shape, b)}The factorization could not be completed "
                                   f"because the input is not positive-definite (the leading minor of order {k} "
                                   "is not positive-definite).")
    return LinAlgError(f"{name}: The factorization could not be completed because the input is not positive-definite.")


@torch_named("LinalgCholeskyExBackward0")
class Cholesky(Node):
    def forward(self, a, upper, name):
        try:
            low = xp.linalg.cholesky(_hermitian_read(a, upper))  # one triangle, as LAPACK's potrf
        except xp.linalg.LinAlgError:
            raise _cholesky_error(_hermitian_read(a, upper), name) from None
        out = mH(low).copy() if upper else low
        self.saved, self.upper = (out,), upper  # the output itself, which create_graph differentiates through
        return out

    def backward(self, g):
        # PyTorch's: gA = L^-H S L^-1, S = (phi + tril(phi, -1)^H) / 2, phi = tril(L^H gL); S is Hermitian off
        # its diagonal, whose entries are phi's halved (complex, for a complex A: gA is then not Hermitian)
        (out,) = self.saved
        low, gl = (mH(out), mH(g)) if self.upper else (out, g)
        phi = xp.tril(mH(low) @ gl)
        phi = 0.5 * (phi + mH(xp.tril(phi, -1)))
        return (_solve_lower_right(xp.linalg.solve(mH(low), phi), low),)


@empty_in_float32
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor L (``A = L L^T``; U with ``A = U^T U`` when ``upper``) of each symmetric
    positive-definite matrix; only the lower triangle of A is read."""
    check_matrix(A, "linalg.cholesky")
    return Cholesky.apply(A, upper=bool(upper), name="linalg.cholesky")


@empty_in_float32
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False):
    """``(L, info)``: info is 0, or the order of the first leading minor that is not positive-definite
    (L is then not a valid factor)."""
    check_matrix(A, "linalg.cholesky_ex")
    try:
        low = cholesky(A, upper=upper)
        info = xp.zeros(A._data.shape[:-2], dtype=xp.int32)
    except LinAlgError:
        if check_errors:
            raise
        low, info = _partial_cholesky(A._data, upper)
    return result("linalg_cholesky_ex", ("L", "info"), (low, Tensor._make(info)))


def _partial_cholesky(a, upper: bool):
    """The factor of each matrix where it exists (zeros elsewhere) and LAPACK's info per matrix."""
    flat = _hermitian_read(a, upper).reshape((-1,) + a.shape[-2:])
    low = xp.zeros_like(flat)
    info = xp.zeros(len(flat), dtype=xp.int32)
    for b, m in enumerate(flat):
        try:
            low[b] = xp.linalg.cholesky(m)
        except xp.linalg.LinAlgError:
            info[b] = next(k for k in range(1, m.shape[-1] + 1) if _not_pd(m[:k, :k]))
    low = low.reshape(a.shape)
    return Tensor._make(mH(low).copy() if upper else low), info.reshape(a.shape[:-2])


def _not_pd(m) -> bool:
    try:
        xp.linalg.cholesky(m)
        return False
    except xp.linalg.LinAlgError:
        return True


# ------------------------------------------------------------------ QR
def _qr_backward_tall(gq, gr, q, r):
    """PyTorch's QR derivative for m >= n (reduced):
    gA = [gQ + Q syminvadj(triu(gR R^H - Q^H gQ))] R^-H, syminvadj(X) = X + X^H with the diagonal halved."""
    m = gr @ mH(r) if gr is not None else xp.zeros_like(r, shape=r.shape[:-1] + r.shape[-2:-1])
    if gq is not None:
        m = m - mH(q) @ gq
    m = xp.triu(m)
    m = m + mH(m)
    m = _with_diag(m, 0.5 * _diag(m))
    ga = q @ m
    if gq is not None:
        ga = ga + gq
    return _solve_lower_right(ga, mH(r))  # ga R^-H, with R^H lower triangular


@torch_named("LinalgQrBackward0")
class QR(MultiOutputNode):
    def forward(self, a, mode):
        q, r = xp.linalg.qr(a, mode=mode) if mode != "r" else (xp.zeros((0,), a.dtype), xp.linalg.qr(a, mode="r"))
        self.saved, self.mode = (q, r), mode
        return q, r

    def backward(self, gq, gr):
        q, r = self.saved
        if self.mode == "r":  # (before reading Q's shape: mode 'r' keeps an empty Q)
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                               "through linalg.qr.")
        m, n = q.shape[-2], r.shape[-1]
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        if m >= n:
            return (_qr_backward_tall(gq, gr, q, r),)
        # m < n: A = [X | Y], R = [U | V] with X = Q U square; Y = Q V
        u = r[..., :, :m]
        gv = gr[..., :, m:] if gr is not None else xp.zeros_like(r, shape=r[..., :, m:].shape)
        y = q @ r[..., :, m:]
        gq_x = y @ mH(gv) if gq is None else gq + y @ mH(gv)
        gx = _qr_backward_tall(gq_x, None if gr is None else gr[..., :, :m], q, u)
        return (xp.concatenate([gx, q @ gv], -1),)


def qr(A: Tensor, mode: str = "reduced"):
    """``(Q, R)`` with ``A = Q R``; mode "reduced" (k = min(m, n) columns of Q), "complete" (square Q) or
    "r" (R only; Q is empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    check_matrix(A, "linalg.qr", square=False)
    return result("linalg_qr", ("Q", "R"), QR.apply(A, mode=mode))


# ------------------------------------------------------------------ eigh
@torch_named("LinalgEighBackward0")
class Eigh(MultiOutputNode):
    def forward(self, a, uplo):
        w, v = xp.linalg.eigh(a, UPLO=uplo)
        self.saved = (w, v)
        return w, v

    def backward(self, gw, gv):
        # gA = V (diag(gL) + (V^T gV) / E) V^T, E_ij = L_j - L_i off the diagonal
        w, v = self.saved
        if v.dtype.kind == "c":
            return (_eigh_backward_complex(w, v, gw, gv),)
        inner = xp.zeros_like(v)
        if gv is not None:
            e = _with_diag(w[..., None, :] - w[..., :, None], 1)
            inner = _with_diag((mT(v) @ gv) / e, 0)
        if gw is not None:
            inner = _with_diag(inner, gw)
        ga = v @ inner @ mT(v)
        return (0.5 * (ga + mT(ga)),)  # symmetrised, as PyTorch's


def _eigh_backward_complex(w, v, gw, gv):
    """PyTorch's eigh derivative of a Hermitian matrix: gA = V (diag(gL) + skewH(V^H gV) / E) V^H, where
    skewH(M) = (M - M^H) / 2 and E_ij = L_j - L_i; each eigenvector is defined up to a phase e^{i phi}, so a loss
    that depends on the phase (the imaginary part of diag(V^H gV) away from 0) is PyTorch's error."""
    vh = xp.conj(mT(v))
    inner = xp.zeros_like(v)
    if gv is not None:
        m = vh @ gv
        phase = xp.diagonal(m, axis1=-2, axis2=-1).imag
        if isinstance(phase, xp.ndarray) and not xp.allclose(phase, 0, rtol=1e-2, atol=1e-2):
            raise RuntimeError("linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                               "so it is ill-defined.")
        e = _with_diag(w[..., None, :] - w[..., :, None], 1)
        inner = 0.5 * (m - xp.conj(mT(m))) / e
    if gw is not None:
        inner = _with_diag(inner, gw)
    return v @ inner @ vh


@empty_in_float32
def eigh(A: Tensor, UPLO: str = "L"):
    """``(eigenvalues, eigenvectors)`` of each symmetric (or complex Hermitian) matrix, eigenvalues ascending
    (real for a complex input); only the ``UPLO`` ("L" or "U") triangle is read."""
    check_matrix(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return result("linalg_eigh", ("eigenvalues", "eigenvectors"), Eigh.apply(A, uplo=UPLO))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of each symmetric matrix, ascending."""
    return eigh(A, UPLO).eigenvalues


# ------------------------------------------------------------------ eig
@torch_named("LinalgEigBackward0")
class Eig(MultiOutputNode):
    def forward(self, a):
        w, v = xp.linalg.eig(a)  # LAPACK's geev: unit-norm eigenvectors, each with its largest entry real
        ctype = xp.result_type(a.dtype, xp.complex64)
        w, v = w.astype(ctype, copy=False), v.astype(ctype, copy=False)  # (complex even when all are real)
        self.saved, self.real_input = (w, v), a.dtype.kind != "c"
        return w, v

    def backward(self, gw, gv):
        # PyTorch's linalg_eig_backward: gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re(diag(V^H gV)))) / E*) V^H,
        # E_ij = L_j - L_i; each eigenvector is defined up to a phase, so a loss that depends on it (the imaginary
        # part of diag(V^H gV) away from 0) is PyTorch's error. A real input takes the real part.
        w, v = self.saved
        vh = mH(v)
        inner = xp.zeros_like(v)
        if gv is not None:
            vhgv = vh @ gv
            phase = _diag(vhgv).imag
            if isinstance(phase, xp.ndarray) and not xp.allclose(phase, 0, rtol=1e-2, atol=1e-2):
                raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                                   "multiplication by e^{i phi}. The specified loss function depends on this "
                                   "quantity, so it is ill-defined.")
            inner = vhgv - vh @ (v * _diag(vhgv).real[..., None, :])
            wc = xp.conj(w)
            inner = inner / _with_diag(wc[..., None, :] - wc[..., :, None], 1)
        inner = _with_diag(inner, 0 if gw is None else gw)
        ga = xp.linalg.solve(vh, inner @ vh)
        return (ga.real if self.real_input else ga,)


def _check_eig(A: Tensor, name: str) -> None:
    if isinstance(A, Tensor) and not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"Unknown Complex ScalarType for {_dtype.SCALAR_TYPE_NAMES[A.dtype.name]}")
    check_matrix(A, name, low_precision=False)
    if A.dtype in (_dtype.float16, _dtype.bfloat16):  # (an empty one too: PyTorch's kernel refuses it first)
        raise _dtype.not_implemented_for("linalg_eig_out_cpu", A.dtype)


def eig(A: Tensor):
    """``(eigenvalues, eigenvectors)`` of each square matrix, complex whatever A's dtype (complex64 for float32):
    LAPACK's geev, as PyTorch's CPU op, each eigenvector of unit norm."""
    _check_eig(A, "linalg.eig")
    return result("linalg_eig", ("eigenvalues", "eigenvectors"), Eig.apply(A))


def eigvals(A: Tensor) -> Tensor:
    """The (complex) eigenvalues of each square matrix, as ``eig``'s."""
    _check_eig(A, "linalg.eigvals")
    return Eig.apply(A)[0]


# ------------------------------------------------------------------ SVD
@torch_named("LinalgSvdBackward0")
class SVD(MultiOutputNode):
    def forward(self, a, full_matrices):
        u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
        self.saved, self.full = (u, s, vh), full_matrices
        return u, s, vh

    def backward(self, gu, gs, gvh):  # PyTorch's svd_backward
        u, s, vh = self.saved
        m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
        if self.full and (gu is not None or gvh is not None) and m != n:
            raise RuntimeError("linalg.svd: the derivative of U or Vh is not defined when full_matrices=True and "
                               "the matrix is not square; use full_matrices=False")
        u, vh = u[..., :, :k], vh[..., :k, :]
        gu = None if gu is None else gu[..., :, :k]
        gvh = None if gvh is None else gvh[..., :k, :]
        if gu is None and gvh is None:
            return ((u * gs[..., None, :]) @ vh,)
        s2 = s * s
        e = _with_diag(s2[..., None, :] - s2[..., :, None], 1)  # E_ij = s_j^2 - s_i^2
        ga = xp.zeros_like(u, shape=s.shape + (k,))
        # skew(X) = X - X^H; the diagonal of skew(U^H gU) is 2i Im(diag(U^H gU)), zero for a real matrix
        uhgu = vhgv = xp.zeros_like(ga)
        if gu is not None:
            uhgu = mH(u) @ gu
            uhgu = uhgu - mH(uhgu)
            ga = ga + uhgu / e * s[..., None, :]
        if gvh is not None:
            vhgv = vh @ mH(gvh)
            vhgv = vhgv - mH(vhgv)
            ga = ga + s[..., :, None] * (vhgv / e)
        diagonal = xp.zeros_like(s) if gs is None else gs
        if ga.dtype.kind == "c":
            # each pair of singular vectors is defined up to a common phase e^{i phi}: a loss that depends on it
            # has no derivative (PyTorch's check); the phase-free part adds i Im(diag(U^H gU)) / S
            _check_svd_phase(_diag(uhgu).imag, _diag(vhgv).imag)
            diagonal = diagonal + 0.5 * _diag(uhgu) / s
        ga = _with_diag(ga, diagonal)
        if m > k and gu is not None:
            gus = gu / s[..., None, :]
            return ((u @ ga + gus - u @ (mH(u) @ gus)) @ vh,)
        if n > k and gvh is not None:
            gvs = gvh / s[..., :, None]
            return (u @ (ga @ vh + gvs - (gvs @ mH(vh)) @ vh),)
        return (u @ ga @ vh,)


def _check_svd_phase(im_uhgu, im_vhgv) -> None:
    if isinstance(im_uhgu, xp.ndarray) and not xp.allclose(im_uhgu, -im_vhgv, rtol=1e-2, atol=1e-2):
        raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this phase term, "
                           "making it ill-defined.")


@empty_in_float32
def svd(A: Tensor, full_matrices: bool = True, *, driver=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, S descending."""
    check_matrix(A, "linalg.svd", square=False)
    return result("linalg_svd", ("U", "S", "Vh"), SVD.apply(A, full_matrices=bool(full_matrices)))


@empty_in_float32
def svdvals(A: Tensor, *, driver=None) -> Tensor:
    """The singular values of each matrix, descending."""
    check_matrix(A, "linalg.svdvals", square=False)
    return SVD.apply(A, full_matrices=False)[1]


# ------------------------------------------------------------------ LU
def lu_arrays(a):
    """Partial-pivoting LU of (..., m, n) arrays: the packed LU and LAPACK's 1-based pivots (int32).
    Columns in a Python loop, every matrix of the batch at once."""
    m, n = a.shape[-2:]
    k = min(m, n)
    lu = a.reshape((math.prod(a.shape[:-2]), m, n)).astype(a.dtype, copy=True)  # (-1 is ambiguous when empty)
    piv = xp.empty((lu.shape[0], k), dtype=xp.int32)
    rows = xp.arange(lu.shape[0])
    for j in range(k):
        col = lu[:, j:, j]  # the first largest, as LAPACK's i?amax, which measures a complex |re| + |im|
        p = j + xp.argmax(xp.abs(col.real) + xp.abs(col.imag) if col.dtype.kind == "c" else xp.abs(col), axis=1)
        piv[:, j] = p + 1
        top = lu[:, j].copy()
        lu[:, j] = lu[rows, p]
        lu[rows, p] = top
        pivot = lu[:, j, j]
        safe = xp.where(pivot == 0, 1, pivot)
        lu[:, j + 1:, j] /= safe[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    return lu.reshape(a.shape), piv.reshape(a.shape[:-2] + (k,))


def permutation(piv, m: int, dtype):
    """The permutation matrix P (A = P L U) of LAPACK's sequential row swaps ``piv`` (1-based)."""
    batch = piv.shape[:-1]
    count = math.prod(batch)  # (not -1: ambiguous for an empty matrix)
    perm = xp.broadcast_to(xp.arange(m), batch + (m,)).reshape(count, m).copy()
    flat = piv.reshape(count, piv.shape[-1]).astype(xp.int64) - 1
    rows = xp.arange(perm.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j]
        top = perm[:, j].copy()
        perm[:, j] = perm[rows, p]
        perm[rows, p] = top
    eye = xp.zeros((perm.shape[0], m, m), dtype=dtype)
    eye[rows[:, None], perm, xp.arange(m)] = 1  # row perm[i] of P has its 1 in column i
    return eye.reshape(batch + (m, m))


@torch_named("LinalgLuFactorExBackward0")
class LUFactor(MultiOutputNode):
    def forward(self, a):
        lu, piv = lu_arrays(a)
        self.saved = (lu, piv)
        return lu, piv

    def backward(self, glu, gpiv):
        # Square A = P L U (PyTorch's linalg_lu_backward):
        # gA = P L^-H [tril(L^H gL, -1) + triu(gU U^H)] U^-H, with gL, gU the two triangles of gLU
        lu, piv = self.saved
        m, n = lu.shape[-2:]
        if m != n:
            raise RuntimeError("lu_factor: the derivative is implemented for square matrices only")
        low = _with_diag(xp.tril(lu, -1), 1)
        up = xp.triu(lu)
        inner = xp.tril(mH(low) @ xp.tril(glu, -1), -1) + xp.triu(xp.triu(glu) @ mH(up))
        inner = _solve_lower_right(inner, mH(up))  # (...) U^-H
        inner = xp.linalg.solve(mH(low), inner)  # L^-H (...)
        return (permutation(piv, m, lu.dtype) @ inner,)


def lu_factor(A: Tensor, *, pivot: bool = True):
    """``(LU, pivots)``: L (unit diagonal, below) and U packed in one matrix, and LAPACK's 1-based row swaps.
    A singular matrix raises, as PyTorch's ``lu_factor`` does (``lu_factor_ex`` reports it instead)."""
    out = lu_factor_ex(A, pivot=pivot)
    bad = out.info._data.reshape(-1)
    if bad.any():
        b = int(xp.argmax(bad > 0))
        i = int(bad[b])
        raise LinAlgError(f"torch.linalg.lu_factor: {_batch_prefix(A.shape, b)}U[{i},{i}] is zero and using it on "
                          "lu_solve would result in a division by zero. If you still want to perform the "
                          "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return result("linalg_lu_factor", ("LU", "pivots"), (out.LU, out.pivots))


def _check_lu_dims(A: Tensor, name: str) -> None:
    if isinstance(A, Tensor) and A._data.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A._data.shape)} "
                           "instead")


@empty_in_float32
def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False):
    """``(LU, pivots, info)``: info is 0, or the 1-based index of the first zero on U's diagonal."""
    _check_lu_dims(A, "torch.lu_factor")
    check_matrix(A, "linalg.lu_factor_ex", square=False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    lu, piv = LUFactor.apply(A)
    zero = xp.diagonal(lu._data, 0, -2, -1) == 0
    info = xp.where(zero.any(-1), xp.argmax(zero, -1) + 1, 0).astype(xp.int32) if zero.shape[-1] else \
        xp.zeros(zero.shape[:-1], xp.int32)  # (an empty matrix: no diagonal to search)
    return result("linalg_lu_factor_ex", ("LU", "pivots", "info"), (lu, piv, Tensor._make(info)))


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True):
    """``(P, L, U)`` from ``lu_factor``'s packed result: ``A = P L U``."""
    from .matrix import tril, triu

    m, n = LU_data._data.shape[-2:]
    k = min(m, n)
    P = Tensor._make(permutation(LU_pivots._data, m, LU_data._data.dtype)) if unpack_pivots else \
        Tensor._make(xp.zeros((0,), LU_data._data.dtype))
    if not unpack_data:
        empty = Tensor._make(xp.zeros((0,), LU_data._data.dtype))
        return result("lu_unpack", ("P", "L", "U"), (P, empty, empty))
    eye = Tensor._make(xp.eye(m, k, dtype=LU_data._data.dtype))
    L = tril(LU_data[..., :, :k], -1) + eye
    U = triu(LU_data[..., :k, :])
    return result("lu_unpack", ("P", "L", "U"), (P, L, U))


@empty_in_float32
def lu(A: Tensor, *, pivot: bool = True):
    """``(P, L, U)`` with ``A = P L U`` (``torch.linalg.lu``)."""
    _check_lu_dims(A, "linalg.lu")
    check_matrix(A, "linalg.lu", square=False)
    if not pivot:
        raise RuntimeError("linalg.lu: LU without pivoting is not implemented on the CPU")
    packed, piv = LUFactor.apply(A)
    return result("linalg_lu", ("P", "L", "U"), lu_unpack(packed, piv))

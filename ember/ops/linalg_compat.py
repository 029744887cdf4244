"""PyTorch's top-level and Tensor spellings of linear algebra (``torch.inverse``, ``torch.cholesky_solve``,
``Tensor.lu``, ``torch.svd`` ...), written on ``ember.linalg``'s ops."""

from __future__ import annotations

from .._dtype import SCALAR_TYPE_NAMES
from .._tensor import Tensor
from ..autograd.graph import shown_as
from ..return_types import result
from .decompositions import cholesky as _cholesky
from .decompositions import lu_factor_ex, lu_unpack
from .decompositions import qr as _qr
from .decompositions import svd as _svd
from .linalg import matmul
from .solve import (
    LinAlgError,
    check_matrix,
    det,
    inv,
    logdet,
    matrix_exp,
    pinv,
    refuse_low_precision,
    slogdet,
    solve_triangular,
)
from .solve import cross as _cross

__all__ = ["inverse", "det", "logdet", "slogdet", "cholesky", "cholesky_solve", "cholesky_inverse",
           "triangular_solve", "lu", "lu_unpack", "lu_solve", "pinverse", "svd", "qr", "cross", "matrix_power",
           "matrix_exp"]


def inverse(input: Tensor) -> Tensor:
    """``torch.inverse``: ``linalg.inv``."""
    return inv(input)


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky`` (deprecated in PyTorch, which warns once): ``linalg.cholesky``."""
    from .. import _warnings

    _warnings.warn_once(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch "
        "release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
        "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
        "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.")
    return shown_as(_cholesky(input, upper=upper), "CholeskyBackward0")  # (linalg.cholesky's is LinalgCholeskyEx)


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """X with ``A X = B``, given A's Cholesky factor L (``A = L L^H``; ``U^H U`` when ``upper``)."""
    from .solve import solve

    # solve(L L^T, B): PyTorch's gradient for L is this composition's (dense, not confined to the triangle)
    check_matrix(L, "cholesky_solve", arg="L", low_precision=False)
    _check_b_and_a(B, L)
    refuse_low_precision(L, "cholesky_solve")
    factor = _triangle_valued(L, upper)
    return solve(matmul(factor.mH, factor) if upper else matmul(factor, factor.mH), B)


def _triangle_valued(L: Tensor, upper: bool) -> Tensor:
    """A Cholesky factor as PyTorch's kernels read it: the value of L's triangle (the other one's entries change
    nothing), the gradient passed to L whole, so the composition's gradient is PyTorch's for a triangular L."""
    from .matrix import tril, triu

    return L - (L - (triu(L) if upper else tril(L))).detach()


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """A^-1 from A's Cholesky factor L (``A = L L^H``; ``U^H U`` when ``upper``), reading only L's triangle, as
    PyTorch's kernel. PyTorch's gradient is this composition's for a triangular L (dense, -(A^-1 (G + G^H) A^-1) L,
    not confined to the triangle): ``_triangle_valued``."""
    check_matrix(L, "cholesky_inverse", arg="L")
    factor = _triangle_valued(L, upper)
    return inv(matmul(factor.mH, factor) if upper else matmul(factor, factor.mH))


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False):
    """``(solution, cloned_coefficient)``: X with ``op(A) X = b``, op(A) = A or A^T, reading A's triangle
    (deprecated in PyTorch, which warns once)."""
    from .. import _warnings

    # (PyTorch's message runs "solve_triangularand" together)
    _warnings.warn_once(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a "
        "future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a "
        "copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
        "X = torch.linalg.solve_triangular(A, B).")
    check_matrix(A, "triangular_solve", low_precision=False)
    _check_b_and_a(b, A)
    refuse_low_precision(A, "triangular_solve")
    tri = A.mT if transpose else A
    x = shown_as(solve_triangular(tri, b, upper=upper != transpose, unitriangular=unitriangular),
                 "TriangularSolveBackward0")  # (PyTorch's own op and node)
    return result("triangular_solve", ("solution", "cloned_coefficient"), (x, A.clone()))


def _check_b_and_a(b: Tensor, A: Tensor) -> None:
    if isinstance(b, Tensor) and b.dtype != A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{SCALAR_TYPE_NAMES[b.dtype.name]} and A of type {SCALAR_TYPE_NAMES[A.dtype.name]} "
                           "instead.")


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False):
    """``(LU, pivots)`` (and ``infos`` when ``get_infos``): ``torch.lu``, which is ``linalg.lu_factor_ex``
    (PyTorch warns once that it is deprecated)."""
    from .. import _warnings

    _warnings.warn_once("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
                        "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
                        "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
                        "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
                        "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)",
                        # from PyTorch's Python torch.lu, or its Tensor.lu
                        module={"ember._tensor_methods": "torch._tensor", "": "torch.functional"})
    out = lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return out.LU, out.pivots, out.info
    if out.info._data.any():
        raise LinAlgError("lu: the factorization found a zero on U's diagonal (a singular matrix); "
                          "pass get_infos=True to receive the info instead")
    return out.LU, out.pivots


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve`` (deprecated in PyTorch, which warns once): X with ``A X = b`` from A's LU factorization."""
    from .. import _warnings
    from ..linalg import lu_solve as _lu_solve

    # (PyTorch's message runs "lu_solveand" together)
    _warnings.warn_once("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
                        "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                        "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, "
                        "B)")

    return _lu_solve(LU_data, LU_pivots, b)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: ``linalg.pinv`` with a relative tolerance ``rcond``."""
    return pinv(input, rtol=rcond)


def symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True, *, out=None):
    """Removed from PyTorch (since 1.9): raises its RuntimeError, which says what replaces it."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. The default behavior has changed "
        "from using the upper triangular portion of the matrix by default to using the lower triangular portion."
        "\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' "
        "if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def matrix_rank(input: Tensor, tol=None, symmetric: bool = False, *, out=None):
    """Removed from PyTorch (since 1.9): raises its RuntimeError, which names ``torch.linalg.matrix_rank``."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed.\nPlease use the "
        "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
        "`torch.linalg.matrix_rank()` to 'hermitian'.")


def svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """``torch.svd`` (deprecated in PyTorch): ``(U, S, V)`` with V, not V^T; zeros for U and V without
    ``compute_uv``."""
    from ..ops.elementwise import mul

    u, s, vh = _svd(input, full_matrices=not some)
    if not compute_uv:
        u, vh = mul(u, 0).detach(), mul(vh, 0).detach()
    return result("svd", ("U", "S", "V"), (u, s, vh.mT))


def qr(input: Tensor, some: bool = True):
    """``torch.qr`` (deprecated in PyTorch, which warns once): ``linalg.qr`` in "reduced" (some) or "complete"
    mode."""
    from .. import _warnings

    _warnings.warn_once("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
                        "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, "
                        "R = torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some "
                        "else 'complete')")
    q, r = _qr(input, mode="reduced" if some else "complete")
    return result("qr", ("Q", "R"), (q, r))


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """``torch.cross``: along ``dim``, by default the first dimension of size 3 (``linalg.cross`` uses -1)."""
    if dim is None:
        from .. import _warnings

        _warnings.warn_once("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
                            "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
                            "change to agree with that of linalg.cross in a future release.")  # once, as PyTorch's
        dim = next((i for i, n in enumerate(input._data.shape) if n == 3), -1)
    return _cross(input, other, dim=dim)


def matrix_power(input: Tensor, n: int) -> Tensor:
    from ..linalg import matrix_power as _matrix_power

    return _matrix_power(input, n)

"""Tensor methods for PyTorch's Tensor spellings of linear algebra (``ember/ops/linalg_compat.py``):
``inverse``, ``det``, ``cholesky``, ``lu``, ``svd``, ``qr`` ..."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class LinalgCompatMethods:
    __slots__ = ()

    def inverse(self) -> Tensor:
        return ops.linalg_compat.inverse(self)

    def det(self) -> Tensor:
        return ops.linalg_compat.det(self)

    def logdet(self) -> Tensor:
        return ops.linalg_compat.logdet(self)

    def slogdet(self) -> Any:
        return ops.linalg_compat.slogdet(self)

    def cholesky(self, upper: bool = False) -> Tensor:
        return ops.linalg_compat.cholesky(self, upper)

    def cholesky_solve(self, input2: Tensor, upper: bool = False) -> Tensor:
        return ops.linalg_compat.cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper: bool = False) -> Tensor:
        return ops.linalg_compat.cholesky_inverse(self, upper)

    def triangular_solve(self, A: Tensor, upper: bool = True, transpose: bool = False,
                         unitriangular: bool = False) -> Any:
        return ops.linalg_compat.triangular_solve(self, A, upper, transpose, unitriangular)

    def lu(self, pivot: bool = True, get_infos: bool = False) -> Any:
        return ops.linalg_compat.lu(self, pivot, get_infos)

    def lu_solve(self, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
        return ops.linalg_compat.lu_solve(self, LU_data, LU_pivots)

    def pinverse(self, rcond: float = 1e-15) -> Tensor:
        return ops.linalg_compat.pinverse(self, rcond)

    def svd(self, some: bool = True, compute_uv: bool = True) -> Any:
        return ops.linalg_compat.svd(self, some, compute_uv)

    def qr(self, some: bool = True) -> Any:
        return ops.linalg_compat.qr(self, some)

    def cross(self, other: Tensor, dim: int | None = None) -> Tensor:
        return ops.linalg_compat.cross(self, other, dim)

    def matrix_power(self, n: int) -> Tensor:
        return ops.linalg_compat.matrix_power(self, n)

    def matrix_exp(self) -> Tensor:
        return ops.linalg_compat.matrix_exp(self)

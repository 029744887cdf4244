"""Tensor methods for the matrix products ops (``ember/ops/linalg.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class LinalgMethods:
    __slots__ = ()

    def __matmul__(self, b: Tensor) -> Tensor:
        return ops.linalg.matmul(self, b)

    def __rmatmul__(self, other) -> Tensor:
        return ops.linalg.matmul(other, self)

    matmul = __matmul__

    def mm(self, b: Tensor) -> Tensor:
        return ops.linalg.mm(self, b)

    def bmm(self, b: Tensor) -> Tensor:
        return ops.linalg.bmm(self, b)

    def mv(self, v: Tensor) -> Tensor:
        return ops.linalg.mv(self, v)

    def dot(self, b: Tensor) -> Tensor:
        return ops.linalg.dot(self, b)

    def outer(self, b: Tensor) -> Tensor:
        return ops.linalg.outer(self, b)

    ger = outer

    def addmm(self, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
        return ops.linalg.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmm_(self, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
        """``addmm`` written into this tensor, which must have the product's shape (no broadcasting in place)."""
        out = (mat1.shape[0], mat2.shape[-1]) if mat1.dim() == 2 and mat2.dim() == 2 else None
        if out is not None and tuple(self.shape) != out:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
                               f"{list(out)} should match")
        return ops.inplace.pointwise_(self, ops.linalg.addmm, mat1, mat2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
        return ops.linalg.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addbmm(self, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
        return ops.linalg.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addmv(self, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
        return ops.linalg.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def addr(self, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
        return ops.linalg.addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def inner(self, b: Tensor) -> Tensor:
        return ops.linalg.inner(self, b)

    def kron(self, other: Tensor) -> Tensor:
        return ops.linalg.kron(self, other)

    def vdot(self, other: Tensor) -> Tensor:
        return ops.linalg.vdot(self, other)

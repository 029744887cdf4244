"""Tensor methods for the matrix products ops (``ember/ops/linalg.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)

from .._arg_aliases import is_tensor
from .._deprecated_overloads import beta_first as _number_first


def _product_into(x: Tensor, op, first: Tensor, second: Tensor, beta, alpha) -> Tensor:
    """``x.addr_(vec1, vec2)`` and its siblings: ``op``'s result written into ``x``, which must have its shape (no
    broadcasting in place, as PyTorch's)."""

    def into_shape(t: Tensor, a: Tensor, b: Tensor, **scales) -> Tensor:
        out = op(t, a, b, **scales)
        if out.shape != t.shape:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(t.shape)} and output tensor size "
                               f"{list(out.shape)} should match")
        return out

    return ops.inplace.pointwise_(x, into_shape, first, second, beta=beta, alpha=alpha)


class LinalgMethods:
    __slots__ = ()

    def __matmul__(self, other: Tensor) -> Tensor:
        if not is_tensor(other):  # (Python's TypeError, as for PyTorch's operator: matmul takes tensors only)
            return NotImplemented
        return ops.linalg.matmul(self, other)

    def __rmatmul__(self, other) -> Tensor:
        if not is_tensor(other):
            return NotImplemented
        return ops.linalg.matmul(other, self)

    def matmul(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("matmul", other, 1)
        return ops.linalg.matmul(self, other)

    def mm(self, mat2: Tensor) -> Tensor:
        ops.linalg.require_tensors("mm", 1, mat2=mat2)
        return ops.linalg.mm(self, mat2)

    def bmm(self, mat2: Tensor) -> Tensor:
        ops.linalg.require_tensors("bmm", 1, mat2=mat2)
        return ops.linalg.bmm(self, mat2)

    def mv(self, vec: Tensor) -> Tensor:
        ops.linalg.require_tensors("mv", 1, vec=vec)
        return ops.linalg.mv(self, vec)

    def dot(self, tensor: Tensor) -> Tensor:
        ops.linalg.require_tensors("dot", 1, tensor=tensor)
        return ops.linalg.dot(self, tensor)

    def outer(self, vec2: Tensor) -> Tensor:
        ops.linalg.require_tensors("outer", 1, vec2=vec2)
        return ops.linalg.outer(self, vec2)

    ger = outer

    # ``*number_first``: PyTorch's deprecated ``x.addmm(beta, [alpha,] mat1, mat2)`` (ember/_deprecated_overloads.py)
    def addmm(self, mat1: Tensor, mat2: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
        if number_first:
            mat1, mat2, beta, alpha = _number_first("addmm", ("mat1", "mat2"), (mat1, mat2, *number_first), beta,
                                                    alpha)
        ops.linalg.require_tensors("addmm", 1, mat1=mat1, mat2=mat2)
        return ops.linalg.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmm_(self, mat1: Tensor, mat2: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
        """``addmm`` written into this tensor, which must have the product's shape (no broadcasting in place)."""
        if number_first:
            mat1, mat2, beta, alpha = _number_first("addmm_", ("mat1", "mat2"), (mat1, mat2, *number_first), beta,
                                                    alpha)
        ops.linalg.require_tensors("addmm_", 1, mat1=mat1, mat2=mat2)
        out = (mat1.shape[0], mat2.shape[-1]) if mat1.dim() == 2 and mat2.dim() == 2 else None
        if out is not None and tuple(self.shape) != out:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
                               f"{list(out)} should match")
        return ops.inplace.pointwise_(self, ops.linalg.addmm, mat1, mat2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1: Tensor, batch2: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
        if number_first:
            batch1, batch2, beta, alpha = _number_first("baddbmm", ("batch1", "batch2"),
                                                        (batch1, batch2, *number_first), beta, alpha)
        ops.linalg.require_tensors("baddbmm", 1, batch1=batch1, batch2=batch2)
        return ops.linalg.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def baddbmm_(self, batch1: Tensor, batch2: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
        if number_first:
            batch1, batch2, beta, alpha = _number_first("baddbmm_", ("batch1", "batch2"),
                                                        (batch1, batch2, *number_first), beta, alpha)
        ops.linalg.require_tensors("baddbmm_", 1, batch1=batch1, batch2=batch2)
        return _product_into(self, ops.linalg.baddbmm, batch1, batch2, beta, alpha)

    def addbmm(self, batch1: Tensor, batch2: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
        if number_first:
            batch1, batch2, beta, alpha = _number_first("addbmm", ("batch1", "batch2"),
                                                        (batch1, batch2, *number_first), beta, alpha)
        ops.linalg.require_tensors("addbmm", 1, batch1=batch1, batch2=batch2)
        return ops.linalg.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addbmm_(self, batch1: Tensor, batch2: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
        if number_first:
            batch1, batch2, beta, alpha = _number_first("addbmm_", ("batch1", "batch2"),
                                                        (batch1, batch2, *number_first), beta, alpha)
        ops.linalg.require_tensors("addbmm_", 1, batch1=batch1, batch2=batch2)
        return _product_into(self, ops.linalg.addbmm, batch1, batch2, beta, alpha)

    def addmv(self, mat: Tensor, vec: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
        if number_first:
            mat, vec, beta, alpha = _number_first("addmv", ("mat", "vec"), (mat, vec, *number_first), beta, alpha)
        ops.linalg.require_tensors("addmv", 1, mat=mat, vec=vec)
        return ops.linalg.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def addmv_(self, mat: Tensor, vec: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
        if number_first:
            mat, vec, beta, alpha = _number_first("addmv_", ("mat", "vec"), (mat, vec, *number_first), beta, alpha)
        ops.linalg.require_tensors("addmv_", 1, mat=mat, vec=vec)
        return _product_into(self, ops.linalg.addmv, mat, vec, beta, alpha)

    def addr(self, vec1: Tensor, vec2: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
        if number_first:
            vec1, vec2, beta, alpha = _number_first("addr", ("vec1", "vec2"), (vec1, vec2, *number_first), beta,
                                                    alpha)
        ops.linalg.require_tensors("addr", 1, vec1=vec1, vec2=vec2)
        return ops.linalg.addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def addr_(self, vec1: Tensor, vec2: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
        if number_first:
            vec1, vec2, beta, alpha = _number_first("addr_", ("vec1", "vec2"), (vec1, vec2, *number_first), beta,
                                                    alpha)
        ops.linalg.require_tensors("addr_", 1, vec1=vec1, vec2=vec2)
        return _product_into(self, ops.linalg.addr, vec1, vec2, beta, alpha)

    def inner(self, other: Tensor) -> Tensor:
        ops.linalg.require_tensors("inner", 1, other=other)
        return ops.linalg.inner(self, other)

    def kron(self, other: Tensor) -> Tensor:
        return ops.linalg.kron(self, other)

    def vdot(self, other: Tensor) -> Tensor:
        return ops.linalg.vdot(self, other)

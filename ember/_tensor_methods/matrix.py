"""Tensor methods for the matrix structure ops (``ember/ops/matrix.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class MatrixMethods:
    __slots__ = ()

    def tril(self, diagonal: int = 0) -> Tensor:
        return ops.matrix.tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        return ops.matrix.triu(self, diagonal)

    def tril_(self, diagonal: int = 0) -> Tensor:
        return ops.matrix.tril_(self, diagonal)

    def triu_(self, diagonal: int = 0) -> Tensor:
        return ops.matrix.triu_(self, diagonal)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        return ops.matrix.diagonal(self, offset, dim1, dim2)

    def diag(self, diagonal: int = 0) -> Tensor:
        return ops.matrix.diag(self, diagonal)

    def trace(self) -> Tensor:
        return ops.matrix.trace(self)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
        return ops.matrix.diag_embed(self, offset, dim1, dim2)

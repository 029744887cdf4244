"""Tensor methods for the cumulative ops (``ember/ops/cumulative.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._dtype import number_parameters

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class CumulativeMethods:
    __slots__ = ()

    def cumprod(self, dim: int, *, dtype=None) -> Tensor:
        return ops.cumulative.cumprod(self, dim, dtype=dtype)

    def cummax(self, dim: int) -> Any:
        return ops.cumulative.cummax(self, dim)

    def cummin(self, dim: int) -> Any:
        return ops.cumulative.cummin(self, dim)

    @number_parameters(n="int", dim="int")
    def diff(self, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None) -> Tensor:
        return ops.cumulative.diff(self, n, dim, prepend, append)

    def logcumsumexp(self, dim: int) -> Tensor:
        return ops.cumulative.logcumsumexp(self, dim)

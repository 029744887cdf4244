"""Tensor methods for the updates at indices ops (``ember/ops/index_update.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class IndexUpdateMethods:
    __slots__ = ()

    def index_add(self, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
        return ops.index_update.index_add(self, dim, index, source, alpha=alpha)

    def index_copy(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return ops.index_update.index_copy(self, dim, index, source)

    def index_fill(self, dim: int, index: Tensor, value) -> Tensor:
        return ops.index_update.index_fill(self, dim, index, value)

    def index_add_(self, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
        return ops.index_update.index_add_(self, dim, index, source, alpha=alpha)

    def index_copy_(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return ops.index_update.index_copy_(self, dim, index, source)

    def index_fill_(self, dim: int, index: Tensor, value) -> Tensor:
        return ops.index_update.index_fill_(self, dim, index, value)

    def index_put(self, indices, values, accumulate: bool = False) -> Tensor:
        indices = ops.index_update.public_indices("index_put", indices)
        return ops.index_update.indexed_put(self, indices, values, accumulate)

    def index_put_(self, indices, values, accumulate: bool = False) -> Tensor:
        indices = ops.index_update.public_indices("index_put_", indices)
        return ops.index_update.index_put_(self, indices, values, accumulate)

    def put(self, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        return ops.index_update.put(self, index, source, accumulate)

    def put_(self, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        return ops.index_update.put_(self, index, source, accumulate)

    def masked_fill_(self, mask: Tensor, value) -> Tensor:
        return ops.index_update.masked_fill_(self, mask, value)

    def fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
        return ops.index_update.fill_diagonal_(self, fill_value, wrap)

    def masked_scatter(self, mask: Tensor, source: Tensor) -> Tensor:
        return ops.index_update.masked_scatter(self, mask, source)

    def masked_scatter_(self, mask: Tensor, source: Tensor) -> Tensor:
        return ops.index_update.masked_scatter_(self, mask, source)

    def scatter_(self, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None) -> Tensor:
        return ops.index_update.scatter_(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add_(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return ops.index_update.scatter_add_(self, dim, index, src)

    def scatter_reduce(self, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                       include_self: bool = True) -> Tensor:
        return ops.index_update.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def scatter_reduce_(self, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                        include_self: bool = True) -> Tensor:
        return ops.index_update.scatter_reduce_(self, dim, index, src, reduce, include_self=include_self)

    def index_reduce(self, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                     include_self: bool = True) -> Tensor:
        return ops.index_update.index_reduce(self, dim, index, source, reduce, include_self=include_self)

    def index_reduce_(self, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                      include_self: bool = True) -> Tensor:
        return ops.index_update.index_reduce_(self, dim, index, source, reduce, include_self=include_self)

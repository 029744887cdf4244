"""Tensor methods for the indexing and masking ops (``ember/ops/indexing.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class IndexingMethods:
    __slots__ = ()

    def __getitem__(self, idx) -> Tensor:
        return ops.indexing.getitem(self, idx)

    def __setitem__(self, idx, value) -> None:
        if value.__class__ is not float and value.__class__ is not int:
            value = ops.indexing.assigned_value(self, value)
        if isinstance(value, ops.indexing.Tensor) and value._data.dtype != self._data.dtype and \
                not ops.indexing._only_basic(idx):  # (index tensors: PyTorch's index_put_, which keeps dtypes but
            parts = idx if idx.__class__ is tuple else (idx,)  # for one value through a bool mask: masked_fill_)
            if not ops.index_update.fills_through_mask(parts, value, True):
                ops.index_update.refuse_index_put_dtype(self, idx, value)
            value = ops.index_update.mask_fill_value(self, value)
        return ops.indexing.setitem(self, idx, value)

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        return ops.indexing.narrow(self, dim, start, length)

    def select(self, dim: int, index: int) -> Tensor:
        return ops.indexing.select(self, dim, index)

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return ops.indexing.gather(self, dim, index)

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return ops.indexing.scatter_add(self, dim, index, src)

    def scatter(self, dim: int, index: Tensor, src, *, reduce: str | None = None) -> Tensor:
        return ops.indexing.scatter(self, dim, index, src, reduce=reduce)

    def index_select(self, dim: int, index: Tensor) -> Tensor:
        return ops.indexing.index_select(self, dim, index)

    def masked_fill(self, mask: Tensor, value) -> Tensor:
        return ops.indexing.masked_fill(self, mask, value)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        return ops.indexing.nonzero(self, as_tuple=as_tuple)

    def argwhere(self) -> Tensor:
        return ops.indexing.argwhere(self)

    def masked_select(self, mask: Tensor) -> Tensor:
        return ops.indexing.masked_select(self, mask)

    def where(self, condition: Tensor, other) -> Tensor:
        return ops.indexing.where(condition, self, other)

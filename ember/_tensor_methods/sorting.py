"""Tensor methods for the sorting ops (``ember/ops/sorting.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._not_given import NOT_GIVEN

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class SortingMethods:
    __slots__ = ()

    def sort(self, dim: int = -1, descending: bool = False, *, stable: bool | None = NOT_GIVEN) -> Any:
        return ops.sorting.sort(self, dim, descending, stable=stable)

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
        return ops.sorting.argsort(self, dim, descending, stable=stable)

    def msort(self) -> Tensor:
        return ops.sorting.msort(self)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        return ops.sorting.topk(self, k, dim, largest, sorted)

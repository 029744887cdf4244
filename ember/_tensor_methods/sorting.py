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

    def sort(self, *args, dim: int = NOT_GIVEN, descending: bool = NOT_GIVEN, stable: bool | None = NOT_GIVEN) -> Any:
        # (PyTorch's two overloads: (dim=-1, descending=False) or (*, stable, dim=-1, descending=False))
        dim, descending = ops.sorting.sort_arguments("sort", True, args, dim, descending, stable)
        return ops.sorting._sort(self, dim, descending, stable)

    def argsort(self, *args, dim: int = NOT_GIVEN, descending: bool = NOT_GIVEN, stable: bool = NOT_GIVEN) -> Tensor:
        dim, descending = ops.sorting.sort_arguments("argsort", True, args, dim, descending, stable)
        return ops.sorting._sort(self, dim, descending, stable).indices

    def msort(self) -> Tensor:
        return ops.sorting.msort(self)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        return ops.sorting.topk(self, k, dim, largest, sorted)

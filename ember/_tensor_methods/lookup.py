"""Tensor methods for the lookup ops (``ember/ops/lookup.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class LookupMethods:
    __slots__ = ()

    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
               dim: int | None = None) -> Any:
        return ops.lookup.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                           dim: int | None = None) -> Any:
        return ops.lookup.unique_consecutive(self, return_inverse, return_counts, dim)

    def bincount(self, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
        return ops.lookup.bincount(self, weights, minlength)

    def take(self, index: Tensor) -> Tensor:
        return ops.lookup.take(self, index)

    def take_along_dim(self, indices: Tensor, dim: int | None = None) -> Tensor:
        return ops.lookup.take_along_dim(self, indices, dim)

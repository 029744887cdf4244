"""Tensor methods for the data movement ops (``ember/ops/movement.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class MovementMethods:
    __slots__ = ()

    def roll(self, shifts, dims=None) -> Tensor:
        return ops.movement.roll(self, shifts, dims)

    def repeat_interleave(self, repeats=None, dim: int | None = None, *, output_size: int | None = None) -> Tensor:
        return ops.movement.repeat_interleave(self, repeats, dim, output_size=output_size)

    def tile(self, *dims, **kwargs) -> Tensor:
        """``tile(2, 3)``, ``tile((2, 3))`` or ``tile(dims=(2, 3))``, as PyTorch's method takes any."""
        if not dims and "dims" not in kwargs:
            raise ops.shape.missing_sizes("tile", "dims")
        return ops.movement.tile(self, kwargs.pop("dims") if "dims" in kwargs else dims[0] if len(dims) == 1 else dims,
                                 **kwargs)

    def movedim(self, source, destination) -> Tensor:
        return ops.movement.movedim(self, source, destination)

    moveaxis = movedim

    def tensor_split(self, indices_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
        return ops.movement.tensor_split(self, indices_or_sections, dim)

    def hsplit(self, indices_or_sections) -> tuple[Tensor, ...]:
        return ops.movement.hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections) -> tuple[Tensor, ...]:
        return ops.movement.vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections) -> tuple[Tensor, ...]:
        return ops.movement.dsplit(self, indices_or_sections)

    def fliplr(self) -> Tensor:
        return ops.movement.fliplr(self)

    def flipud(self) -> Tensor:
        return ops.movement.flipud(self)

    def rot90(self, k: int = 1, dims=(0, 1)) -> Tensor:
        return ops.movement.rot90(self, k, dims)

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        return ops.strided.unfold(self, dimension, size, step)

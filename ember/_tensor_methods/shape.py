"""Tensor methods for the shape and view ops (``ember/ops/shape.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class ShapeMethods:
    __slots__ = ()

    def reshape(self, *sizes, shape=None) -> Tensor:
        return ops.shape.reshape(self, *sizes) if shape is None else ops.shape.reshape(self, *sizes, shape=shape)

    def view(self, *shape, size=None, dtype=None) -> Tensor:
        """``self`` with another shape over the same storage, or (given a dtype) its bytes read as that dtype."""
        if size is None and dtype is None:  # (no keywords passed on: attention views several times a layer)
            return ops.shape.view(self, *shape)
        return ops.shape.view(self, *shape, size=size, dtype=dtype)

    def _is_view(self) -> bool:
        """Whether this tensor is a view that autograd follows to its ``_base`` (PyTorch's private predicate: False
        for a view of an inference tensor, which keeps no view metadata)."""
        return self._base is not None

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return ops.shape.flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes) -> Tensor:
        return ops.shape.unflatten(self, dim, sizes)

    def permute(self, *sizes, dims=None) -> Tensor:
        return ops.shape.permute(self, *sizes) if dims is None else ops.shape.permute(self, *sizes, dims=dims)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return ops.shape.transpose(self, dim0, dim1)

    swapaxes = transpose

    def t(self) -> Tensor:
        return ops.shape.t(self)

    def as_strided(self, size, stride, storage_offset: int | None = None) -> Tensor:
        return ops.strided.as_strided(self, size, stride, storage_offset)

    def expand(self, *sizes, size=None) -> Tensor:
        return ops.shape.expand(self, *sizes, size=size)

    def expand_as(self, other: Tensor) -> Tensor:
        return ops.shape.expand_as(self, other)

    def broadcast_to(self, shape) -> Tensor:
        return ops.shape.broadcast_to(self, shape)

    def squeeze(self, dim=None) -> Tensor:
        return ops.shape.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> Tensor:
        return ops.shape.unsqueeze(self, dim)

    def contiguous(self, memory_format=None) -> Tensor:
        return ops.shape.contiguous(self, memory_format)

    def split_with_sizes(self, split_sizes: list[int], dim: int = 0) -> tuple[Tensor, ...]:
        return ops.shape.split_with_sizes(self, split_sizes, dim)

    def split(self, split_size: int | list[int], dim: int = 0) -> tuple[Tensor, ...]:
        """``split_size``: PyTorch's name for the parameter of the method (``torch.split`` calls it
        ``split_size_or_sections``)."""
        return ops.shape.split(self, split_size, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        return ops.shape.chunk(self, chunks, dim)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        return ops.shape.unbind(self, dim)

    def flip(self, *args, dims=None) -> Tensor:
        """``x.flip(dims)``, ``x.flip(0, 1)`` or ``x.flip(dims=(0, 1))``, as PyTorch's method takes them."""
        if dims is None:
            if not args:
                raise TypeError('flip() missing 1 required positional arguments: "dims"')
            dims = args[0] if len(args) == 1 else args
        elif args:
            raise TypeError("flip() got multiple values for argument 'dims'")
        return ops.shape.flip(self, dims)

    def repeat(self, *sizes, repeats=None) -> Tensor:
        return ops.shape.repeat(self, *sizes, repeats=repeats)

    def view_as(self, other: Tensor) -> Tensor:
        return ops.shape.view(self, other._data.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return ops.shape.reshape(self, other._data.shape)

    def ravel(self) -> Tensor:
        return ops.shape.ravel(self)

    swapdims = transpose

    @property
    def T(self) -> Tensor:
        return ops.shape.T(self)

    @property
    def mT(self) -> Tensor:
        return ops.shape.mT(self)

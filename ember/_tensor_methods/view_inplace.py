"""Tensor methods for the in-place view changes ops (``ember/ops/view_inplace.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class ViewInplaceMethods:
    __slots__ = ()

    def unsqueeze_(self, dim: int) -> Tensor:
        return ops.view_inplace.unsqueeze_(self, dim)

    def squeeze_(self, dim=None) -> Tensor:
        return ops.view_inplace.squeeze_(self, dim)

    def t_(self) -> Tensor:
        return ops.view_inplace.t_(self)

    def transpose_(self, dim0: int, dim1: int) -> Tensor:
        return ops.view_inplace.transpose_(self, dim0, dim1)

    swapdims_ = transpose_
    swapaxes_ = transpose_

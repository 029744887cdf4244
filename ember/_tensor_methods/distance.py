"""Tensor methods for the distance ops (``ember/ops/distance.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class DistanceMethods:
    __slots__ = ()

    def dist(self, x2: Tensor, p: float = 2) -> Tensor:
        ops.elementwise.require_tensor("dist", x2, 1)
        return ops.distance.dist(self, x2, p)

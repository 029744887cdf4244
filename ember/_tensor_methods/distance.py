"""Tensor methods for the distance ops (``ember/ops/distance.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)

from .._dtype import method_scalars


class DistanceMethods:
    __slots__ = ()

    @method_scalars  # (p's refusals name its position as the method's: 2)
    def dist(self, x2: Tensor, p: float = 2) -> Tensor:
        ops.elementwise.require_tensor("dist", x2, 1)
        return ops.distance.dist(self, x2, p)

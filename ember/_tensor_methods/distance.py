"""Tensor methods for the distance ops (``ember/ops/distance.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ops

if TYPE_CHECKING:
    from .._tensor import Tensor


class DistanceMethods:
    __slots__ = ()

    def dist(self, x2: Tensor, p: float = 2) -> Tensor:
        return ops.distance.dist(self, x2, p)

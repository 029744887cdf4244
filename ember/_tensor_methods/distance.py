"""Tensor methods for the distance ops (``ember/ops/distance.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)

from .._arg_aliases import is_number, is_tensor
from .._dtype import scalar_argument_error
from .._size import c_type_name


class DistanceMethods:
    __slots__ = ()

    def dist(self, x2: Tensor, p: float = 2) -> Tensor:
        ops.elementwise.require_tensor("dist", x2, 1)
        if not is_number(p) and not is_tensor(p):  # (the method's p is its position 2)
            raise scalar_argument_error("dist", "p", "Number", c_type_name(p), 2)
        return ops.distance.dist(self, x2, p)

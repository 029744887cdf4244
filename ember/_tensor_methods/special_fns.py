"""Tensor methods for the special functions (``ember/ops/special_fns.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._dtype import number_parameters

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class SpecialMethods:
    __slots__ = ()

    def sinc(self) -> Tensor:
        return ops.special_fns.sinc(self)

    def deg2rad(self) -> Tensor:
        return ops.special_fns.deg2rad(self)

    def rad2deg(self) -> Tensor:
        return ops.special_fns.rad2deg(self)

    def i0(self) -> Tensor:
        return ops.special_fns.i0(self)

    @number_parameters(p="Number", dim="int", maxnorm="Number")
    def renorm(self, p: float, dim: int, maxnorm: float) -> Tensor:
        return ops.special_fns.renorm(self, p, dim, maxnorm)

    def sinc_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.special_fns.sinc)

    def deg2rad_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.special_fns.deg2rad)

    def rad2deg_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.special_fns.rad2deg)

    def i0_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.special_fns.i0)

    @number_parameters(p="Number", dim="int", maxnorm="Number")
    def renorm_(self, p: float, dim: int, maxnorm: float) -> Tensor:
        return ops.inplace.pointwise_(self, ops.special_fns.renorm, p, dim, maxnorm)

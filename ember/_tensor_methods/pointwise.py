"""Tensor methods for the more pointwise math ops (``ember/ops/pointwise.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


def _in_place(x: Tensor, op, other) -> Tensor:
    """``x.op_(other)``: x <- op(x, other), recorded when x or ``other`` needs a gradient (``_write_back``)."""
    return ops.index_update._write_back(x, lambda t: op(t, other), other)


class PointwiseMethods:
    __slots__ = ()

    def tan(self) -> Tensor:
        return ops.pointwise.tan(self)

    def atan(self) -> Tensor:
        return ops.pointwise.atan(self)

    arctan = atan

    def asin(self) -> Tensor:
        return ops.pointwise.asin(self)

    arcsin = asin

    def acos(self) -> Tensor:
        return ops.pointwise.acos(self)

    arccos = acos

    def sinh(self) -> Tensor:
        return ops.pointwise.sinh(self)

    def cosh(self) -> Tensor:
        return ops.pointwise.cosh(self)

    def asinh(self) -> Tensor:
        return ops.pointwise.asinh(self)

    arcsinh = asinh

    def acosh(self) -> Tensor:
        return ops.pointwise.acosh(self)

    arccosh = acosh

    def atanh(self) -> Tensor:
        return ops.pointwise.atanh(self)

    arctanh = atanh

    def log2(self) -> Tensor:
        return ops.pointwise.log2(self)

    def log10(self) -> Tensor:
        return ops.pointwise.log10(self)

    def expm1(self) -> Tensor:
        return ops.pointwise.expm1(self)

    def exp2(self) -> Tensor:
        return ops.pointwise.exp2(self)

    def erf(self) -> Tensor:
        return ops.pointwise.erf(self)

    def erfc(self) -> Tensor:
        return ops.pointwise.erfc(self)

    def erfinv(self) -> Tensor:
        return ops.pointwise.erfinv(self)

    def logit(self, eps: float | None = None) -> Tensor:
        return ops.pointwise.logit(self, eps)

    def frac(self) -> Tensor:
        return ops.pointwise.frac(self)

    def sgn(self) -> Tensor:
        return ops.pointwise.sgn(self)

    def atan2(self, other: Tensor) -> Tensor:
        return ops.pointwise.atan2(self, other)

    arctan2 = atan2

    def lerp(self, end: Tensor, weight) -> Tensor:
        return ops.pointwise.lerp(self, end, weight)

    def clamp_min(self, min) -> Tensor:
        return ops.pointwise.clamp_min(self, min)

    def clamp_max(self, max) -> Tensor:
        return ops.pointwise.clamp_max(self, max)

    def lerp_(self, end, weight) -> Tensor:
        pw = ops.pointwise
        return ops.index_update._write_back(self, lambda t: pw.lerp(t, end, weight), end, weight)

    def clamp_min_(self, min) -> Tensor:
        return _in_place(self, ops.pointwise.clamp_min, min)

    def clamp_max_(self, max) -> Tensor:
        return _in_place(self, ops.pointwise.clamp_max, max)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
        return ops.pointwise.nan_to_num(self, nan, posinf, neginf)

    def logaddexp(self, other: Tensor) -> Tensor:
        return ops.pointwise.logaddexp(self, other)

    def logaddexp2(self, other: Tensor) -> Tensor:
        return ops.pointwise.logaddexp2(self, other)

    def hypot(self, other: Tensor) -> Tensor:
        return ops.pointwise.hypot(self, other)

    def fmod(self, other) -> Tensor:
        return ops.pointwise.fmod(self, other)

    def fmax(self, other: Tensor) -> Tensor:
        return ops.pointwise.fmax(self, other)

    def fmin(self, other: Tensor) -> Tensor:
        return ops.pointwise.fmin(self, other)

    def copysign(self, other) -> Tensor:
        return ops.pointwise.copysign(self, other)

    def copysign_(self, other) -> Tensor:
        return _in_place(self, ops.pointwise.copysign, other)

    def atan2_(self, other) -> Tensor:
        return _in_place(self, ops.pointwise.atan2, other)

    arctan2_ = atan2_

    def hypot_(self, other) -> Tensor:
        return _in_place(self, ops.pointwise.hypot, other)

    def fmod_(self, other) -> Tensor:
        return _in_place(self, ops.pointwise.fmod, other)

"""Tensor methods for the unary math ops (``ember/ops/unary.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._not_given import NOT_GIVEN

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class UnaryMethods:
    __slots__ = ()

    def __neg__(self) -> Tensor:
        return ops.unary.neg(self)

    def __abs__(self) -> Tensor:
        return ops.unary.abs(self)

    def __pos__(self) -> Tensor:
        return ops.unary.positive(self)

    neg = __neg__
    negative = __neg__
    positive = __pos__
    abs = __abs__

    def exp(self) -> Tensor:
        return ops.unary.exp(self)

    def log(self) -> Tensor:
        return ops.unary.log(self)

    def log1p(self) -> Tensor:
        return ops.unary.log1p(self)

    def sqrt(self) -> Tensor:
        return ops.unary.sqrt(self)

    def rsqrt(self) -> Tensor:
        return ops.unary.rsqrt(self)

    def sin(self) -> Tensor:
        return ops.unary.sin(self)

    def cos(self) -> Tensor:
        return ops.unary.cos(self)

    def tanh(self) -> Tensor:
        return ops.unary.tanh(self)

    def sigmoid(self) -> Tensor:
        return ops.unary.sigmoid(self)

    def relu(self) -> Tensor:
        return ops.unary.relu(self)

    def sign(self) -> Tensor:
        return ops.unary.sign(self)

    def floor(self) -> Tensor:
        return ops.unary.floor(self)

    def ceil(self) -> Tensor:
        return ops.unary.ceil(self)

    def round(self, *, decimals: int = NOT_GIVEN) -> Tensor:
        return ops.unary.round(self, decimals=ops.unary.decimals_argument(decimals, "round"))

    def trunc(self) -> Tensor:
        return ops.unary.trunc(self)

    fix = trunc  # (PyTorch's alias)

    def reciprocal(self) -> Tensor:
        return ops.unary.reciprocal(self)

    def clamp(self, min=None, max=None) -> Tensor:
        min, max = ops.unary.overload_bounds("clamp", min, max, method=True)
        return ops.unary.clamp(self, min, max)

    def clip(self, min=None, max=None) -> Tensor:
        min, max = ops.unary.overload_bounds("clip", min, max, method=True)
        return ops.unary.clamp(self, min, max)

    def square(self) -> Tensor:
        return ops.unary.square(self)

    absolute = __abs__

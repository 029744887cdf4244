"""Tensor methods for the gamma-family functions (``ember/ops/gamma_fns.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._arg_aliases import method_refusal
from .pointwise import _cast_checked_in_place

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class GammaMethods:
    __slots__ = ()

    def lgamma(self) -> Tensor:
        return ops.gamma_fns.lgamma(self)

    def digamma(self) -> Tensor:
        return ops.gamma_fns.digamma(self)

    def polygamma(self, n: int) -> Tensor:
        return ops.gamma_fns.polygamma(n, self)

    def polygamma_(self, n: int) -> Tensor:
        return ops.gamma_fns.polygamma_(self, n)

    def mvlgamma(self, p: int) -> Tensor:
        return ops.gamma_fns.mvlgamma(self, ops.gamma_fns.check_mvlgamma(self, p, position=1))

    def mvlgamma_(self, p: int) -> Tensor:
        return ops.gamma_fns.mvlgamma_(self, p)

    def igamma(self, other: Tensor) -> Tensor:
        return ops.gamma_fns.igamma(self, other)

    def igammac(self, other: Tensor) -> Tensor:
        return ops.gamma_fns.igammac(self, other)

    def xlogy(self, other) -> Tensor:
        try:
            return ops.gamma_fns.xlogy(self, other)
        except TypeError as error:  # (a non-operand: PyTorch's words, on the error path only)
            raise method_refusal("xlogy", error, other) from None

    def xlogy_(self, other) -> Tensor:
        try:
            return _cast_checked_in_place(self, ops.gamma_fns.xlogy, other)
        except TypeError as error:  # (a non-operand: PyTorch's words, on the error path only)
            raise method_refusal("xlogy_", error, other) from None

    def lgamma_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.gamma_fns.lgamma)

    def digamma_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.gamma_fns.digamma)

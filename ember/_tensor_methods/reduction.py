"""Tensor methods for the reductions ops (``ember/ops/reduction.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._dtype import number_parameters
from .._not_given import NOT_GIVEN

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class ReductionMethods:
    __slots__ = ()

    # (keepdim=NOT_GIVEN: given at all, even False, without a dim it is PyTorch's TypeError)
    def sum(self, dim=NOT_GIVEN, keepdim: bool = NOT_GIVEN, *, dtype=None) -> Tensor:
        if dim is NOT_GIVEN and keepdim is not NOT_GIVEN:
            raise ops.reduction.keepdim_without_dim("sum", True, dtype, keepdim)
        return ops.reduction.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim=NOT_GIVEN, keepdim: bool = NOT_GIVEN, *, dtype=None) -> Tensor:
        if dim is NOT_GIVEN and keepdim is not NOT_GIVEN:
            raise ops.reduction.keepdim_without_dim("mean", True, dtype, keepdim)
        return ops.reduction.mean(self, dim, keepdim, dtype=dtype)

    def prod(self, dim=NOT_GIVEN, keepdim: bool = NOT_GIVEN, *, dtype=None) -> Tensor:
        if ops.reduction.not_one_dim(dim):
            raise ops.reduction.prod_dim_refused(dim, method=True, alone=keepdim is NOT_GIVEN and dtype is None)
        if dim is NOT_GIVEN and keepdim is not NOT_GIVEN:
            raise ops.reduction.keepdim_without_dim("prod", True, dtype, keepdim)
        return ops.reduction.prod(self, dim, keepdim, dtype=dtype)

    def max(self, dim=None, keepdim: bool = False) -> Any:
        return ops.reduction.max(self, dim, keepdim)

    def min(self, dim=None, keepdim: bool = False) -> Any:
        return ops.reduction.min(self, dim, keepdim)

    def amax(self, dim=(), keepdim: bool = False) -> Tensor:
        return ops.reduction.amax(self, dim, keepdim)

    def amin(self, dim=(), keepdim: bool = False) -> Tensor:
        return ops.reduction.amin(self, dim, keepdim)

    def argmax(self, dim=None, keepdim: bool = False) -> Tensor:
        return ops.reduction.argmax(self, dim, keepdim)

    def argmin(self, dim=None, keepdim: bool = False) -> Tensor:
        return ops.reduction.argmin(self, dim, keepdim)

    def var(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None) -> Tensor:
        return ops.reduction.var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None) -> Tensor:
        return ops.reduction.std(self, dim, unbiased, keepdim, correction=correction)

    def norm(self, p='fro', dim=None, keepdim: bool = False, dtype=None) -> Tensor:
        return ops.reduction.norm(self, p, dim, keepdim, dtype)

    def logsumexp(self, dim, keepdim: bool = False) -> Tensor:
        return ops.reduction.logsumexp(self, dim, keepdim)

    def all(self, dim=None, keepdim: bool = False) -> Tensor:
        return ops.reduction.all(self, dim, keepdim)

    def any(self, dim=None, keepdim: bool = False) -> Tensor:
        return ops.reduction.any(self, dim, keepdim)

    @number_parameters(dim="int")
    def cumsum(self, dim: int, *, dtype=None) -> Tensor:
        return ops.reduction.cumsum(self, dim, dtype=dtype)

"""Tensor methods for the statistics ops (``ember/ops/statistics.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._dtype import number_parameters

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class StatisticsMethods:
    __slots__ = ()

    @number_parameters(bins="int", min="Number", max="Number")
    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
        return ops.histogram.histc(self, bins, min, max)

    def histogram(self, bins=100, *, range: tuple[float, float] | None = None, weight: Tensor | None = None,
                  density: bool = False) -> Any:
        return ops.histogram.histogram(self, bins, range=range, weight=weight, density=density)

    def median(self, dim: int | None = None, keepdim: bool = False) -> Any:
        return ops.statistics.median(self, dim, keepdim)

    def nanmedian(self, dim: int | None = None, keepdim: bool = False) -> Any:
        return ops.statistics.nanmedian(self, dim, keepdim)

    @number_parameters(dim="int")  # (k is a SymInt: PyTorch reads a one-element integer tensor as its value)
    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> Any:
        return ops.statistics.kthvalue(self, k, dim, keepdim)

    def cov(self, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None) -> Tensor:
        return ops.statistics.cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self) -> Tensor:
        return ops.statistics.corrcoef(self)

    def count_nonzero(self, dim=None) -> Tensor:
        return ops.statistics.count_nonzero(self, dim)

    def aminmax(self, *, dim: int | None = None, keepdim: bool = False) -> Any:
        return ops.statistics.aminmax(self, dim=dim, keepdim=keepdim)

    def nansum(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
        return ops.statistics.nansum(self, dim, keepdim, dtype=dtype)

    def nanmean(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
        return ops.statistics.nanmean(self, dim, keepdim, dtype=dtype)

    def mode(self, dim: int = -1, keepdim: bool = False) -> Any:
        return ops.statistics.mode(self, dim, keepdim)

    def quantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> Tensor:
        return ops.statistics.quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *,
                    interpolation: str = "linear") -> Tensor:
        return ops.statistics.nanquantile(self, q, dim, keepdim, interpolation=interpolation)

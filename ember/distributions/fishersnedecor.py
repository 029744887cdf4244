"""``FisherSnedecor(df1, df2)``: the F distribution, the ratio of two scaled chi-squared variables."""

from __future__ import annotations

import math
from numbers import Number

from .._size import Size
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


def _nan_where(mask, t):
    """``t`` with NaN where ``mask`` (PyTorch's ``t[mask] = nan`` on a copy, out of place)."""
    from ..ops.indexing import where

    return where(mask, math.nan, t)


class FisherSnedecor(Distribution):
    """The Fisher-Snedecor (F) distribution with ``df1`` and ``df2`` degrees of freedom on x > 0 (variance ratios,
    ANOVA): draws are X1 / X2 for X1 ~ Gamma(df1 / 2, df1), X2 ~ Gamma(df2 / 2, df2), reparameterised through
    the gamma draws (ember's gamma stream, so the numbers differ from PyTorch's; their distribution is the same).
    ``mean`` is NaN for df2 <= 2, ``variance`` for df2 <= 4 and ``mode`` for df1 <= 2, as in PyTorch."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, Number) and isinstance(df2, Number)
        super().__init__(Size() if scalar else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1, new.df2 = self.df1.expand(tuple(batch_shape)), self.df2.expand(tuple(batch_shape))
        new._gamma1, new._gamma2 = self._gamma1.expand(batch_shape), self._gamma2.expand(batch_shape)
        super(FisherSnedecor, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = _nan_where(self.df2 <= 2, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        return _nan_where(self.df1 <= 2, (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2))

    @property
    def variance(self):
        df2 = _nan_where(self.df2 <= 4, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        from .. import finfo

        shape = tuple(self._extended_shape(sample_shape))
        # X1 ~ Gamma(df1 / 2, df1), X2 ~ Gamma(df2 / 2, df2): X1 / X2 ~ F(df1, df2)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        from .. import log

        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * log(value)
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3

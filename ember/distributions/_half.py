"""The folded half of a distribution symmetric about zero: |X| for X ~ Base(0, scale) (HalfNormal, HalfCauchy)."""

from __future__ import annotations

import math

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = []


class _HalfDistribution(TransformedDistribution):
    """|X| for X ~ ``_base_class(0, scale)``: the density doubled on x >= 0 (-inf below), cdf 2 F(x) - 1,
    entropy less log 2, mode 0. Subclasses give ``_base_class`` and their own mean and variance. PyTorch
    writes each half distribution out in full; the public behaviour is the same."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base_class: type

    def __init__(self, scale, validate_args=None) -> None:
        super().__init__(self._base_class(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        # the concrete half distribution (HalfNormal, HalfCauchy), so the subclass check names it as PyTorch does
        cls = next(c for c in type(self).__mro__ if _HalfDistribution in c.__bases__)
        return super().expand(batch_shape, _instance=self._get_checked_instance(cls, _instance))

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return self.scale * 0

    def _as_value(self, value):
        """The value log_prob scores (HalfCauchy converts numbers to the scale's dtype, as PyTorch's does)."""
        return value

    def log_prob(self, value):
        from ..ops.indexing import where

        if self._validate_args:
            self._validate_sample(value)
        value = self._as_value(value)
        return where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)

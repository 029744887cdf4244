"""``HalfCauchy(scale)``: |X| for X ~ Cauchy(0, scale)."""

from __future__ import annotations

import math

from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """The half-Cauchy distribution on x >= 0 (a common prior for scale parameters): no mean (inf, as PyTorch
    gives) and an infinite variance."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None) -> None:
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfCauchy, _instance))

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        from .. import full

        return full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)

    @property
    def mode(self):
        return self.scale * 0

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        from .. import as_tensor
        from ..ops.indexing import where

        if self._validate_args:
            self._validate_sample(value)
        value = as_tensor(value, dtype=self.scale.dtype)
        return where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)

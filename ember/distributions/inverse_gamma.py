"""``InverseGamma(concentration, rate)``: 1 / X for X ~ Gamma(concentration, rate)."""

from __future__ import annotations

import math

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """The inverse gamma distribution on x > 0 (the conjugate prior of a normal's variance): density
    rate^a / Gamma(a) x^(-a - 1) exp(-rate / x) for a = concentration, through PyTorch's PowerTransform(-1) of a
    gamma draw (ember's gamma stream). ``mean`` is inf for concentration <= 1, ``variance`` for <= 2."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base.rate.new_ones(())
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        from ..ops.indexing import where

        return where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        from ..ops.indexing import where

        result = self.rate.square() / ((self.concentration - 1).square() * (self.concentration - 2))
        return where(self.concentration > 2, result, math.inf)

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()

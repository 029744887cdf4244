"""``HalfCauchy(scale)``: |X| for X ~ Cauchy(0, scale)."""

from __future__ import annotations

import math

from ._half import _HalfDistribution
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(_HalfDistribution):
    """The half-Cauchy distribution on x >= 0 (a common prior for scale parameters): no mean (inf, as PyTorch
    gives) and an infinite variance."""

    _base_class = Cauchy

    @property
    def mean(self):
        from .. import full

        return full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance

    def _as_value(self, value):
        from .. import as_tensor

        return as_tensor(value, dtype=self.scale.dtype)

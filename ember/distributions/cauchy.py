"""``Cauchy(loc, scale)``."""

from __future__ import annotations

import math

from .._creation import empty
from . import constraints
from .distribution import Distribution
from .utils import broadcast_params

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution: no mean or variance (both nan / inf, as PyTorch gives)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        super().__init__(broadcast_params(self, loc=loc, scale=scale), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc * float("nan")

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self.loc * 0 + float("inf")

    def rsample(self, sample_shape=()):
        # PyTorch's draw (cauchy_() in the location's dtype): the same seed gives PyTorch's samples
        eps = empty(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()

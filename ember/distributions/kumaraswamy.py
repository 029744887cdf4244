"""``Kumaraswamy(concentration1, concentration0)``: a beta-like distribution on [0, 1] with a closed-form cdf."""

from __future__ import annotations

import math

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all

__all__ = ["Kumaraswamy"]

_EULER = 0.57721566490153286060


def _moments(a, b, n: int):
    """The n-th moment b B(1 + n / a, b), from lgamma."""
    arg1 = 1 + n / a
    return b * (arg1.lgamma() + b.lgamma() - (arg1 + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on [0, 1]: density a b x^(a - 1) (1 - x^a)^(b - 1) for a = concentration1,
    b = concentration0; (1 - U^(1/b))^(1/a) for U uniform, through PyTorch's transforms (so a seeded draw is
    PyTorch's).

    ``mode`` is PyTorch's expression, exp(log1p(-b) / b - log1p(-a b)), NaN where either concentration is below 1
    (and wherever that expression is: it is not the textbook ((a - 1) / (a b - 1))^(1/a)).
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        from .. import full_like

        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(full_like(self.concentration0, 0), full_like(self.concentration0, 1),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        from ..ops.indexing import where

        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        return where((b < 1) | (a < 1), math.nan, log_mode).exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        from ..ops.gamma_fns import digamma

        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + _EULER
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()

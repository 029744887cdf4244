"""``Weibull(scale, concentration)``: scale * E^(1/concentration) for E ~ Exponential(1)."""

from __future__ import annotations

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all

__all__ = ["Weibull"]

_EULER = 0.57721566490153286060


class Weibull(TransformedDistribution):
    """The two-parameter Weibull distribution on x > 0 (survival times, wind speeds): density
    (k / s) (x / s)^(k - 1) exp(-(x / s)^k), through PyTorch's transforms of a unit exponential."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None) -> None:
        from .. import ones_like

        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new.concentration_reciprocal = new.concentration.reciprocal()
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape), transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * ((1 + 2 * self.concentration_reciprocal).lgamma().exp()
                                    - (2 * (1 + self.concentration_reciprocal).lgamma()).exp())

    def entropy(self):
        return _EULER * (1 - self.concentration_reciprocal) + (self.scale * self.concentration_reciprocal).log() + 1

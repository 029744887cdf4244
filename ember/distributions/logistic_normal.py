"""``LogisticNormal(loc, scale)``: the stick-breaking image of a normal vector on the simplex."""

from __future__ import annotations

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """A distribution on the simplex of K + 1 categories (compositional data, topic proportions): X ~ Normal(loc,
    scale) of K elements mapped by ``StickBreakingTransform``, as PyTorch defines it (a seeded draw is PyTorch's,
    its normal draws being ember's copy of PyTorch's stream). A 0-d loc/scale gives a (1,)-batched base, as in
    PyTorch."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale

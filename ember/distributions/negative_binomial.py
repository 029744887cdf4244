"""``NegativeBinomial(total_count, probs=None, logits=None)``."""

from __future__ import annotations

from . import constraints
from .binomial import count_and_probs
from .distribution import Distribution
from .gamma import Gamma
from .utils import BinaryProbs, _draw, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbs, Distribution):
    """The number of successes before ``total_count`` failures, each trial a success with probability ``probs``."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None) -> None:
        super().__init__(count_and_probs(self, total_count, probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(NegativeBinomial, batch_shape, _instance, ("total_count", "probs", "logits"))

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=()):
        """A Poisson draw of a Gamma(total_count, exp(-logits)) rate."""
        rate = self._gamma.sample(sample_shape)
        return _draw(rate.dtype, "poisson", rate._data)

    def log_prob(self, value):
        from ..nn.functional import logsigmoid

        if self._validate_args:
            self._validate_sample(value)
        unnormalized = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        normalization = -(self.total_count + value).lgamma() + (1.0 + value).lgamma() + self.total_count.lgamma()
        return unnormalized - normalization.masked_fill(self.total_count + value == 0.0, 0.0)

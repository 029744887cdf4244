"""``Binomial(total_count=1, probs=None, logits=None)``."""

from __future__ import annotations

from . import constraints
from .distribution import Distribution
from .utils import BinaryProbs, _draw, broadcast_all

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """clamp(x, min=0) with gradient 1/2 at 0, as PyTorch's."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def count_and_probs(dist, total_count, probs, logits):
    """Set ``total_count`` and the one of ``probs``/``logits`` given on ``dist``, broadcast together (the count
    in the probabilities' dtype); return the batch shape."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    total, param = broadcast_all(total_count, probs if probs is not None else logits)
    dist.total_count = total.type_as(param)
    setattr(dist, "probs" if probs is not None else "logits", param)
    dist._param = param
    return param.size()


class Binomial(BinaryProbs, Distribution):
    """The number of successes in ``total_count`` independent trials of probability ``probs``."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        super().__init__(count_and_probs(self, total_count, probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Binomial, batch_shape, _instance, ("total_count", "probs", "logits"))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        n = self.total_count.detach().expand(shape)._data.astype("int64")
        return _draw(self.probs.dtype, "binomial", n, self.probs.detach().expand(shape)._data)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        normalize = n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p() - (n + 1).lgamma()
        return value * logits - (value + 1).lgamma() - (n - value + 1).lgamma() - normalize

    def entropy(self):
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True):
        from .. import arange

        total = int(self.total_count.max())
        if not self.total_count.min() == total:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = arange(1 + total, dtype=self._param.dtype).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

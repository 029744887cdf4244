"""``Geometric(probs=None, logits=None)``: the number of failures before the first success."""

from __future__ import annotations

from numbers import Number

from .._creation import empty
from .._size import Size
from . import constraints
from .distribution import Distribution
from .utils import BinaryProbs, _probs_or_logits, broadcast_all

__all__ = ["Geometric"]


class Geometric(BinaryProbs, Distribution):
    """P(k) = (1 - p)^k p for k = 0, 1, 2, ...; ``probs`` in (0, 1]."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        scalar = isinstance(probs if probs is not None else logits, Number)
        _probs_or_logits(self, probs, logits, is_binary=True, normalize=False, min_dim=0)
        super().__init__(Size() if scalar else self._param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to satisfy the constraint "
                             f"Interval(lower_bound=0.0, upper_bound=1.0), but found invalid values:\n{self.probs}")

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return self.probs * 0

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        from .. import finfo

        p = self.probs.detach()
        # PyTorch's draw (uniform_(tiny, 1) in p's dtype): the same seed gives PyTorch's samples
        u = empty(tuple(self._extended_shape(sample_shape)), dtype=p.dtype).uniform_(finfo(p.dtype).tiny, 1)
        return (u.log() / (-p).log1p()).floor()

    def log_prob(self, value):
        from ..ops.indexing import where

        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = where((probs == 1) & (value == 0), 0.0, probs)  # 0 * log(0) = 0 at p = 1
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        from ..nn.functional import binary_cross_entropy_with_logits

        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs

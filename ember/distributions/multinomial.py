"""``Multinomial(total_count=1, probs=None, logits=None)``: counts of ``total_count`` categorical draws."""

from __future__ import annotations

from .._size import Size
from . import constraints
from .binomial import Binomial
from .categorical import Categorical, CategoricalParams
from .distribution import Distribution
from .utils import _draw, broadcast_all

__all__ = ["Multinomial"]


class Multinomial(CategoricalParams, Distribution):
    """Counts over K categories (event shape (K,)) of ``total_count`` independent draws with ``probs``/``logits``
    (normalised over the last dimension). ``log_prob`` accepts any total count per value, as PyTorch's."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs=None, logits=None, validate_args=None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        Distribution.__init__(new, Size(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        p = self.probs.detach()._data
        size = tuple(sample_shape) + tuple(self.batch_shape)
        return _draw(self.probs.dtype, "multinomial", self.total_count, p / p.sum(-1, keepdims=True), size=size)

    def entropy(self):
        from .. import tensor

        n = tensor(float(self.total_count), dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        return term1 + (binomial_probs * (support + 1).lgamma()).sum((0, -1))

    def log_prob(self, value):
        from ..ops.indexing import where

        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = where((value == 0) & (logits == -float("inf")), 0.0, logits)
        return (value.sum(-1) + 1).lgamma() - (value + 1).lgamma().sum(-1) + (logits * value).sum(-1)

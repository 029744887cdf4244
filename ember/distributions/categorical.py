"""``Categorical(probs=None, logits=None)``: a draw of one of K categories (an index)."""

from __future__ import annotations

from .._backend import xp
from .._size import Size
from .._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import _probs_or_logits, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


def sample_categorical(probs: Tensor, sample_shape) -> Tensor:
    """Indices drawn from the last-dimension categorical ``probs``, as PyTorch draws them: every draw of every
    distribution from one ``multinomial(probs_2d, n, replacement=True)`` (so the same seed gives PyTorch's
    indices)."""
    from ..ops.sampling import multinomial

    n = int(xp.prod(tuple(sample_shape))) if len(tuple(sample_shape)) else 1
    probs_2d = probs.reshape(-1, probs.shape[-1])
    samples_2d = multinomial(probs_2d, n, True).T
    return samples_2d.reshape(tuple(sample_shape) + tuple(probs.shape[:-1]))


class CategoricalParams:
    """``probs``, ``logits`` and ``param_shape`` of a distribution built on a Categorical (``self._categorical``)."""

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape


class Categorical(Distribution):
    """Categories 0..K-1 with probabilities ``probs`` (..., K), non-negative (normalised here), or unnormalised
    log-probabilities ``logits``; the last dimension indexes the categories."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        _probs_or_logits(self, probs, logits, is_binary=False)
        self._num_events = self._param.size(-1)
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Categorical, batch_shape, _instance, ("probs", "logits"), ("_num_events",))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self):
        from .. import full

        return full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=()):
        return sample_categorical(self.probs.detach(), sample_shape)

    def log_prob(self, value):
        from ..ops.shape import expand

        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = tuple(xp.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape)))
        value = expand(value, shape[:-1] + (1,))
        return expand(self.logits, shape).gather(-1, value).squeeze(-1)

    def entropy(self):
        from .. import finfo

        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True):
        from .. import arange

        values = arange(self._num_events).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

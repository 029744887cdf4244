"""``RelaxedOneHotCategorical(temperature, probs=None, logits=None)`` (and ``ExpRelaxedCategorical``): the
Gumbel-softmax relaxation of a one-hot categorical, with reparameterised samples on the simplex."""

from __future__ import annotations

from .._size import Size
from . import constraints
from .categorical import Categorical, CategoricalParams
from .distribution import Distribution
from .relaxed_bernoulli import RelaxedTransformed
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(CategoricalParams, Distribution):
    """The log of a RelaxedOneHotCategorical draw: log_softmax((logits + Gumbel noise) / temperature)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        param = self._categorical._param
        super().__init__(param.size()[:-1], param.size()[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, Size(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        from .._creation import rand

        u = clamp_probs(rand(tuple(self._extended_shape(sample_shape)), dtype=self.logits.dtype))
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value):
        from .. import full_like

        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = full_like(self.temperature, float(k)).lgamma() - self.temperature.log() * -(k - 1)
        score = logits - value * self.temperature
        return (score - score.logsumexp(-1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(RelaxedTransformed):
    """exp of an ExpRelaxedCategorical draw: points on the simplex, near one-hot as ``temperature`` goes to 0."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

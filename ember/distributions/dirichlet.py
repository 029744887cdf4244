"""``Dirichlet(concentration)``."""

from __future__ import annotations

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import standard_gamma

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex, with ``concentration`` (..., K) > 0.

    ``rsample`` normalises reparameterised gamma draws: an unbiased pathwise gradient, though not the same
    estimator as PyTorch's (which differentiates the marginal Beta CDFs)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=()):
        from .. import finfo, float64

        # PyTorch's _sample_dirichlet: the gamma draws and their normalisation in float64 whatever the
        # concentration's type, then the ratio cast back and kept inside (0, 1): at least the type's smallest
        # normal number, at most the largest value below 1; a NaN ratio (an infinite draw over an infinite sum)
        # becomes the smallest, as PyTorch's std::min(max, std::max(min, ratio)) makes it
        concentration = self.concentration.expand(tuple(self._extended_shape(sample_shape)))
        g = standard_gamma(concentration.to(float64))
        ratio = (g / g.sum(-1, keepdim=True)).to(concentration.dtype)
        tiny = finfo(ratio.dtype).tiny
        return ratio.nan_to_num(nan=tiny).clamp(min=tiny, max=1 - finfo(ratio.dtype).eps / 2)

    def log_prob(self, value):
        from ..ops.gamma_fns import xlogy

        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        from ..ops.indexing import where

        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, keepdim=True)
        mask = (self.concentration < 1).all(-1)
        if bool(mask.any()):
            from ..nn.functional import one_hot

            corner = one_hot(mode.argmax(-1), self.concentration.shape[-1]).type_as(mode)
            mode = where(mask.unsqueeze(-1), corner, mode)
        return mode

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        c = self.concentration
        return (c.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma() - ((c - 1.0) * c.digamma()).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()

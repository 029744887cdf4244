"""``ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501))``: the continuous Bernoulli distribution."""

from __future__ import annotations

import math
from numbers import Number

from .._size import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


def _where(cond, a, b):
    from ..ops.indexing import where

    return where(cond, a, b)


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham, 2019): density
    C(p) p^x (1 - p)^(1 - x), the normalised Bernoulli likelihood of a value in [0, 1] (VAEs with [0, 1]-valued
    pixels). ``probs`` and ``logits`` name its parameter as Bernoulli's do, but are neither a probability nor
    log-odds. Near p = 1/2 (``lims``) the normaliser, moments and cdf use PyTorch's Taylor expansions; the
    given ``probs`` are clamped to [eps, 1 - eps] after validation, as in PyTorch. Draws are the icdf of
    uniform ones (PyTorch's for the same seed); ``rsample`` is reparameterised."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # checked here, as PyTorch does, when validation is asked for: the clamped probs would always pass
            if validate_args is not None and not self.arg_constraints["probs"].check(self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(Size() if scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"), copied=("_lims",))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs, with lims[0] in the unstable region (where the exact expressions divide by ~0)."""
        from .. import full_like

        return _where(self._outside_unstable_region(), self.probs, full_like(self.probs, self._lims[0]))

    def _cont_bern_log_norm(self):
        """log C(probs): the log normalising constant."""
        from .. import ones_like, zeros_like

        cut = self._cut_probs()
        below = _where(cut <= 0.5, cut, zeros_like(cut))
        above = _where(cut >= 0.5, cut, ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - _where(cut <= 0.5, (-2.0 * below).log1p(),
                                                                       (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return _where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return _where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        var = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / ((-cut).log1p() - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _where(self._outside_unstable_region(), var, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape=()):
        from ..autograd.grad_mode import no_grad

        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        from .._creation import rand

        u = rand(tuple(self._extended_shape(sample_shape)), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        from ..nn.functional import binary_cross_entropy_with_logits

        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        from .. import ones_like, zeros_like

        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = _where(self._outside_unstable_region(), cdfs, value)
        return _where(value <= 0.0, zeros_like(value), _where(value >= 1.0, ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        exact = ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p())
        return _where(self._outside_unstable_region(), exact, value)

    def entropy(self):
        log_probs0, log_probs1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log C as a function of the natural parameter (Taylor-expanded near 0)."""
        from .. import full_like

        unstable = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = _where(unstable, x, full_like(x, self._lims[0] - 0.5))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return _where(unstable, log_norm, taylor)

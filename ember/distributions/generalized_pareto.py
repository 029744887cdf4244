"""``GeneralizedPareto(loc, scale, concentration)``: the generalized Pareto distribution (peaks over a threshold)."""

from __future__ import annotations

import math

from . import constraints
from .distribution import Distribution
from .utils import broadcast_params

__all__ = ["GeneralizedPareto"]


def _where(cond, a, b):
    from ..ops.indexing import where

    return where(cond, a, b)


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution: survival (1 + c z)^(-1/c) for z = (x - loc) / scale and c =
    concentration (exp(-z) at c = 0, to ``isclose``), on [loc, loc - scale / c] for c < 0 and [loc, inf)
    otherwise; the distribution of excesses over a high threshold. Draws are the icdf of uniform ones (PyTorch's
    for the same seed), reparameterised. ``mean`` is NaN for c >= 1, ``variance`` for c >= 1/2, as in PyTorch.
    Unlike PyTorch's, ``log_prob``, ``cdf`` and ``log_survival_function`` take float64 parameters (PyTorch's raise
    "Double did not match Float")."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None) -> None:
        batch_shape = broadcast_params(self, loc=loc, scale=scale, concentration=concentration)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration"))

    def rsample(self, sample_shape=()):
        from .._creation import rand

        return self.icdf(rand(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype))

    def _safe_concentration(self):
        """(concentration == 0 to ``isclose``, the concentration with 1 there: no division by zero)."""
        from .. import isclose, ones_like, zeros_like

        # (PyTorch compares with a float32 zero, which isclose refuses for float64 parameters)
        eq_zero = isclose(self.concentration, zeros_like(self.concentration))
        return eq_zero, _where(eq_zero, ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        from .. import ones_like

        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        y = 1 / safe + ones_like(z)
        nonzero = _where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - _where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        return _where(eq_zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        from .. import isclose, ones_like, zeros_like

        c = self.concentration
        eq_zero = isclose(c, zeros_like(c))
        safe = _where(eq_zero, ones_like(c), c)
        logu = (-value).log1p()
        return _where(eq_zero, self.loc - self.scale * logu, self.loc + self.scale / safe * (-safe * logu).expm1())

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe = _where(valid, self.concentration, 0.5)
        return _where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe = _where(valid, self.concentration, 0.25)
        return _where(valid, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self):
        from .. import broadcast_to

        return broadcast_to(self.scale.log() + self.concentration + 1, tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = _where(self.concentration < 0, self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)

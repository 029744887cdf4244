"""``VonMises(loc, concentration)``: the circular von Mises distribution (angles in radians)."""

from __future__ import annotations

import math

from . import constraints
from .distribution import Distribution
from .utils import broadcast_params, lazy_property

__all__ = ["VonMises"]


def _eval_poly(y, coef):
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


# Abramowitz and Stegun 9.8.1-9.8.4 (PyTorch's coefficients): I0 and I1 below and above x = 3.75
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
                  -0.1647633e-1, 0.392377e-2]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
                  0.1787654e-1, -0.420059e-2]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _log_modified_bessel_fn(x, order: int = 0):
    """log(I_order(x)) for x > 0 and order 0 or 1, by PyTorch's polynomial approximations."""
    from ..ops.indexing import where

    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) * (x / 3.75)
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return where(x < 3.75, small.log(), large)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best and Fisher's (1979) rejection sampler, PyTorch's loop: three uniform draws per element and round
    until every element is accepted (so a seeded draw is PyTorch's); the angle wrapped to [-pi, pi)."""
    from .. import rand, zeros
    from ..ops.indexing import where

    done = zeros(x.shape, dtype=bool)
    while not done.all():
        u1, u2, u3 = rand((3, *x.shape), dtype=loc.dtype).unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises distribution of an angle (wind directions, phases): density exp(k cos(x - loc)) /
    (2 pi I0(k)) for k = concentration; ``loc`` and values may be any real numbers, read modulo 2 pi. ``mean``
    and ``variance`` are the circular ones; I0 and I1 are PyTorch's polynomial approximations (about 1e-7
    relative), so scores are PyTorch's rather than exact. Draws are PyTorch's rejection sampler in float64
    (PyTorch's numbers for the same seed), without a reparameterised gradient (``has_rsample`` False)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None) -> None:
        super().__init__(broadcast_params(self, loc=loc, concentration=concentration), validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * (value - self.loc).cos()
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _loc(self):
        return self.loc.double()

    @lazy_property
    def _concentration(self):
        return self.concentration.double()

    @lazy_property
    def _proposal_r(self):
        from ..ops.indexing import where

        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho ** 2) / (2 * rho)
        return where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)  # (second-order Taylor for small kappa)

    def sample(self, sample_shape=()):
        """Draws in float64 whatever the parameters' dtype (PyTorch's guard against the sampler hanging for small
        concentrations in float32), returned in the parameters' dtype."""
        from .. import zeros
        from ..autograd.grad_mode import no_grad

        with no_grad():
            x = zeros(tuple(self._extended_shape(sample_shape)), dtype=self._loc.dtype)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, _instance, ("loc", "concentration"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        c = self.concentration
        return 1 - (_log_modified_bessel_fn(c, order=1) - _log_modified_bessel_fn(c, order=0)).exp()

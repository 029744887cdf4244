"""``Gamma(concentration, rate)``; the reparameterised standard-gamma draw it shares with Chi2, Beta and
Dirichlet."""

from __future__ import annotations

from .._backend import xp
from ..autograd.graph import Node
from ..ops.gamma_fns import _lgamma64
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_params

__all__ = ["Gamma"]

_TINY = 1e-300
_MAX_STEPS = 2000  # enough for concentrations up to ~1e5


def _log_front(a, x):
    """log(x^a e^-x / Gamma(a))."""
    return a * xp.log(x) - x - _lgamma64(a)


def _iterate(step, state, done, n_out):
    """Run ``state = step(i, state)`` for i = 1, 2, ..., every 8 steps setting aside the elements ``done(state)``
    reports converged, so the work shrinks with them; returns each element's final state (a tuple of arrays)."""
    out = [xp.empty(n_out) for _ in state]
    index = xp.arange(n_out)
    for i in range(1, _MAX_STEPS):
        state = step(i, state)
        if i % 8 == 0 or i == _MAX_STEPS - 1:
            finished = done(state) if i < _MAX_STEPS - 1 else xp.ones(len(index), dtype=bool)
            for o, v in zip(out, state):
                o[index[finished]] = v[finished]
            keep = ~finished
            if not keep.any():
                break
            index = index[keep]
            state = tuple(v[keep] for v in state)
    return out


def _gammainc_series(a, x):
    """P(a, x) = x^a e^-x / Gamma(a) * sum_n x^n / (a (a+1) ... (a+n)): converges fast where x < a + 1."""
    def step(n, state):
        term, total, a_, x_ = state
        term = term * x_ / (a_ + n)
        return term, total + term, a_, x_

    total = _iterate(step, (1 / a, 1 / a, a, x), lambda st: xp.abs(st[0]) <= 1e-17 * xp.abs(st[1]),
                     len(a))[1]
    return xp.exp(_log_front(a, x)) * total


def _gammaincc_fraction(a, x):
    """Q(a, x) = 1 - P(a, x) by its continued fraction (modified Lentz): converges fast where x >= a + 1."""
    def step(i, state):
        b, c, d, h, delta, a_ = state
        an = -i * (i - a_)
        b = b + 2
        d = an * d + b
        d = 1 / xp.where(xp.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < _TINY, _TINY, c)
        delta = d * c
        return b, c, d, h * delta, delta, a_

    b = x + 1 - a
    d = 1 / xp.where(xp.abs(b) < _TINY, _TINY, b)
    state = (b, xp.full_like(x, 1 / _TINY), d, d.copy(), xp.zeros_like(x), a)
    h = _iterate(step, state, lambda st: xp.abs(st[4] - 1) <= 1e-16, len(a))[3]
    return xp.exp(_log_front(a, x)) * h


def gammainc(a, x):
    """The regularised lower incomplete gamma function P(a, x) of float64 arrays: the series where x < a + 1,
    else 1 - the continued fraction of Q; each in vectorised steps until every element has converged."""
    a, x = xp.broadcast_arrays(xp.asarray(a, xp.float64), xp.maximum(xp.asarray(x, xp.float64), 0))
    out = xp.zeros(a.shape)
    low = (x < a + 1) & (x > 0)
    high = x >= a + 1
    with xp.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out[low] = _gammainc_series(a[low], x[low])
        out[high] = 1 - _gammaincc_fraction(a[high], x[high])
    return out


class StandardGamma(Node):
    """A Gamma(alpha, 1) draw, differentiable in alpha by implicit reparameterisation: with P the gamma CDF,
    dx/dalpha = -(dP/dalpha)(alpha, x) / p(x; alpha); dP/dalpha by a central difference of ``gammainc``."""

    def forward(self, alpha):
        from .._random_draws import gamma
        from ..random import generator_of

        # PyTorch's sampler in float32 or float64 (the types its kernel is compiled for), in memory order
        drawn = alpha if alpha.dtype in (xp.float32, xp.float64) else alpha.astype(xp.float32)
        x = gamma(generator_of(None), xp.ascontiguousarray(drawn)).reshape(alpha.shape)
        # PyTorch's std::max(smallest normal, draw): a NaN draw (NaN or negative alpha) also becomes that number
        x = xp.fmax(x, xp.finfo(alpha.dtype).tiny).astype(alpha.dtype)
        self.saved = (alpha, x)
        return x

    def backward(self, g):
        alpha, x = self.saved
        a, v = alpha.astype(xp.float64), x.astype(xp.float64)
        h = 1e-5 * xp.maximum(a, 1e-2)
        dp_da = (gammainc(a + h, v) - gammainc(a - h, v)) / (2 * h)
        log_density = (a - 1) * xp.log(v) - v - _lgamma64(a)
        return (g * (-dp_da / xp.exp(log_density)).astype(g.dtype),)


def standard_gamma(alpha):
    return StandardGamma.apply(alpha)


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and ``rate`` (inverse scale).

    ``rsample`` differentiates through the draw by implicit reparameterisation (as PyTorch's does); its
    gradient comes from a numerical derivative of the gamma CDF (about 1e-8 relative)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None) -> None:
        super().__init__(broadcast_params(self, concentration=concentration, rate=rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        from .. import finfo

        # as PyTorch: the quotient kept above the smallest normal number, outside the gradient's path
        value.detach().clamp_(min=finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        from ..ops.gamma_fns import xlogy

        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value) - self.rate * value
                - self.concentration.lgamma())

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    def cdf(self, value):
        """P(concentration, rate * value); differentiable in value only."""
        from .._tensor import Tensor

        if self._validate_args:
            self._validate_sample(value)
        x = self.rate * value
        p = Tensor._make(gammainc(self.concentration.detach()._data, x.detach()._data).astype(x._data.dtype))
        # d P / d x = the density of Gamma(concentration, 1) at x
        density = ((self.concentration.detach() - 1) * x.log() - x - self.concentration.detach().lgamma()).exp()
        return p + (x - x.detach()) * density.detach()

    @property
    def _natural_params(self):
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()

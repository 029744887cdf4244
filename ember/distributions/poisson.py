"""``Poisson(rate)``."""

from __future__ import annotations

from ..autograd import no_grad
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, broadcast_params

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """P(k) = rate^k exp(-rate) / k! for k = 0, 1, 2, ..."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None) -> None:
        super().__init__(broadcast_params(self, rate=rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        from ..ops.sampling import poisson

        with no_grad():  # PyTorch's draw, as its Poisson.sample
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        from ..ops.gamma_fns import xlogy

        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()

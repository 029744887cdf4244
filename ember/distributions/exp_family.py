"""``ExponentialFamily``: distributions with density exp(<t(x), theta> - F(theta) + k(x))."""

from __future__ import annotations

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base of the exponential-family distributions (Normal, Gamma, Bernoulli, ...). Subclasses give their
    natural parameters and log normalizer; ``entropy`` is then the Bregman form (ember's subclasses all have a
    closed-form entropy of their own)."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self):
        """-E[k(x)] + F(theta) - <theta, dF/dtheta>."""
        from ..autograd import grad

        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        lg = self._log_normalizer(*params)
        grads = grad(lg.sum(), params)
        result = result + lg
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result

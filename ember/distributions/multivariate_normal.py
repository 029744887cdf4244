"""``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None)``."""

from __future__ import annotations

import math

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, broadcast_shapes, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(bL, bx):
    """||L^-1 x||^2 over the last dimension (L lower triangular; their batch dimensions broadcast)."""
    from ..linalg import solve_triangular

    return solve_triangular(bL, bx.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1, from the flipped Cholesky factor of P (PyTorch's way)."""
    from .. import eye
    from ..linalg import cholesky, solve_triangular

    lf = cholesky(P.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).mT
    return solve_triangular(l_inv, eye(P.shape[-1], dtype=P.dtype), upper=False)


def _the_matrix(covariance_matrix, precision_matrix, scale_tril, error=ValueError):
    """(name, matrix) of the one parameterisation given (MultivariateNormal raises ValueError when not exactly
    one is, Wishart AssertionError, as PyTorch's)."""
    given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                  ("scale_tril", scale_tril)) if m is not None]
    if len(given) != 1:
        raise error("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
    return given[0]


def _scale_tril_from(name, matrix):
    """The lower Cholesky factor of the covariance, from the parameterisation ``name`` (not broadcast)."""
    from ..linalg import cholesky

    if name == "scale_tril":
        return matrix
    return cholesky(matrix) if name == "covariance_matrix" else _precision_to_scale_tril(matrix)


class MultivariateNormal(Distribution):
    """The multivariate normal with mean ``loc`` (..., n) and exactly one of the covariance matrix, the
    precision matrix or the lower-triangular ``scale_tril`` (covariance = scale_tril @ scale_tril.T)."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        name, matrix = _the_matrix(covariance_matrix, precision_matrix, scale_tril)
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_from(name, matrix)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(MultivariateNormal, batch_shape, _instance,
                                   ("loc", "covariance_matrix", "scale_tril", "precision_matrix"),
                                   ("_unbroadcasted_scale_tril",))

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        low = self._unbroadcasted_scale_tril
        return (low @ low.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        from ..ops.linalg_compat import cholesky_inverse

        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape + self._event_shape))

    def rsample(self, sample_shape=()):
        eps = _standard_normal(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(tuple(self._batch_shape))

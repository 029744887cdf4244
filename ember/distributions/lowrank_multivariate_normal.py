"""``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: a multivariate normal whose covariance is
``cov_factor @ cov_factor.T + diag(cov_diag)`` (an n x m factor, m small), scored through the m x m
capacitance matrix ``I + W^T D^-1 W`` (Woodbury), as PyTorch does, never forming the n x n covariance."""

from __future__ import annotations

import math

from . import constraints
from .distribution import Distribution
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .utils import _standard_normal, broadcast_shapes, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _batch_mv(matrix, vector):
    return (matrix @ vector.unsqueeze(-1)).squeeze(-1)


def _capacitance_tril(W, D):
    """The Cholesky factor of I + W^T D^-1 W."""
    from .. import eye
    from ..linalg import cholesky

    m = W.shape[-1]
    return cholesky((W.mT / D.unsqueeze(-2)) @ W + eye(m, dtype=W.dtype))


class LowRankMultivariateNormal(Distribution):
    """The normal with mean ``loc`` (..., n) and covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)``
    (``cov_factor`` (..., n, m), ``cov_diag`` (..., n) positive)."""

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {tuple(event_shape)}")
        try:
            batch_shape = tuple(broadcast_shapes(loc.shape[:-1], cov_factor.shape[:-2], cov_diag.shape[:-1]))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        n = event_shape[0]
        self.loc = loc.expand(batch_shape + (n,))
        self.cov_factor = cov_factor.expand(batch_shape + (n, cov_factor.shape[-1]))
        self.cov_diag = cov_diag.expand(batch_shape + (n,))
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(LowRankMultivariateNormal, batch_shape, _instance,
                                   ("loc", "cov_factor", "cov_diag"),
                                   ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag", "_capacitance_tril"))

    # as MultivariateNormal's: the mean and mode are loc; matrices are batch + (n, n)
    _matrix_shape, mean, mode = MultivariateNormal._matrix_shape, MultivariateNormal.mean, MultivariateNormal.mode

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(tuple(self._batch_shape + self._event_shape))

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor of the covariance, D^1/2 chol(I + D^-1/2 W W^T D^-1/2) (PyTorch's)."""
        from .. import eye
        from ..linalg import cholesky

        n = self._event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / d_sqrt
        return (d_sqrt * cholesky(scaled @ scaled.mT + eye(n, dtype=scaled.dtype))).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return (W @ W.mT + self._unbroadcasted_cov_diag.diag_embed()).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """D^-1 - D^-1 W K^-1 W^T D^-1 (K the capacitance matrix), by Woodbury."""
        from ..linalg import solve_triangular

        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        a = solve_triangular(self._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)
        return (D.reciprocal().diag_embed() - a.mT @ a).expand(self._matrix_shape())

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        eps_w = _standard_normal(tuple(shape[:-1]) + (W.shape[-1],), self.loc.dtype)
        eps_d = _standard_normal(shape, self.loc.dtype)
        return self.loc + _batch_mv(W, eps_w) + D.sqrt() * eps_d

    def _log_det(self):
        diag = self._capacitance_tril.diagonal(dim1=-2, dim2=-1)
        return 2 * diag.log().sum(-1) + self._unbroadcasted_cov_diag.log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        diff = value - self.loc
        wt_dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), diff)
        mahalanobis = (diff.pow(2) / D).sum(-1) - _batch_mahalanobis(self._capacitance_tril, wt_dinv_x)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + mahalanobis)

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h if len(self._batch_shape) == 0 else h.expand(tuple(self._batch_shape))

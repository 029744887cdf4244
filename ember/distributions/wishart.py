"""``Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None)``: the distribution of
positive-definite matrices X = sum of df outer products of N(0, covariance) vectors."""

from __future__ import annotations

import math
import numbers
import warnings

from .._size import Size
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _scale_tril_from, _the_matrix
from .utils import broadcast_shapes, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p: int):
    """The multivariate digamma: sum of digamma(x - i/2) for i < p (x > (p - 1) / 2)."""
    from .. import arange

    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return (x.unsqueeze(-1) - arange(p, dtype=x.dtype).div(2).expand(tuple(x.shape) + (-1,))).digamma().sum(-1)


def _bartlett_chi2(df, p: int, batch_shape, dtype):
    """The chi-squared laws of Bartlett's squared diagonal: df - i degrees of freedom for row i, the i counted in
    the scale matrix's ``dtype`` as PyTorch's (a float32 ``df`` with a float64 matrix gives float64 laws)."""
    from .. import arange

    return Chi2(df.unsqueeze(-1) - arange(p, dtype=dtype).expand(tuple(batch_shape) + (-1,)))


class Wishart(ExponentialFamily):
    """The Wishart distribution over p x p positive-definite matrices with ``df`` > p - 1 degrees of freedom and
    exactly one of the scale's covariance matrix, precision matrix or lower Cholesky factor ``scale_tril``: mean
    df * covariance, density |X|^((df - p - 1) / 2) exp(-tr(covariance^-1 X) / 2) over its normaliser.
    ``df`` below p warns (singular draws are likely), as PyTorch's does.

    Draws (``rsample``) by Bartlett's decomposition as PyTorch: the square roots of chi-squared draws on the
    diagonal, standard normals below it. The chi-squared draws come from ember's gamma stream, so the numbers
    differ from PyTorch's for the same seed (their distribution is the same). A draw that is not positive
    definite is drawn again, up to ``max_try_correction`` times, with the warning "Singular sample detected.";
    PyTorch 2.13 inverts its first singularity check, so it gives that warning for every draw and redraws every
    sample once; ember warns only when a draw is singular."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        from .. import tensor

        name, param = _the_matrix(covariance_matrix, precision_matrix, scale_tril, error=AssertionError)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype)
        else:
            batch_shape = Size(broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(tuple(batch_shape))
        event_shape = Size(param.shape[-2:])
        if self.df.le(event_shape[-1] - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        if self.df.lt(event_shape[-1]).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df "
                          "< ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._unbroadcasted_scale_tril = _scale_tril_from(name, param)
        self._dist_chi2 = _bartlett_chi2(self.df, event_shape[-1], batch_shape, self._unbroadcasted_scale_tril.dtype)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._dist_chi2 = _bartlett_chi2(new.df, self.event_shape[-1], batch_shape,
                                        new._unbroadcasted_scale_tril.dtype)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(tuple(self._batch_shape + self._event_shape))

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(tuple(self._batch_shape + self._event_shape))

    @lazy_property
    def precision_matrix(self):
        from .. import cholesky_solve, eye

        L = self._unbroadcasted_scale_tril
        identity = eye(self._event_shape[-1], dtype=L.dtype)
        return cholesky_solve(identity, L).expand(tuple(self._batch_shape + self._event_shape))

    def _df_matrix(self, df):
        """``df`` (batch_shape) shaped to scale the (batch_shape, p, p) matrices."""
        return df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        """(df - p - 1) * covariance; NaN where df <= p + 1 (no mode), as PyTorch gives."""
        from ..ops.indexing import where

        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape):
        from .. import finfo, randn, tril_indices

        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        noise = chi.clamp(min=finfo(chi.dtype).eps).diag_embed(dim1=-2, dim2=-1)
        i, j = tril_indices(p, p, offset=-1)
        noise[..., i, j] = randn(tuple(Size(sample_shape) + self._batch_shape) + (p * (p - 1) // 2,),
                                 dtype=noise.dtype)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def _singular(self, sample):
        """Per draw (sample dims only): whether any matrix of its batch is not positive definite."""
        singular = ~self.support.check(sample)
        return singular.amax(self._batch_dims) if self._batch_shape else singular

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Bartlett draws; singular ones (possible for df near p) drawn again up to ``max_try_correction``
        (default 10) times, after the warning "Singular sample detected."; a draw still singular is returned
        as it is (its ``log_prob`` may be -inf)."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                new = self._bartlett_sampling(sample_shape)
                sample = new.where(self._per_matrix(singular, sample), sample)
                singular = self._singular(sample)
                if not singular.any():
                    break
        return sample

    def _per_matrix(self, per_draw, sample):
        """A per-draw mask (sample dims) broadcast over the batch and event dimensions of ``sample``."""
        return per_draw.reshape(tuple(per_draw.shape) + (1,) * (sample.dim() - per_draw.dim())).expand(
            tuple(sample.shape))

    def log_prob(self, value):
        from .. import cholesky_solve, mvlgamma
        from ..linalg import slogdet

        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet
                - cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        from .. import mvlgamma

        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        from .. import mvlgamma
        from ..linalg import slogdet

        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _LOG_2 * p) + mvlgamma(y + (p + 1) / 2, p=p)

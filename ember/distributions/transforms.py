"""Invertible transforms with log-determinant Jacobians (``torch.distributions.transforms``), the building
blocks of ``TransformedDistribution`` and normalizing flows: the pointwise maps (exp, sigmoid, tanh, affine,
power, ...) and the ones onto the simplex and onto Cholesky factors. ``Transform`` itself, composition and
``IndependentTransform`` are in ``transform_base.py``."""

from __future__ import annotations

import math
from numbers import Number

from .._tensor import Tensor
from . import constraints
from .transform_base import (
    CatTransform,
    ComposeTransform,
    IndependentTransform,
    ReshapeTransform,
    StackTransform,
    Transform,
    identity_transform,
)
from .utils import broadcast_shapes, lazy_property

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform"]


class _Elementwise(Transform):
    """A univariate transform without parameters: equal to any instance of its class."""

    bijective = True
    sign = +1

    def __eq__(self, other) -> bool:
        return isinstance(other, type(self))

    __hash__ = object.__hash__


class ExpTransform(_Elementwise):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


def _clipped_sigmoid(x):
    from .. import finfo

    fi = finfo(x.dtype)
    return x.sigmoid().clamp(min=fi.tiny, max=1.0 - fi.eps)


def _softplus(x):
    from ..nn.functional import softplus

    return softplus(x)


class SigmoidTransform(_Elementwise):
    """y = sigmoid(x), clipped into (0, 1) by the dtype's tiny and eps; x = logit(y)."""

    domain = constraints.real
    codomain = constraints.unit_interval

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        from .. import finfo

        fi = finfo(y.dtype)
        y = y.clamp(min=fi.tiny, max=1.0 - fi.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x) - _softplus(x)


class SoftplusTransform(_Elementwise):
    """y = log(1 + exp(x)) (linear above 20)."""

    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return _softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x)


class TanhTransform(_Elementwise):
    """y = tanh(x); log|dy/dx| = 2 (log 2 - x - softplus(-2x)), stable for large |x|."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        from ..ops.pointwise import atanh

        return atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not bijective; the inverse is the identity)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class PowerTransform(Transform):
    """y = x ** exponent on positive x."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        from .utils import broadcast_all

        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other) -> bool:
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all().item())

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return broadcast_shapes(shape, self.exponent.shape)

    inverse_shape = forward_shape


class AffineTransform(Transform):
    """y = loc + scale * x; ``event_dim`` dims form one event (their log-dets are summed)."""

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.real if self.event_dim == 0 else constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.real if self.event_dim == 0 else constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, Number) and isinstance(b, Number):
                if a != b:
                    return False
            elif not bool((a == b).all().item()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        from .. import full_like

        shape = tuple(x.shape)
        scale = self.scale
        result = full_like(x, math.log(abs(scale))) if isinstance(scale, Number) else scale.abs().log()
        if self.event_dim:
            result = result.reshape(tuple(result.shape[:result.dim() - self.event_dim]) + (-1,)).sum(-1)
            shape = shape[:len(shape) - self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))

    inverse_shape = forward_shape


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dimension (not bijective; the inverse is log)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


class StickBreakingTransform(Transform):
    """Unconstrained K-vectors to the (K+1)-simplex by stick breaking (bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _offset(n: int, like: Tensor):
        from .. import arange

        return (n - arange(n, dtype=like.dtype)).log()  # log(K + 1 - i) for i = 1..K (K = n)

    def _call(self, x):
        from .. import cat

        z = _clipped_sigmoid(x - self._offset(x.shape[-1], x))
        z_cumprod = (1 - z).cumprod(-1)
        ones = x.new_ones(tuple(x.shape[:-1]) + (1,))
        return cat([z, ones], -1) * cat([ones, z_cumprod], -1)

    def _inverse(self, y):
        from .. import finfo

        y_crop = y[..., :-1]
        offset = self._offset(y.shape[-1] - 1, y)
        sf = (1 - y_crop.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset

    def log_abs_det_jacobian(self, x, y):
        from ..nn.functional import logsigmoid

        x = x - self._offset(x.shape[-1], x)
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


def _with_diagonal(x, diagonal):
    """The strictly lower triangle of x plus ``diagonal`` on the diagonal."""
    from .. import eye

    return x.tril(-1) + diagonal.unsqueeze(-1) * eye(x.shape[-1], dtype=x.dtype)


class LowerCholeskyTransform(Transform):
    """Unconstrained matrices to lower-triangular ones with a positive diagonal (exp of the diagonal)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _with_diagonal(x, x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return _with_diagonal(y, y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(Transform):
    """Unconstrained matrices to positive-definite ones: L L^T with L from ``LowerCholeskyTransform``."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        low = LowerCholeskyTransform()(x)
        return low @ low.mT

    def _inverse(self, y):
        from ..linalg import cholesky

        return LowerCholeskyTransform().inv(cholesky(y))


class CumulativeDistributionTransform(Transform):
    """x -> distribution.cdf(x): a univariate distribution's support onto [0, 1] (its inverse, the icdf, maps
    uniform draws to the distribution; copulas are built from it). The log-determinant Jacobian is the density's
    log, ``distribution.log_prob(x)``."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of D (D - 1) / 2 elements to Cholesky factors of D x D correlation matrices (lower
    triangular, positive diagonal, rows of unit norm), as PyTorch's: tanh of the vector filled into the strict
    lower triangle in row order, then a signed stick-breaking along each row. ``log_abs_det_jacobian`` is that
    of x and the flattened strict lower triangle of y (the two spaces differ in dimension)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other) -> bool:
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        from .. import eye, finfo
        from ..nn.functional import pad
        from .utils import vec_to_tril_matrix

        x = x.tanh()
        eps = finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # y = sign(r) sqrt(z * cumprod(1 - z)) = r * sqrt(cumprod(1 - z)) for z = r^2 (stick breaking on squares)
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + eye(r.shape[-1], dtype=r.dtype)  # the diagonal is 1 before scaling
        return r * pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        from ..nn.functional import pad
        from .utils import tril_matrix_to_vec

        y_cumsum = 1 - (y * y).cumsum(dim=-1)
        y_cumsum_shifted = pad(y_cumsum[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(y_cumsum_shifted, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        from .utils import tril_matrix_to_vec

        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        # diag=-2: no shift of the cumulative products needed (a 2 x 2 matrix too)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + _softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)

"""Helpers shared by the distributions: broadcasting parameters, probabilities <-> logits, lazy properties."""

from __future__ import annotations

import numbers
from functools import update_wrapper

from .. import _dtype
from .._backend import xp
from .._size import Size
from .._tensor import Tensor
from ..autograd import enable_grad
from ..ops.broadcasting import broadcast_shapes

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property", "tril_matrix_to_vec",
           "vec_to_tril_matrix"]


def broadcast_all(*values):
    """Tensors and numbers broadcast to one shape (numbers become tensors of the tensors' dtype, else the default
    float dtype), as ``torch.distributions.utils.broadcast_all``."""
    from ..ops.shape import expand

    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else _dtype.get_default_dtype()
    values = [v if isinstance(v, Tensor) else Tensor._make(xp.asarray(v, dtype=_dtype.to_np(dtype)))
              for v in values]
    shape = broadcast_shapes(*(v.shape for v in values))
    return tuple(v if v.shape == shape else expand(v, shape) for v in values)


def broadcast_params(dist, **params) -> Size:
    """Set ``params`` on ``dist``, broadcast to one shape (``broadcast_all``); return the batch shape they give:
    () when every one was a number."""
    values = broadcast_all(*params.values())
    for name, value in zip(params, values):
        setattr(dist, name, value)
    return Size() if all(isinstance(v, numbers.Number) for v in params.values()) else values[0].size()


def _standard_normal(shape, dtype) -> Tensor:
    from .._creation import randn

    return randn(tuple(shape), dtype=dtype)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid (binary) or softmax over the last dimension."""
    from ..ops.activation import softmax

    return logits.sigmoid() if is_binary else softmax(logits, -1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped to [eps, 1 - eps] of their dtype."""
    eps = float(xp.finfo(probs._data.dtype).eps)
    return probs.clamp(eps, 1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log(p) - log(1 - p) (binary) or log(p), of the clamped probabilities."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


class lazy_property:
    """A property computed on first access and then stored on the instance (the parameter a distribution was not
    given: probs from logits, covariance from scale_tril, ...)."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What ``Class.attr`` returns for a lazy property: documented like a property."""

    def __init__(self, wrapped) -> None:
        property.__init__(self, wrapped)


def _draw(dtype, method: str, *args, size=None) -> Tensor:
    """A draw from the NumPy generator behind ``ember.random`` (``numpy.random.Generator.<method>``), as a
    tensor of ``dtype``; ``args`` may be arrays (per-element parameters)."""
    from ..random import default_generator

    out = default_generator.numpy_draw(method, *args, size=None if size is None else tuple(size))
    return Tensor._make(xp.asarray(out).astype(_dtype.to_np(dtype)))


def _probs_or_logits(dist, probs, logits, is_binary: bool, normalize: bool = True, min_dim: int = 1) -> None:
    """Store exactly one of ``probs``/``logits`` on ``dist`` (the other is a lazy property) and ``dist._param``.
    Categorical-like distributions normalise them over the last dimension."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    if isinstance(value, numbers.Number):
        (value,) = broadcast_all(value)
    if value.dim() < min_dim:
        raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
    if normalize:
        value = value / value.sum(-1, keepdim=True) if name == "probs" else value - value.logsumexp(-1, keepdim=True)
    setattr(dist, name, value)
    dist._param = value


class BinaryProbs:
    """``probs`` and ``logits`` of a two-outcome parameter (sigmoid / logit of each other): the one that was not
    given is computed on first use."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()


def _tril_positions(n: int, diag: int):
    """The flat positions (row-major) of the lower triangle of an n x n matrix below its ``diag``-th diagonal."""
    rows, cols = xp.tril_indices(n, k=diag)
    return rows * n + cols


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular elements (on and below diagonal ``diag``) of a (batch of) D x D matrices, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(*mat.shape[:-2], n * n)
    return flat[..., Tensor._make(_tril_positions(n, diag))]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The (batch of) D x D lower-triangular matrices holding ``vec``'s elements in row order on and below diagonal
    ``diag`` (zeros elsewhere); D solves D^2 + (1 + 2 diag) D - |diag| (diag + 1) = 2 len(vec). A gather from
    [0, vec], so that it is differentiable."""
    from .. import cat, zeros

    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > float(xp.finfo(_dtype.to_np(vec.dtype)).eps):
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as the lower triangular part "
                         "of a square D x D matrix.")
    n = round(n)
    index = xp.zeros(n * n, dtype=xp.int64)
    index[_tril_positions(n, diag)] = xp.arange(1, m + 1)
    padded = cat([zeros(*vec.shape[:-1], 1, dtype=vec.dtype), vec], -1)
    return padded[..., Tensor._make(index)].reshape(*vec.shape[:-1], n, n)

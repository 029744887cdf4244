"""Flatten parameters into one vector and back."""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor
from ...ops.shape import cat


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated (differentiable, a copy)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Point each parameter's data at its slice of ``vec`` (reshaped), in order, as PyTorch does."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected ember.Tensor, but got: {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"vector_to_parameters: vec must be 1-D, got shape {list(vec.shape)}")
    offset = 0
    params = list(parameters)
    needed = sum(p.numel() for p in params)
    if needed != vec.numel():
        raise RuntimeError(f"vector_to_parameters: vec has {vec.numel()} elements but the parameters need {needed}")
    for p in params:
        n = p.numel()
        p._data = vec._data[offset:offset + n].reshape(p._data.shape)
        offset += n

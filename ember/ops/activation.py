"""Activation ops with fused backward formulas: softmax, log_softmax (and friends)."""

from __future__ import annotations

from .. import _dtype
from .._backend import xp
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import Node
from .elementwise import cast


class Softmax(Node):
    def forward(self, x, dim):
        e = xp.exp(x - xp.max(x, axis=dim, keepdims=True))
        out = e / xp.sum(e, axis=dim, keepdims=True)
        self.saved, self.dim = (out,), dim
        return out

    def backward(self, g):  # dx = y * (g - sum(g * y))
        (y,) = self.saved
        return (y * (g - xp.sum(g * y, axis=self.dim, keepdims=True)),)


class LogSoftmax(Node):
    def forward(self, x, dim):
        shifted = x - xp.max(x, axis=dim, keepdims=True)
        out = shifted - xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))
        self.saved, self.dim = (out,), dim
        return out

    def backward(self, g):  # dx = g - softmax * sum(g)
        (out,) = self.saved
        return (g - xp.exp(out) * xp.sum(g, axis=self.dim, keepdims=True),)


def _softmax_input(x: Tensor, dim, dtype):
    if dtype is not None:
        x = cast(x, dtype if isinstance(dtype, _dtype.dtype) else _dtype.from_np(_dtype.to_np(dtype)))
    if not x.is_floating_point():
        raise RuntimeError(f"softmax expects a floating point tensor, got {x.dtype}")
    if dim is None:  # PyTorch's legacy implicit dim
        dim = 0 if x._data.ndim in (0, 1, 3) else 1
    return x, _wrap_dim(dim, x._data.ndim)


def softmax(x: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    x, d = _softmax_input(x, dim, dtype)
    return Softmax.apply(x, dim=d)


def log_softmax(x: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    x, d = _softmax_input(x, dim, dtype)
    return LogSoftmax.apply(x, dim=d)

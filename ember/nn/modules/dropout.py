"""Dropout layers: identity in eval mode; in training, zero with probability p and scale by 1/(1-p)."""

from __future__ import annotations

from ..._tensor import Tensor
from .._ops.sparse import _check_p, dropout, dropout2d
from .module import Module


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        _check_p(p)
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Element-wise dropout; masks come from ember's global generator (``ember.manual_seed``)."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Channel-wise dropout for (N, C, H, W) input: whole feature maps are zeroed."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout2d(input, self.p, self.training, self.inplace)

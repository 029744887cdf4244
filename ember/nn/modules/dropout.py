"""Dropout layers: identity in eval mode; in training, zero with probability p and scale by 1/(1-p)
(the alpha variants: SELU's negative saturation and an affine map instead). Masks come from ember's global
generator (``ember.manual_seed``)."""

from __future__ import annotations

from ..._tensor import Tensor
from .._ops.dropout import (
    _check_p,
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from .module import Module


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        _check_p(p)
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Element-wise dropout (``F.dropout``)."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Channel-wise dropout for (N, C, L) or (C, L) input: whole channels are zeroed (``F.dropout1d``)."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Channel-wise dropout for (N, C, H, W) input: whole feature maps are zeroed (``F.dropout2d``; a 3-D input
    is taken as (N, C, L), with PyTorch's warning)."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Channel-wise dropout for (N, C, D, H, W) or (C, D, H, W) input (``F.dropout3d``)."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Element-wise alpha dropout for SELU networks (``F.alpha_dropout``). As in PyTorch, ``inplace`` is
    stored but not used."""

    def forward(self, input: Tensor) -> Tensor:
        return alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Channel-wise alpha dropout for (N, C, *) input (``F.feature_alpha_dropout``). As in PyTorch, ``inplace``
    is stored but not used."""

    def forward(self, input: Tensor) -> Tensor:
        return feature_alpha_dropout(input, self.p, self.training)

"""PyTorch's in-place activation functions (``F.relu_``, ``F.elu_``, ``torch.selu_`` ...): each is its activation
with ``inplace=True``: ``input`` is overwritten (its version bumps, a recorded graph is rebased) and returned."""

from __future__ import annotations

from ..._tensor import Tensor
from .activation import elu, hardtanh, leaky_relu
from .activation_more import celu, rrelu, selu
from .activation_more import threshold as _threshold  # (threshold_'s argument has the name)


def relu_(input: Tensor) -> Tensor:
    """``max(input, 0)``, in place."""
    return input.relu_()


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``F.elu(input, alpha, inplace=True)``."""
    return elu(input, alpha, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``F.celu(input, alpha, inplace=True)``."""
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """``F.selu(input, inplace=True)``."""
    return selu(input, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``F.leaky_relu(input, negative_slope, inplace=True)``."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``F.hardtanh(input, min_val, max_val, inplace=True)``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """``F.rrelu(input, lower, upper, training, inplace=True)``."""
    return rrelu(input, lower, upper, training, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``F.threshold(input, threshold, value, inplace=True)``."""
    return _threshold(input, threshold, value, inplace=True)


"""lp_pool1d/2d/3d: power-average pooling, (sum over the window of x^p)^(1/p), composed as PyTorch composes it.

The window sum is an average pool of x^p times the window size (no padding); a negative average (odd p on
negative inputs) is clamped to zero by sign * relu(abs), and p = +-inf is max pooling of |x| (or minus that of
-|x|), as in PyTorch.
"""

from __future__ import annotations

import math

from ..._tensor import Tensor
from .conv import ntuple
from .pooling import avg_pool, max_pool


def lp_pool(input: Tensor, nd: int, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        if norm_type > 0:
            return max_pool(input.abs(), nd, kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool(-input.abs(), nd, kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), nd, kernel_size, stride, 0, ceil_mode)
    size = math.prod(ntuple(kernel_size, nd, "kernel_size"))
    return (out.sign() * out.abs().relu()).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    return lp_pool(input, 1, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    return lp_pool(input, 2, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    return lp_pool(input, 3, norm_type, kernel_size, stride, ceil_mode)

"""The neural-network functions PyTorch also exposes at the top level: ``torch.embedding``, ``torch.conv2d``,
``torch.layer_norm``, ``torch.dropout`` ... (its native operators, which ``torch.nn.functional`` wraps or re-exports).

Programs call them directly (``torch.embedding(weight, indices)`` in custom autograd tests, ``torch.conv2d`` in
functional code). Where PyTorch's ``torch.nn.functional`` function *is* the top-level one (the convolutions,
``pixel_shuffle``, ``prelu`` ...) the name is ``ember.nn.functional``'s function itself; the others keep PyTorch's
native signatures, which differ from ``torch.nn.functional``'s: ``torch.embedding`` takes the weight first and
reads any negative ``padding_idx`` as none, ``torch.dropout`` needs ``train``, ``torch.batch_norm`` takes the
weight before the running statistics, and the normalizations take a trailing ``cudnn_enabled`` that the CPU ignores.
This module loads on the first use of one of these names (ember/__init__.py's ``_LAZY``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._tensor import Tensor
from .nn import functional as F

# PyTorch's torch.nn.functional re-exports these top-level operators unchanged (F.conv2d is torch.conv2d).
SAME_AS_FUNCTIONAL = ("adaptive_avg_pool1d", "avg_pool1d", "bilinear", "celu_", "conv1d", "conv2d", "conv3d",
                      "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "hardshrink", "pixel_shuffle",
                      "pixel_unshuffle", "prelu", "selu_", "threshold_")


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """``torch.embedding``: rows of ``weight``; a negative ``padding_idx`` is none (the native operator's -1)."""
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05, cudnn_enable: bool = True) -> Tensor:
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-05, cudnn_enabled: bool = True) -> Tensor:
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    return F.rms_norm(input, normalized_shape, weight, eps)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool) -> Tensor:
    """``torch.batch_norm``: the weight and bias come before the running statistics (``F.batch_norm``'s order is
    the reverse), and every argument is required."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train)


def _max_pool(functional):
    def max_pool(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] = (),
                 padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
                 ceil_mode: bool = False) -> Tensor:
        # The native operator's empty stride is the kernel size (F's None); it gives no indices.
        return functional(input, kernel_size, stride if stride not in ((), []) else None, padding, dilation,
                          ceil_mode)
    max_pool.__name__ = max_pool.__qualname__ = functional.__name__
    max_pool.__doc__ = f"``torch.{functional.__name__}``: ``F.{functional.__name__}`` without ``return_indices``."
    return max_pool


def max_pool1d_with_indices(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] = (),
                           padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
                           ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """``torch.max_pool1d_with_indices``: the values and their indices, always (a plain tuple, as PyTorch's)."""
    return tuple(F.max_pool1d(input, kernel_size, stride if stride not in ((), []) else None, padding, dilation,
                              ceil_mode, return_indices=True))


def adaptive_max_pool1d(input: Tensor, output_size: int | Sequence[int]) -> tuple[Tensor, Tensor]:
    """``torch.adaptive_max_pool1d``: the values and their indices, always (``F``'s gives indices on request)."""
    return tuple(F.adaptive_max_pool1d(input, output_size, return_indices=True))


max_pool1d = _max_pool(F.max_pool1d)
max_pool2d = _max_pool(F.max_pool2d)
max_pool3d = _max_pool(F.max_pool3d)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return F.celu(input, alpha)


def selu(input: Tensor) -> Tensor:
    return F.selu(input)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    return F.threshold(input, threshold, value)


globals().update({name: getattr(F, name) for name in SAME_AS_FUNCTIONAL})

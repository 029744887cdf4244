"""Folding an evaluation-mode batch norm into the convolution or linear layer before it (``torch.nn.utils.fusion``).

In evaluation mode a batch norm is the per-channel affine map ``y = (x - mean) * w / sqrt(var + eps) + b`` over the
running statistics, so the layer before it can absorb it: with ``scale = w / sqrt(var + eps)``, the fused weight is
the layer's weight with each output channel multiplied by ``scale``, and the fused bias is
``(bias - mean) * scale + b``. A transposed convolution keeps its output channels on dimension 1 of its weight.
"""

from __future__ import annotations

import copy

from ..._creation import ones_like, zeros_like
from ..._tensor import Tensor
from ..modules.normalization import _BatchNorm
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _batch_norm_scale(bn_rm: Tensor, bn_rv: Tensor, bn_eps: float, bn_w: Tensor | None) -> Tensor:
    """``w / sqrt(var + eps)`` per channel (a missing affine weight is 1)."""
    return (ones_like(bn_rm) if bn_w is None else bn_w) * (bn_rv + bn_eps).rsqrt()


def _fused_bias(bias: Tensor | None, bn_rm: Tensor, scale: Tensor, bn_b: Tensor | None, dtype) -> Tensor:
    """``(bias - mean) * scale + b`` in ``dtype`` (a missing bias is 0)."""
    bias = zeros_like(bn_rm) if bias is None else bias
    return ((bias - bn_rm) * scale + (zeros_like(bn_rm) if bn_b is None else bn_b)).to(dtype=dtype)


def _check_eval(layer, bn: _BatchNorm) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("the batch norm has no running statistics (track_running_stats=False): nothing to fuse")


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The weight and bias of a convolution followed by an evaluation-mode batch norm, as new Parameters in the
    convolution's dtypes, requiring grad as the convolution's weight and bias do (a missing bias: not)."""
    scale = _batch_norm_scale(bn_rm, bn_rv, bn_eps, bn_w)
    channel_dim = 1 if transpose else 0  # (a transposed convolution's weight is (in, out/groups, ...))
    shape = [1] * conv_w.ndim
    shape[channel_dim] = -1
    fused_w = (conv_w * scale.reshape(shape)).to(dtype=conv_w.dtype)
    fused_b = _fused_bias(conv_b, bn_rm, scale, bn_b, conv_w.dtype if conv_b is None else conv_b.dtype)
    return (Parameter(fused_w, conv_w.requires_grad),
            Parameter(fused_b, conv_b is not None and conv_b.requires_grad))


def fuse_conv_bn_eval(conv, bn: _BatchNorm, transpose: bool = False):
    """A copy of ``conv`` (in evaluation mode, as ``bn``) computing ``bn(conv(x))`` in one convolution;
    ``transpose`` for a transposed convolution. ``conv`` itself is left as it was."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                           bn_w: Tensor | None, bn_b: Tensor | None) -> tuple[Parameter, Parameter]:
    """The weight and bias of a linear layer followed by an evaluation-mode batch norm (over its output
    features, or one feature broadcast to all), as new Parameters in the linear layer's dtypes."""
    scale = _batch_norm_scale(bn_rm, bn_rv, bn_eps, bn_w)
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=linear_w.dtype)
    fused_b = _fused_bias(linear_b, bn_rm, scale, bn_b, linear_w.dtype if linear_b is None else linear_b.dtype)
    return (Parameter(fused_w, linear_w.requires_grad),
            Parameter(fused_b, linear_b is not None and linear_b.requires_grad))


def fuse_linear_bn_eval(linear, bn: _BatchNorm):
    """A copy of ``linear`` (in evaluation mode, as ``bn``) computing ``bn(linear(x))`` in one linear layer."""
    _check_eval(linear, bn)
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused

"""torchvision.ops.misc: the building blocks torchvision's models are made of, and FrozenBatchNorm2d."""

from __future__ import annotations

from collections.abc import Callable

import ember

from ... import nn
from ..._tensor import Tensor

__all__ = ["Conv2dNormActivation", "FrozenBatchNorm2d", "MLP", "Permute", "SqueezeExcitation"]


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm2d whose statistics and affine parameters are fixed buffers (no parameters, no updates).

    Used by detection backbones fine-tuned with small batches. ``weight``, ``bias``, ``running_mean`` and
    ``running_var`` are buffers of shape ``(num_features,)``; a BatchNorm2d state_dict loads into it (its
    ``num_batches_tracked`` entry is dropped).
    """

    def __init__(self, num_features: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", ember.ones(num_features))
        self.register_buffer("bias", ember.zeros(num_features))
        self.register_buffer("running_mean", ember.zeros(num_features))
        self.register_buffer("running_var", ember.ones(num_features))

    def _load_local(self, state_dict, prefix: str, assign: bool, missing: list, errors: list) -> None:
        state_dict.pop(prefix + "num_batches_tracked", None)  # a BatchNorm2d's counter: accepted and ignored
        super()._load_local(state_dict, prefix, assign, missing, errors)

    def forward(self, x: Tensor) -> Tensor:
        scale = self.weight.reshape(1, -1, 1, 1) * (self.running_var.reshape(1, -1, 1, 1) + self.eps).rsqrt()
        bias = self.bias.reshape(1, -1, 1, 1) - self.running_mean.reshape(1, -1, 1, 1) * scale
        return x * scale + bias

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.weight.shape[0]}, eps={self.eps})"


class Conv2dNormActivation(nn.Sequential):
    """Conv2d + normalisation + activation, as torchvision's block (children ``0``, ``1``, ``2``).

    ``padding`` defaults to ``(kernel_size - 1) // 2 * dilation`` ('same' for odd kernels); ``bias`` defaults to
    ``norm_layer is None``; ``norm_layer`` / ``activation_layer`` None leave that layer out.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int = 3, stride: int = 1,
                 padding: int | None = None, groups: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = nn.BatchNorm2d,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU, dilation: int = 1,
                 inplace: bool | None = True, bias: bool | None = None) -> None:
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers: list[nn.Module] = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                                             dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer() if inplace is None else activation_layer(inplace=inplace))
        super().__init__(*layers)
        self.out_channels = out_channels


class SqueezeExcitation(nn.Module):
    """Squeeze-and-excitation (Hu et al. 2018): ``x * scale_activation(fc2(activation(fc1(avgpool(x)))))``.

    ``fc1`` / ``fc2`` are 1x1 Conv2d layers, as in torchvision (so the state_dict keys are ``fc1.weight``, ...).
    """

    def __init__(self, input_channels: int, squeeze_channels: int,
                 activation: Callable[..., nn.Module] = nn.ReLU,
                 scale_activation: Callable[..., nn.Module] = nn.Sigmoid) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def forward(self, x: Tensor) -> Tensor:
        scale = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return scale * x


class MLP(nn.Sequential):
    """Linear (+ norm) + activation + Dropout per hidden size; the last is Linear + Dropout, as torchvision's."""

    def __init__(self, in_channels: int, hidden_channels: list[int],
                 norm_layer: Callable[..., nn.Module] | None = None,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU, inplace: bool | None = None,
                 bias: bool = True, dropout: float = 0.0) -> None:
        params = {} if inplace is None else {"inplace": inplace}
        layers: list[nn.Module] = []
        in_dim = in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(nn.Linear(in_dim, hidden_dim, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden_dim))
            layers += [activation_layer(**params), nn.Dropout(dropout, **params)]
            in_dim = hidden_dim
        layers += [nn.Linear(in_dim, hidden_channels[-1], bias=bias), nn.Dropout(dropout, **params)]
        super().__init__(*layers)


class Permute(nn.Module):
    """``x.permute(*dims)`` as a module."""

    def __init__(self, dims: list[int]) -> None:
        super().__init__()
        self.dims = dims

    def forward(self, x: Tensor) -> Tensor:
        return ember.permute(x, self.dims)

"""VGG-11/13/16/19 (and ``_bn`` with BatchNorm) with torchvision's module structure and initialisation."""

from __future__ import annotations

from typing import Any

from ... import nn
from ..._tensor import Tensor
from ._api import build, weights_enum

# Channels per 3x3 convolution, "M" a 2x2 max-pool (configurations A, B, D, E of the VGG paper).
cfgs: dict[str, list[int | str]] = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


def make_layers(cfg: list[int | str], batch_norm: bool = False) -> nn.Sequential:
    layers: list[nn.Module] = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(v))
        layers.append(nn.ReLU(inplace=True))
        in_channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    """features, avgpool (adaptive 7x7), classifier (4096-4096-num_classes with dropout)."""

    def __init__(self, features: nn.Module, num_classes: int = 1000, init_weights: bool = True,
                 dropout: float = 0.5) -> None:
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def _vgg(builder: str, cfg: str, batch_norm: bool, enum, weights, kwargs: dict[str, Any]) -> VGG:
    return build(lambda **kw: VGG(make_layers(cfgs[cfg], batch_norm), **kw), builder, enum, weights, kwargs)


VGG11_Weights = weights_enum("VGG11_Weights", "vgg11-8a719046.pth")
VGG11_BN_Weights = weights_enum("VGG11_BN_Weights", "vgg11_bn-6002323d.pth")
VGG13_Weights = weights_enum("VGG13_Weights", "vgg13-19584684.pth")
VGG13_BN_Weights = weights_enum("VGG13_BN_Weights", "vgg13_bn-abd245e5.pth")
VGG16_Weights = weights_enum("VGG16_Weights", "vgg16-397923af.pth")
VGG16_BN_Weights = weights_enum("VGG16_BN_Weights", "vgg16_bn-6c64b313.pth")
VGG19_Weights = weights_enum("VGG19_Weights", "vgg19-dcbb9e9d.pth")
VGG19_BN_Weights = weights_enum("VGG19_BN_Weights", "vgg19_bn-c79401a0.pth")


def vgg11(*, weights=None, progress: bool = True, **kwargs: Any) -> VGG:
    """VGG-11 (configuration A)."""
    return _vgg("vgg11", "A", False, VGG11_Weights, weights, kwargs)


def vgg11_bn(*, weights=None, progress: bool = True, **kwargs: Any) -> VGG:
    """VGG-11 with BatchNorm."""
    return _vgg("vgg11_bn", "A", True, VGG11_BN_Weights, weights, kwargs)


def vgg13(*, weights=None, progress: bool = True, **kwargs: Any) -> VGG:
    """VGG-13 (configuration B)."""
    return _vgg("vgg13", "B", False, VGG13_Weights, weights, kwargs)


def vgg13_bn(*, weights=None, progress: bool = True, **kwargs: Any) -> VGG:
    """VGG-13 with BatchNorm."""
    return _vgg("vgg13_bn", "B", True, VGG13_BN_Weights, weights, kwargs)


def vgg16(*, weights=None, progress: bool = True, **kwargs: Any) -> VGG:
    """VGG-16 (configuration D)."""
    return _vgg("vgg16", "D", False, VGG16_Weights, weights, kwargs)


def vgg16_bn(*, weights=None, progress: bool = True, **kwargs: Any) -> VGG:
    """VGG-16 with BatchNorm."""
    return _vgg("vgg16_bn", "D", True, VGG16_BN_Weights, weights, kwargs)


def vgg19(*, weights=None, progress: bool = True, **kwargs: Any) -> VGG:
    """VGG-19 (configuration E)."""
    return _vgg("vgg19", "E", False, VGG19_Weights, weights, kwargs)


def vgg19_bn(*, weights=None, progress: bool = True, **kwargs: Any) -> VGG:
    """VGG-19 with BatchNorm."""
    return _vgg("vgg19_bn", "E", True, VGG19_BN_Weights, weights, kwargs)

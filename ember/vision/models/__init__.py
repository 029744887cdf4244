"""torchvision.models on ember: the classification architectures, randomly initialised as torchvision does.

Module names (and so ``state_dict()`` keys) are torchvision's, so a state_dict saved from a torchvision model
loads with ``load_state_dict``. Pretrained weights (``weights=...`` / ``pretrained=True``) are refused with the
checkpoint's name: ember does not download them.
"""

from ..._missing import module_getattr as _module_getattr
from ._api import Weights
from .resnet import (
    BasicBlock,
    Bottleneck,
    ResNet,
    ResNet18_Weights,
    ResNet34_Weights,
    ResNet50_Weights,
    ResNet101_Weights,
    ResNet152_Weights,
    resnet18,
    resnet34,
    resnet50,
    resnet101,
    resnet152,
)
from .small import (
    AlexNet,
    AlexNet_Weights,
    MobileNet_V2_Weights,
    MobileNetV2,
    SqueezeNet,
    SqueezeNet1_0_Weights,
    SqueezeNet1_1_Weights,
    alexnet,
    mobilenet_v2,
    squeezenet1_0,
    squeezenet1_1,
)
from .vgg import (
    VGG,
    VGG11_BN_Weights,
    VGG11_Weights,
    VGG13_BN_Weights,
    VGG13_Weights,
    VGG16_BN_Weights,
    VGG16_Weights,
    VGG19_BN_Weights,
    VGG19_Weights,
    vgg11,
    vgg11_bn,
    vgg13,
    vgg13_bn,
    vgg16,
    vgg16_bn,
    vgg19,
    vgg19_bn,
)

__all__ = ["AlexNet", "AlexNet_Weights", "BasicBlock", "Bottleneck", "MobileNetV2", "MobileNet_V2_Weights",
           "ResNet", "ResNet101_Weights", "ResNet152_Weights", "ResNet18_Weights", "ResNet34_Weights",
           "ResNet50_Weights", "SqueezeNet", "SqueezeNet1_0_Weights", "SqueezeNet1_1_Weights", "VGG",
           "VGG11_BN_Weights", "VGG11_Weights", "VGG13_BN_Weights", "VGG13_Weights", "VGG16_BN_Weights",
           "VGG16_Weights", "VGG19_BN_Weights", "VGG19_Weights", "Weights", "alexnet", "mobilenet_v2", "resnet101",
           "resnet152", "resnet18", "resnet34", "resnet50", "squeezenet1_0", "squeezenet1_1", "vgg11", "vgg11_bn",
           "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]

__getattr__ = _module_getattr(__name__, "torchvision.models")  # missing names: torchvision features

"""torchvision.transforms.v2 on ember: v1's transforms taking whole samples (image, label, dicts), plus
``ToImage``, ``ToDtype``, ``MixUp`` and ``CutMix``. No ``tv_tensors`` (boxes, masks, videos); see ``_transform``."""

from ...._missing import module_getattr as _module_getattr
from ..functional import InterpolationMode
from ._augment import CutMix, MixUp
from ._transform import Transform
from ._transforms import (
    CenterCrop,
    ColorJitter,
    Compose,
    ConvertImageDtype,
    GaussianBlur,
    Grayscale,
    Lambda,
    Normalize,
    Pad,
    PILToTensor,
    RandomApply,
    RandomChoice,
    RandomCrop,
    RandomErasing,
    RandomGrayscale,
    RandomHorizontalFlip,
    RandomInvert,
    RandomOrder,
    RandomResizedCrop,
    RandomRotation,
    RandomSolarize,
    RandomVerticalFlip,
    Resize,
    ToDtype,
    ToImage,
    ToPILImage,
)

__all__ = ["CenterCrop", "ColorJitter", "Compose", "ConvertImageDtype", "CutMix", "GaussianBlur", "Grayscale",
           "InterpolationMode", "Lambda", "MixUp", "Normalize", "PILToTensor", "Pad", "RandomApply", "RandomChoice",
           "RandomCrop", "RandomErasing", "RandomGrayscale", "RandomHorizontalFlip", "RandomInvert", "RandomOrder",
           "RandomResizedCrop", "RandomRotation", "RandomSolarize", "RandomVerticalFlip", "Resize", "ToDtype",
           "ToImage", "ToPILImage", "Transform"]

__getattr__ = _module_getattr(__name__, "torchvision.transforms.v2")  # missing names: torchvision features

"""torchvision.transforms on ember: image transforms over PIL images and tensor images."""

from ..._missing import module_getattr as _module_getattr
from . import functional
from ._point import RandomErasing, RandomInvert, RandomSolarize
from .functional import InterpolationMode
from .transforms import (
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
    RandomGrayscale,
    RandomHorizontalFlip,
    RandomOrder,
    RandomResizedCrop,
    RandomRotation,
    RandomVerticalFlip,
    Resize,
    ToPILImage,
    ToTensor,
)

__all__ = ["CenterCrop", "ColorJitter", "Compose", "ConvertImageDtype", "GaussianBlur", "Grayscale",
           "InterpolationMode", "Lambda", "Normalize", "PILToTensor", "Pad", "RandomApply", "RandomChoice",
           "RandomCrop", "RandomErasing", "RandomGrayscale", "RandomHorizontalFlip", "RandomInvert", "RandomOrder",
           "RandomResizedCrop", "RandomRotation", "RandomSolarize", "RandomVerticalFlip", "Resize", "ToPILImage",
           "ToTensor", "functional"]

__getattr__ = _module_getattr(__name__, "torchvision.transforms")  # missing names: torchvision features

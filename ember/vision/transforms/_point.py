"""Per-pixel transforms: invert, solarize (PIL and tensor images) and random erasing (tensor images).

The functions are re-exported by ``transforms.functional``; the classes by ``transforms``. Random draws come
from ember's default generator, in torchvision's order.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import ember

from ... import nn
from ..._tensor import Tensor
from . import _functional_pil as F_pil
from ._functional_tensor import _max_value

__all__ = ["RandomErasing", "RandomInvert", "RandomSolarize", "erase", "invert", "solarize"]


def _bound(dtype) -> float | int:
    """The brightest value: 1.0 for float images, the dtype's maximum (an int, so uint8 stays uint8) otherwise."""
    return 1.0 if dtype.is_floating_point else int(_max_value(dtype))


def _check_rgb_or_gray(img: Tensor) -> None:
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    if int(img.shape[-3]) not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found {int(img.shape[-3])}")


def _pil_or_raise(img) -> None:
    if not F_pil.is_pil_image(img):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def random_area_and_ratio(area: int, scale: Sequence[float], log_ratio: tuple[float, float]) -> tuple[float, float]:
    """One try of torchvision's box draw: an area uniform in ``area * scale``, then an aspect ratio log-uniform
    in ``exp(log_ratio)`` (RandomResizedCrop and RandomErasing draw in this order)."""
    target_area = area * ember.empty(1).uniform_(scale[0], scale[1]).item()
    return target_area, math.exp(ember.empty(1).uniform_(log_ratio[0], log_ratio[1]).item())


def invert(img):
    """The negative: ``bound - img`` for tensors (1.0 or the integer maximum), PIL's ``ImageOps.invert``."""
    if isinstance(img, Tensor):
        _check_rgb_or_gray(img)
        return _bound(img.dtype) - img
    _pil_or_raise(img)
    from PIL import ImageOps

    return ImageOps.invert(img)


def solarize(img, threshold: float):
    """Invert the pixels at or above ``threshold`` (PIL's ``ImageOps.solarize`` for PIL images)."""
    if isinstance(img, Tensor):
        _check_rgb_or_gray(img)
        if threshold > _bound(img.dtype):
            raise TypeError("Threshold should be less than bound of img.")
        return ember.where(img >= threshold, invert(img), img)
    _pil_or_raise(img)
    from PIL import ImageOps

    return ImageOps.solarize(img, threshold)


def erase(img: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False) -> Tensor:
    """Set the ``h x w`` box at row ``i``, column ``j`` of a tensor image to ``v`` (a copy unless ``inplace``)."""
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img


class RandomInvert(nn.Module):
    """``invert`` with probability ``p``."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img):
        return invert(img) if ember.rand(1).item() < self.p else img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomSolarize(nn.Module):
    """``solarize(img, threshold)`` with probability ``p``."""

    def __init__(self, threshold: float, p: float = 0.5) -> None:
        super().__init__()
        self.threshold, self.p = threshold, p

    def forward(self, img):
        return solarize(img, self.threshold) if ember.rand(1).item() < self.p else img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(threshold={self.threshold}, p={self.p})"


class RandomErasing(nn.Module):
    """Erase a random rectangle of a tensor image with probability ``p`` (Zhong et al. 2017).

    The rectangle covers a share of the area drawn from ``scale`` with an aspect ratio drawn log-uniformly from
    ``ratio`` (10 tries; none fitting leaves the image as it is). ``value`` fills it: a number, one per channel,
    or ``'random'`` for standard normal noise.
    """

    def __init__(self, p: float = 0.5, scale: Sequence[float] = (0.02, 0.33), ratio: Sequence[float] = (0.3, 3.3),
                 value: float | str | Sequence[float] = 0, inplace: bool = False) -> None:
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, (tuple, list)):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, (tuple, list)):
            raise TypeError("Ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p, self.scale, self.ratio, self.value, self.inplace = p, scale, ratio, value, inplace

    @staticmethod
    def get_params(img: Tensor, scale: Sequence[float], ratio: Sequence[float],
                   value: list[float] | None = None) -> tuple[int, int, int, int, Tensor]:
        """``(i, j, h, w, v)`` of the rectangle to erase; the whole image and itself when no try fits."""
        img_c, img_h, img_w = int(img.shape[-3]), int(img.shape[-2]), int(img.shape[-1])
        area = img_h * img_w
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            erase_area, aspect_ratio = random_area_and_ratio(area, scale, log_ratio)
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            v = ember.empty([img_c, h, w]).normal_() if value is None else ember.tensor(value)[:, None, None]
            i = int(ember.randint(0, img_h - h + 1, size=(1,)).item())
            j = int(ember.randint(0, img_w - w + 1, size=(1,)).item())
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img: Tensor) -> Tensor:
        if ember.rand(1).item() >= self.p:
            return img
        if isinstance(self.value, str):
            value = None
        elif isinstance(self.value, (list, tuple)):
            value = [float(v) for v in self.value]
        else:
            value = [float(self.value)]
        if value is not None and len(value) not in (1, int(img.shape[-3])):
            raise ValueError("If value is a sequence, it should have either a single value or "
                             f"{int(img.shape[-3])} (number of input channels)")
        i, j, h, w, v = self.get_params(img, self.scale, self.ratio, value)
        return erase(img, i, j, h, w, v, self.inplace)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, "
                f"value={self.value}, inplace={self.inplace})")

"""torchvision.transforms' classes: callables over PIL images and tensor images.

Random transforms draw from ember's default generator (``torch.rand``, ``torch.randint``, ...), so
``torch.manual_seed`` makes them reproducible; the draws are torchvision's, in its order (``RandomChoice``
uses Python's ``random`` module, as torchvision does). Transforms that hold no parameters are plain callables;
the rest are ``nn.Module``s like torchvision's.
"""

from __future__ import annotations

import math
import numbers
import random
from collections.abc import Callable, Sequence

import ember

from ... import nn
from . import functional as F
from ._point import random_area_and_ratio
from .functional import InterpolationMode, _pair


class Compose:
    """Apply ``transforms`` in order."""

    def __init__(self, transforms: Sequence[Callable]):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({body}\n)"


class ToTensor:
    """PIL image / ``(H, W, C)`` ndarray -> ``(C, H, W)`` float tensor, uint8 scaled to [0, 1]."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class PILToTensor:
    """PIL image -> ``(C, H, W)`` tensor of the image's dtype, unscaled."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ToPILImage:
    """Tensor / ndarray -> PIL image (``mode`` as ``functional.to_pil_image``)."""

    def __init__(self, mode: str | None = None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mode={self.mode})"


class ConvertImageDtype(nn.Module):
    def __init__(self, dtype) -> None:
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class Normalize(nn.Module):
    """``(x - mean) / std`` per channel of a float tensor image."""

    def __init__(self, mean, std, inplace: bool = False):
        super().__init__()
        self.mean, self.std, self.inplace = mean, std, inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


class Resize(nn.Module):
    """``functional.resize`` with fixed arguments (an int ``size`` matches the shorter edge)."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias: bool | None = True):
        super().__init__()
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size, self.max_size, self.antialias = size, max_size, antialias
        self.interpolation = F._interpolation(interpolation)

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)


class CenterCrop(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = _pair(size)

    def forward(self, img):
        return F.center_crop(img, self.size)


class Pad(nn.Module):
    def __init__(self, padding, fill=0, padding_mode: str = "constant"):
        super().__init__()
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


class Lambda:
    """Apply a user function."""

    def __init__(self, lambd: Callable):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RandomApply(nn.Module):
    """Apply all ``transforms`` with probability ``p`` (one ``torch.rand(1)`` draw)."""

    def __init__(self, transforms, p: float = 0.5):
        super().__init__()
        self.transforms, self.p = transforms, p

    def forward(self, img):
        if self.p < ember.rand(1).item():
            return img
        for t in self.transforms:
            img = t(img)
        return img


class RandomChoice:
    """Apply one of ``transforms``, picked with weights ``p`` by Python's ``random.choices`` (as torchvision)."""

    def __init__(self, transforms: Sequence[Callable], p: list[float] | None = None):
        if p is not None and len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != {len(transforms)}")
        self.transforms = transforms
        self.p = [w / sum(p) for w in p] if p is not None else None

    def __call__(self, *args):
        t = random.choices(self.transforms, weights=self.p)[0]
        return t(*args)


class RandomOrder:
    """Apply ``transforms`` in an order drawn by ``torch.randperm``."""

    def __init__(self, transforms: Sequence[Callable]):
        self.transforms = transforms

    def __call__(self, img):
        for i in ember.randperm(len(self.transforms)).tolist():
            img = self.transforms[i](img)
        return img


class RandomHorizontalFlip(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return F.hflip(img) if ember.rand(1).item() < self.p else img


class RandomVerticalFlip(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return F.vflip(img) if ember.rand(1).item() < self.p else img


class RandomCrop(nn.Module):
    """A random ``size`` crop, after optional ``padding`` and, with ``pad_if_needed``, padding up to ``size``."""

    def __init__(self, size, padding=None, pad_if_needed: bool = False, fill=0, padding_mode: str = "constant"):
        super().__init__()
        self.size = _pair(size)
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    @staticmethod
    def crop_bounds(img, output_size) -> tuple[int, int, int, int]:
        """``(h, w, th, tw)``: the image's height and width and the crop's, which must fit in it."""
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        return h, w, th, tw

    @staticmethod
    def get_params(img, output_size) -> tuple[int, int, int, int]:
        h, w, th, tw = RandomCrop.crop_bounds(img, output_size)
        if w == tw and h == th:
            return 0, 0, h, w
        i = int(ember.randint(0, h - th + 1, size=(1,)).item())
        j = int(ember.randint(0, w - tw + 1, size=(1,)).item())
        return i, j, th, tw

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)


class RandomResizedCrop(nn.Module):
    """A crop of random area (``scale``) and aspect ratio (``ratio``), resized to ``size``."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias: bool | None = True):
        super().__init__()
        self.size = _pair(size)
        self.scale, self.ratio, self.antialias = scale, ratio, antialias
        self.interpolation = F._interpolation(interpolation)

    @staticmethod
    def get_params(img, scale, ratio) -> tuple[int, int, int, int]:
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area, aspect_ratio = random_area_and_ratio(area, scale, log_ratio)
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = int(ember.randint(0, height - h + 1, size=(1,)).item())
                j = int(ember.randint(0, width - w + 1, size=(1,)).item())
                return i, j, h, w
        in_ratio = float(width) / float(height)  # fallback: the central crop
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)


def _jitter_range(value, name: str, center: float = 1.0, bound=(0, float("inf")), clip_first_on_zero=True):
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"If {name} is a single number, it must be non negative.")
        value = [center - float(value), center + float(value)]
        if clip_first_on_zero:
            value[0] = max(value[0], 0.0)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        value = [float(value[0]), float(value[1])]
    else:
        raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
    if not bound[0] <= value[0] <= value[1] <= bound[1]:
        raise ValueError(f"{name} values should be between {bound}, but got {value}.")
    return None if value[0] == value[1] == center else tuple(value)


class ColorJitter(nn.Module):
    """Random brightness, contrast, saturation and hue factors, applied in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = _jitter_range(brightness, "brightness")
        self.contrast = _jitter_range(contrast, "contrast")
        self.saturation = _jitter_range(saturation, "saturation")
        self.hue = _jitter_range(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        order = ember.randperm(4)
        factors = [None if r is None else float(ember.empty(1).uniform_(r[0], r[1]).item())
                   for r in (brightness, contrast, saturation, hue)]
        return (order, *factors)

    def forward(self, img):
        order, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        adjust = (F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue)
        factors = (b, c, s, h)
        for i in order.tolist():
            if factors[i] is not None:
                img = adjust[i](img, factors[i])
        return img


class Grayscale(nn.Module):
    def __init__(self, num_output_channels: int = 1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, self.num_output_channels)


class RandomGrayscale(nn.Module):
    def __init__(self, p: float = 0.1):
        super().__init__()
        self.p = p

    def forward(self, img):
        channels = F.get_dimensions(img)[0]
        return F.rgb_to_grayscale(img, channels) if ember.rand(1).item() < self.p else img


class RandomRotation(nn.Module):
    """Rotate a PIL image by an angle drawn uniformly from ``degrees`` (``(-d, d)`` for a number)."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand: bool = False, center=None, fill=0):
        super().__init__()
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError("If degrees is a single number, it must be positive.")
            degrees = (-float(degrees), float(degrees))
        elif len(degrees) != 2:
            raise ValueError("If degrees is a sequence, it must be of len 2.")
        self.degrees = [float(d) for d in degrees]
        self.interpolation = F._interpolation(interpolation)
        self.expand, self.center, self.fill = expand, center, fill

    @staticmethod
    def get_params(degrees) -> float:
        return float(ember.empty(1).uniform_(float(degrees[0]), float(degrees[1])).item())

    def forward(self, img):
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)


class GaussianBlur(nn.Module):
    """Blur with a Gaussian whose sigma is drawn uniformly from ``sigma`` (min, max) per call."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        self.kernel_size = _pair(kernel_size, "kernel_size")
        if any(k <= 0 or k % 2 == 0 for k in self.kernel_size):
            raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (float(sigma), float(sigma))
        elif not (isinstance(sigma, Sequence) and len(sigma) == 2 and 0 < sigma[0] <= sigma[1]):
            raise ValueError("sigma values should be positive and of the form (min, max).")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min: float, sigma_max: float) -> float:
        return float(ember.empty(1).uniform_(sigma_min, sigma_max).item())

    def forward(self, img):
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

"""torchvision.transforms.functional: the transforms as functions of a PIL image or a tensor image.

A tensor image is ``(..., C, H, W)``; a PIL image is what Pillow gives. Each function dispatches on the type as
torchvision does and follows its arithmetic (PIL's own resampling and enhancement for PIL images, ember ops for
tensors). Rotation is implemented for PIL images only.
"""

from __future__ import annotations

import numbers
from enum import Enum
from typing import Any

import numpy as np

import ember

from ..._missing import module_getattr as _module_getattr
from ..._tensor import Tensor
from . import _functional_pil as F_pil
from . import _functional_tensor as F_t
from ._point import erase, invert, solarize  # noqa: F401 (torchvision.transforms.functional names)


class InterpolationMode(Enum):
    """Interpolation modes; the value is the ``interpolate`` mode for tensors (torchvision's enum)."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


_PIL_CODES = {InterpolationMode.NEAREST: 0, InterpolationMode.NEAREST_EXACT: 0, InterpolationMode.LANCZOS: 1,
              InterpolationMode.BILINEAR: 2, InterpolationMode.BICUBIC: 3, InterpolationMode.BOX: 4,
              InterpolationMode.HAMMING: 5}


def _interpolation(mode) -> InterpolationMode:
    if isinstance(mode, InterpolationMode):
        return mode
    if isinstance(mode, int):  # PIL's integer constants, accepted by torchvision for backward compatibility
        return {v: k for k, v in _PIL_CODES.items() if k is not InterpolationMode.NEAREST_EXACT}[mode]
    raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding Pillow integer constant")


def _is_tensor(img: Any) -> bool:
    return isinstance(img, Tensor)


def _check_image(img: Any) -> None:
    if not (_is_tensor(img) or F_pil.is_pil_image(img)):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def get_dimensions(img) -> list[int]:
    """``[channels, height, width]``."""
    _check_image(img)
    return F_t.get_dimensions(img) if _is_tensor(img) else F_pil.get_dimensions(img)


def get_image_size(img) -> list[int]:
    """``[width, height]``."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img) -> int:
    return get_dimensions(img)[0]


# ------------------------------------------------------------------------------------------- conversions
def to_tensor(pic) -> Tensor:
    """PIL image or ``(H, W[, C])`` ndarray -> ``(C, H, W)`` float tensor; uint8 data is divided by 255."""
    if not (F_pil.is_pil_image(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        img = ember.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
        return img.to(ember.get_default_dtype()).div(255) if img.dtype == ember.uint8 else img
    arr = np.array(pic, {"I": np.int32, "I;16": np.int16, "F": np.float32}.get(pic.mode, np.uint8), copy=True)
    if pic.mode == "1":
        arr = 255 * arr
    arr = arr.reshape(pic.height, pic.width, len(pic.getbands()))
    img = ember.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
    return img.to(ember.get_default_dtype()).div(255) if img.dtype == ember.uint8 else img


def pil_to_tensor(pic) -> Tensor:
    """PIL image -> ``(C, H, W)`` tensor of its own dtype, unscaled."""
    if not F_pil.is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    arr = np.array(pic, copy=True)
    arr = arr.reshape(pic.height, pic.width, len(pic.getbands()))
    return ember.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def to_pil_image(pic, mode: str | None = None):
    """``(C, H, W)`` tensor or ``(H, W, C)`` ndarray -> PIL image; float data (not mode 'F') is scaled by 255."""
    image = F_pil.pil()
    if _is_tensor(pic):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-3]} channels.")
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        npimg = np.ascontiguousarray(pic.detach().numpy().transpose(1, 2, 0))
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        npimg = pic[:, :, None] if pic.ndim == 2 else pic
        if npimg.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {npimg.shape[-1]} channels.")
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if npimg.shape[2] == 1:
        npimg = npimg[:, :, 0]
        expected = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16", np.dtype(np.uint16): "I;16",
                    np.dtype(np.int32): "I", np.dtype(np.float32): "F"}.get(npimg.dtype)
        if mode is not None and mode != expected:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {npimg.dtype}. Should be {expected}")
        mode = mode or expected
    elif npimg.shape[2] in (2, 3, 4):
        permitted = {2: ["LA"], 3: ["RGB", "YCbCr", "HSV"], 4: ["RGBA", "CMYK", "RGBX"]}[npimg.shape[2]]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for {npimg.shape[2]}D inputs")
        mode = mode or permitted[0]
        if npimg.dtype != np.uint8:
            raise TypeError(f"Input type {npimg.dtype} is not supported")
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    if mode == "I;16" and npimg.dtype == np.int16:
        npimg = npimg.astype(np.uint16)
    return image.fromarray(npimg, mode=mode)


def convert_image_dtype(image: Tensor, dtype=ember.float32) -> Tensor:
    """Convert a tensor image's dtype, rescaling: floats are in [0, 1], integers in [0, max of the dtype]."""
    if not _is_tensor(image):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype)


def normalize(tensor: Tensor, mean: list[float], std: list[float], inplace: bool = False) -> Tensor:
    """``(tensor - mean[c]) / std[c]`` per channel of a float ``(..., C, H, W)`` tensor."""
    if not _is_tensor(tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tuple(tensor.shape)}")
    mean_t = ember.as_tensor(mean, dtype=tensor.dtype)
    std_t = ember.as_tensor(std, dtype=tensor.dtype)
    if bool((std_t == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
    mean_t = mean_t.view(-1, 1, 1) if mean_t.ndim == 1 else mean_t
    std_t = std_t.view(-1, 1, 1) if std_t.ndim == 1 else std_t
    if inplace:
        return tensor.sub_(mean_t).div_(std_t)
    return tensor.sub(mean_t).div(std_t)


# ------------------------------------------------------------------------------------------- geometry
def _resized_size(h: int, w: int, size, max_size: int | None) -> list[int]:
    """torchvision's ``_compute_resized_output_size``: an int (or 1-list) matches the shorter edge."""
    if isinstance(size, numbers.Number) or len(size) == 1:
        requested = int(size if isinstance(size, numbers.Number) else size[0])
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = requested, int(requested * long / short)
        if max_size is not None:
            if max_size <= requested:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                                 f"smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
        return [new_h, new_w]
    if max_size is not None:
        raise ValueError("max_size should only be passed if size specifies the length of the smaller edge, i.e. "
                         "size should be an int or a sequence of length 1 in torchscript mode.")
    return [int(size[0]), int(size[1])]


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size: int | None = None,
           antialias: bool | None = True):
    """Resize to ``size`` ((h, w), or an int for the shorter edge keeping the aspect ratio).

    PIL images use PIL's ``resize`` (which always antialiases); tensors use ``interpolate`` with
    ``antialias`` for bilinear / bicubic (torchvision's default True, matching PIL), none for nearest.
    """
    _check_image(img)
    interpolation = _interpolation(interpolation)
    _, h, w = get_dimensions(img)
    out_size = _resized_size(h, w, size, max_size)
    if [h, w] == out_size:
        return img
    if _is_tensor(img):
        if interpolation not in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT,
                                 InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
            raise ValueError("Tensor images support nearest, nearest-exact, bilinear and bicubic interpolation")
        return F_t.resize(img, out_size, interpolation.value, bool(antialias))
    if interpolation is InterpolationMode.NEAREST_EXACT:
        raise ValueError("PIL images do not support nearest-exact interpolation")
    return F_pil.resize(img, out_size, _PIL_CODES[interpolation])


def _padding(padding) -> list[int]:
    """[left, top, right, bottom] from an int, (lr, tb) or (l, t, r, b)."""
    if isinstance(padding, numbers.Number):
        return [int(padding)] * 4
    padding = [int(p) for p in padding]
    if len(padding) == 1:
        return padding * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    if len(padding) == 4:
        return padding
    raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    """Pad the borders; ``padding_mode`` constant (``fill``), edge, reflect or symmetric."""
    _check_image(img)
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    if _is_tensor(img):
        return F_t.pad(img, _padding(padding), fill, padding_mode)
    return F_pil.pad(img, _padding(padding), fill, padding_mode)


def crop(img, top: int, left: int, height: int, width: int):
    """The ``height x width`` region at (top, left); outside the image is zeros."""
    _check_image(img)
    return F_t.crop(img, top, left, height, width) if _is_tensor(img) else F_pil.crop(img, top, left, height, width)


def _pair(size, name: str = "size") -> tuple[int, int]:
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if len(size) == 1:
        return int(size[0]), int(size[0])
    if len(size) != 2:
        raise ValueError(f"Please provide only two dimensions (h, w) for {name}.")
    return int(size[0]), int(size[1])


def center_crop(img, output_size):
    """The centre ``output_size`` region, zero-padding first if the image is smaller."""
    crop_h, crop_w = _pair(output_size)
    _, h, w = get_dimensions(img)
    if crop_w > w or crop_h > h:
        padding = [(crop_w - w) // 2 if crop_w > w else 0, (crop_h - h) // 2 if crop_h > h else 0,
                   (crop_w - w + 1) // 2 if crop_w > w else 0, (crop_h - h + 1) // 2 if crop_h > h else 0]
        img = pad(img, padding, fill=0)
        _, h, w = get_dimensions(img)
        if crop_w == w and crop_h == h:
            return img
    return crop(img, int(round((h - crop_h) / 2.0)), int(round((w - crop_w) / 2.0)), crop_h, crop_w)


def resized_crop(img, top: int, left: int, height: int, width: int, size,
                 interpolation=InterpolationMode.BILINEAR, antialias: bool | None = True):
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


def hflip(img):
    _check_image(img)
    return img.flip(-1) if _is_tensor(img) else F_pil.hflip(img)


def vflip(img):
    _check_image(img)
    return img.flip(-2) if _is_tensor(img) else F_pil.vflip(img)


def rotate(img, angle: float, interpolation=InterpolationMode.NEAREST, expand: bool = False,
           center: list[int] | None = None, fill=None):
    """Rotate a PIL image by ``angle`` degrees counter-clockwise (PIL's ``Image.rotate``)."""
    if _is_tensor(img):
        raise TypeError("ember.vision rotates PIL images (RandomRotation / rotate); convert a tensor with "
                        "transforms.ToPILImage first")
    _check_image(img)
    return F_pil.rotate(img, angle, _PIL_CODES[_interpolation(interpolation)], expand, center, fill)


# ------------------------------------------------------------------------------------------- colour
def _enhance(img, factor: float, name: str, tensor_fn, pil_fn):
    if factor < 0:
        raise ValueError(f"{name} ({factor}) is not non-negative.")
    _check_image(img)
    return tensor_fn(img, factor) if _is_tensor(img) else pil_fn(img, factor)


def adjust_brightness(img, brightness_factor: float):
    """Blend with black: 0 gives black, 1 the image, 2 twice as bright (PIL's ImageEnhance.Brightness)."""
    return _enhance(img, brightness_factor, "brightness_factor", F_t.adjust_brightness, F_pil.adjust_brightness)


def adjust_contrast(img, contrast_factor: float):
    """Blend with the mean grey level (PIL's ImageEnhance.Contrast)."""
    return _enhance(img, contrast_factor, "contrast_factor", F_t.adjust_contrast, F_pil.adjust_contrast)


def adjust_saturation(img, saturation_factor: float):
    """Blend with the greyscale image (PIL's ImageEnhance.Color)."""
    return _enhance(img, saturation_factor, "saturation_factor", F_t.adjust_saturation, F_pil.adjust_saturation)


def adjust_hue(img, hue_factor: float):
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    _check_image(img)
    return F_t.adjust_hue(img, hue_factor) if _is_tensor(img) else F_pil.adjust_hue(img, hue_factor)


def rgb_to_grayscale(img, num_output_channels: int = 1):
    _check_image(img)
    if _is_tensor(img):
        return F_t.rgb_to_grayscale(img, num_output_channels)
    return F_pil.to_grayscale(img, num_output_channels)


to_grayscale = rgb_to_grayscale


def gaussian_blur(img, kernel_size, sigma=None):
    """Gaussian blur with odd positive ``kernel_size`` ((kx, ky) or int); ``sigma`` defaults to
    ``0.3 * ((k - 1) * 0.5 - 1) + 0.8``. PIL images are blurred as tensors and converted back."""
    kernel = [int(kernel_size)] * 2 if isinstance(kernel_size, int) else [int(k) for k in kernel_size]
    if len(kernel) == 1:
        kernel = kernel * 2
    if len(kernel) != 2 or any(k <= 0 or k % 2 == 0 for k in kernel):
        raise ValueError(f"kernel_size should have odd and positive integers. Got {kernel_size}")
    if sigma is None:
        sigmas = [k * 0.15 + 0.35 for k in kernel]
    elif isinstance(sigma, (int, float)):
        sigmas = [float(sigma)] * 2
    else:
        sigmas = [float(s) for s in sigma] * (2 if len(sigma) == 1 else 1)
    if any(s <= 0 for s in sigmas):
        raise ValueError(f"sigma should have positive values. Got {sigmas}")
    _check_image(img)
    if _is_tensor(img):
        return F_t.gaussian_blur(img, kernel, sigmas)
    return to_pil_image(F_t.gaussian_blur(pil_to_tensor(img), kernel, sigmas), mode=img.mode)

__getattr__ = _module_getattr(__name__, "torchvision.transforms.functional")  # missing names: torchvision features

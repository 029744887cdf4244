"""The PIL-image halves of ``transforms.functional`` (torchvision's ``_functional_pil``).

Pillow is an optional dependency (``pip install ember[vision]``); it is imported when a PIL image is handled.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def pil():
    """``PIL.Image``, or an ImportError saying how to get it."""
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError("ember.vision needs Pillow for PIL images: pip install pillow (or ember[vision])") from e
    return Image


def is_pil_image(img: Any) -> bool:
    try:
        from PIL import Image
    except ImportError:
        return False
    return isinstance(img, Image.Image)


def get_dimensions(img) -> list[int]:
    return [len(img.getbands()), img.height, img.width]


def _fill(img, fill):
    """PIL's fill for ``img``'s mode: a number for one band, a tuple otherwise (torchvision's ``_parse_fill``)."""
    if fill is None:
        fill = 0
    bands = len(img.getbands())
    if isinstance(fill, (int, float)) and bands > 1:
        fill = tuple([fill] * bands)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * bands
        if len(fill) != bands:
            raise ValueError(f"The number of elements in 'fill' does not match the number of bands of the image "
                             f"({len(fill)} != {bands})")
        fill = tuple(fill) if bands > 1 else fill[0]
    return tuple(int(v) for v in fill) if isinstance(fill, tuple) and img.mode != "F" else fill


def hflip(img):
    return img.transpose(pil().Transpose.FLIP_LEFT_RIGHT)


def vflip(img):
    return img.transpose(pil().Transpose.FLIP_TOP_BOTTOM)


def crop(img, top: int, left: int, height: int, width: int):
    return img.crop((left, top, left + width, top + height))  # outside the image: zeros, as PIL crops


def resize(img, size: list[int], interpolation: int):
    return img.resize((size[1], size[0]), interpolation)  # PIL takes (width, height)


def pad(img, padding: list[int], fill, padding_mode: str):
    left, top, right, bottom = padding
    if padding_mode == "constant":
        from PIL import ImageOps

        if img.mode == "P":  # a palette image keeps its palette
            palette = img.getpalette()
            out = ImageOps.expand(img, border=(left, top, right, bottom), fill=_fill(img, fill))
            out.putpalette(palette)
            return out
        return ImageOps.expand(img, border=(left, top, right, bottom), fill=_fill(img, fill))
    # edge / reflect / symmetric: NumPy's pads of the same names; negative padding crops.
    arr = np.asarray(img)
    crop_top, crop_left = max(-top, 0), max(-left, 0)
    crop_bottom, crop_right = arr.shape[0] - max(-bottom, 0), arr.shape[1] - max(-right, 0)
    arr = arr[crop_top:crop_bottom, crop_left:crop_right]
    widths = [(max(top, 0), max(bottom, 0)), (max(left, 0), max(right, 0))] + [(0, 0)] * (arr.ndim - 2)
    out = pil().fromarray(np.pad(arr, widths, mode=padding_mode))
    if img.mode == "P":  # the padded indices keep their palette (putpalette makes an 'L' image 'P')
        out.putpalette(img.getpalette())
    return out


def rotate(img, angle: float, interpolation: int, expand: bool, center, fill):
    return img.rotate(angle, interpolation, expand, center, fillcolor=_fill(img, fill))


def adjust_brightness(img, factor: float):
    from PIL import ImageEnhance

    return ImageEnhance.Brightness(img).enhance(factor)


def adjust_contrast(img, factor: float):
    from PIL import ImageEnhance

    return ImageEnhance.Contrast(img).enhance(factor)


def adjust_saturation(img, factor: float):
    from PIL import ImageEnhance

    return ImageEnhance.Color(img).enhance(factor)


def adjust_hue(img, hue_factor: float):
    """Shift the hue in PIL's 8-bit HSV (``np.uint8`` wrap-around), as torchvision does."""
    mode = img.mode
    if mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    with np.errstate(over="ignore"):
        np_h += np.int32(hue_factor * 255).astype(np.uint8)
    image = pil()
    return image.merge("HSV", (image.fromarray(np_h, "L"), s, v)).convert(mode)


def to_grayscale(img, num_output_channels: int):
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        gray = np.array(img.convert("L"), dtype=np.uint8)
        return pil().fromarray(np.dstack([gray, gray, gray]), "RGB")
    raise ValueError("num_output_channels should be either 1 or 3")

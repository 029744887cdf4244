"""The tensor halves of ``transforms.functional`` (torchvision's ``_functional_tensor``).

Images are tensors ``(..., C, H, W)``; float images hold values in [0, 1], integer images in [0, max of the
dtype]. Results keep the input's dtype (integer results are rounded where torchvision rounds).
"""

from __future__ import annotations

import ember

from ... import nn
from ..._tensor import Tensor

F = nn.functional


def get_dimensions(img: Tensor) -> list[int]:
    channels = 1 if img.ndim == 2 else int(img.shape[-3])
    return [channels, int(img.shape[-2]), int(img.shape[-1])]


def _max_value(dtype) -> float:
    return 1.0 if dtype.is_floating_point else float(ember.iinfo(dtype).max)


def _blend(img1: Tensor, img2: Tensor, ratio: float) -> Tensor:
    bound = _max_value(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def rgb_to_grayscale(img: Tensor, num_output_channels: int = 1) -> Tensor:
    """ITU-R 601-2 luma (0.2989 R + 0.587 G + 0.114 B), cast back to the input dtype (integers truncate)."""
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        gray = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(dim=-3)
    else:
        gray = img.clone()
    if num_output_channels == 3:
        return gray.expand(*gray.shape[:-3], 3, *gray.shape[-2:]).clone()
    return gray


def adjust_brightness(img: Tensor, factor: float) -> Tensor:
    return _blend(img, ember.zeros_like(img), factor)


def adjust_contrast(img: Tensor, factor: float) -> Tensor:
    dtype = img.dtype if img.dtype.is_floating_point else ember.float32
    gray = rgb_to_grayscale(img) if img.shape[-3] == 3 else img
    mean = gray.to(dtype).mean(dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, factor)


def adjust_saturation(img: Tensor, factor: float) -> Tensor:
    if img.shape[-3] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), factor)


def _rgb_to_hsv(img: Tensor) -> Tensor:
    r, g, b = img.unbind(dim=-3)
    maxc, minc = img.max(dim=-3).values, img.min(dim=-3).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = ember.ones_like(maxc)
    s = cr / ember.where(eqc, ones, maxc)
    cr_divisor = ember.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / cr_divisor, (maxc - g) / cr_divisor, (maxc - b) / cr_divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = ember.remainder((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return ember.stack((h, s, maxc), dim=-3)


def _hsv_to_rgb(img: Tensor) -> Tensor:
    h, s, v = img.unbind(dim=-3)
    i = ember.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(ember.int64) % 6
    p = (v * (1.0 - s)).clamp(0.0, 1.0)
    q = (v * (1.0 - s * f)).clamp(0.0, 1.0)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0.0, 1.0)
    # Sector i of the hue circle picks (r, g, b) from (v, q, p, t) as colorsys.hsv_to_rgb does.
    table = ((v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q))
    out = [ember.zeros_like(v) for _ in range(3)]
    for sector, channels in enumerate(table):
        mask = i == sector
        out = [ember.where(mask, c, o) for c, o in zip(channels, out)]
    return ember.stack(out, dim=-3)


def adjust_hue(img: Tensor, hue_factor: float) -> Tensor:
    if img.shape[-3] == 1:
        return img
    dtype = img.dtype
    x = img if dtype.is_floating_point else img.to(ember.float32) / 255.0
    hsv = _rgb_to_hsv(x)
    h, s, v = hsv.unbind(dim=-3)
    h = ember.remainder(h + hue_factor, 1.0)
    out = _hsv_to_rgb(ember.stack((h, s, v), dim=-3))
    return out if dtype.is_floating_point else (out * 255.0).to(dtype)


def pad(img: Tensor, padding: list[int], fill: float, padding_mode: str) -> Tensor:
    left, top, right, bottom = padding
    if padding_mode == "symmetric":  # mirror including the edge pixel: index arithmetic, no kernel for it
        h, w = img.shape[-2], img.shape[-1]
        rows = _symmetric_index(h, top, bottom)
        cols = _symmetric_index(w, left, right)
        return img.index_select(-2, rows).index_select(-1, cols)
    mode = {"edge": "replicate"}.get(padding_mode, padding_mode)
    squeeze = img.ndim == 3
    x = img.unsqueeze(0) if squeeze else img
    integer = not x.dtype.is_floating_point
    if integer and mode != "constant":
        x = x.to(ember.float32)
    out = F.pad(x, [left, right, top, bottom], mode=mode, value=float(fill or 0) if mode == "constant" else None)
    out = out.to(img.dtype) if integer else out
    return out.squeeze(0) if squeeze else out


def _symmetric_index(n: int, before: int, after: int) -> Tensor:
    idx = ember.arange(-before, n + after)
    period = 2 * n
    idx = ember.remainder(idx, period)
    return ember.where(idx >= n, period - 1 - idx, idx)


def crop(img: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    h, w = img.shape[-2], img.shape[-1]
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:  # PIL's crop: zeros outside the image
        padding = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0), max(right - max(w, left), 0),
                   max(bottom - max(h, top), 0)]
        inner = img[..., max(top, 0):bottom, max(left, 0):right]
        return pad(inner, padding, 0, "constant")
    return img[..., top:bottom, left:right]


def resize(img: Tensor, size: list[int], interpolation: str, antialias: bool) -> Tensor:
    """``interpolate`` on ``img`` as float; antialias only for bilinear / bicubic (torchvision ignores it else)."""
    dtype = img.dtype
    batch_shape = img.shape[:-3]
    x = img.reshape(-1, *img.shape[-3:]) if img.ndim >= 3 else img.reshape(1, 1, *img.shape)
    if not dtype.is_floating_point:
        x = x.to(ember.float32)
    align = False if interpolation in ("bilinear", "bicubic") else None
    antialias = antialias and interpolation in ("bilinear", "bicubic")
    out = F.interpolate(x, size=list(size), mode=interpolation, align_corners=align, antialias=antialias)
    if interpolation == "bicubic" and dtype == ember.uint8:
        out = out.clamp(0, 255)
    if not dtype.is_floating_point:
        out = out.round().to(dtype)
    return out.reshape(*batch_shape, *out.shape[-3:]) if img.ndim >= 3 else out.reshape(out.shape[-2:])


def gaussian_kernel1d(kernel_size: int, sigma: float) -> Tensor:
    half = (kernel_size - 1) * 0.5
    x = ember.linspace(-half, half, steps=kernel_size)
    pdf = ember.exp(-0.5 * (x / sigma).pow(2))
    return pdf / pdf.sum()


def gaussian_blur(img: Tensor, kernel_size: list[int], sigma: list[float]) -> Tensor:
    """Separable Gaussian, reflect padding, one depthwise 2-D convolution (torchvision's algorithm)."""
    dtype = img.dtype if img.dtype.is_floating_point else ember.float32
    kx = gaussian_kernel1d(kernel_size[0], sigma[0]).to(dtype)
    ky = gaussian_kernel1d(kernel_size[1], sigma[1]).to(dtype)
    kernel = ky[:, None] * kx[None, :]
    channels = img.shape[-3]
    x = img.reshape(-1, *img.shape[-3:]).to(dtype)
    x = F.pad(x, [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2, kernel_size[1] // 2], mode="reflect")
    out = F.conv2d(x, kernel.expand(channels, 1, *kernel.shape).contiguous(), groups=channels)
    if not img.dtype.is_floating_point:
        out = out.round().to(img.dtype)
    return out.reshape(img.shape)


def convert_image_dtype(image: Tensor, dtype) -> Tensor:
    """torchvision's rescaling between [0, 1] floats and [0, max] integers."""
    if image.dtype == dtype:
        return image
    if image.dtype.is_floating_point:
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == ember.float32 and dtype in (ember.int32, ember.int64)) or (
                image.dtype == ember.float64 and dtype == ember.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed safely.")
        eps = 1e-3
        max_val = float(_max_value(dtype))
        return image.mul(max_val + 1.0 - eps).to(dtype)
    input_max = float(_max_value(image.dtype))
    if dtype.is_floating_point:
        return image.to(dtype) / input_max
    output_max = float(_max_value(dtype))
    if input_max > output_max:  # an integer division by a power of two, as torchvision
        factor = int((input_max + 1) // (output_max + 1))
        return ember.div(image, factor, rounding_mode="floor").to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


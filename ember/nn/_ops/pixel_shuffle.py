"""``pixel_shuffle`` / ``pixel_unshuffle``: channels to space and back, a reshape, a permute and a reshape.

(*, C * r * r, H, W) <-> (*, C, H * r, W * r): output pixel (h * r + i, w * r + j) of channel c is input channel
c * r * r + i * r + j at (h, w). The gradient is the inverse rearrangement (recorded by the shape ops).
"""

from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.graph import shown_as


def _check(name: str, input: Tensor, factor, what: str) -> None:
    if not isinstance(factor, int) or isinstance(factor, bool):
        raise TypeError(f"{name}(): argument '{what}' (position 2) must be int, not {type(factor).__name__}")
    if input._data.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with "
                           f"{input._data.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r) with r = ``upscale_factor``."""
    _check("pixel_shuffle", input, upscale_factor, "upscale_factor")
    r = upscale_factor
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    k = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)  # (*, C, H, r, W, r)
    # (PyTorch's one node, named on ember's last: its reshape)
    return shown_as(x.reshape(*batch, c // (r * r), h * r, w * r), "PixelShuffleBackward0")


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W) with r = ``downscale_factor``: the inverse of pixel_shuffle."""
    _check("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    r = downscale_factor
    *batch, c, h, w = input.shape
    for name, n, d in (("height", h, -2), ("width", w, -1)):
        if n % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({d})={n} is not divisible by {r}")
    k = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)  # (*, C, r, r, H, W)
    return shown_as(x.reshape(*batch, c * r * r, h // r, w // r), "PixelUnshuffleBackward0")

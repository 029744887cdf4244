"""``pixel_shuffle`` / ``pixel_unshuffle``: channels to space and back, each one node as PyTorch records it.

(*, C * r * r, H, W) <-> (*, C, H * r, W * r): output pixel (h * r + i, w * r + j) of channel c is input channel
c * r * r + i * r + j at (h, w). Each is the other's gradient. The result is always a new tensor (also for a factor
of 1), laid out as PyTorch's CPU kernel lays it out: channels-last for a channels-last 4-d input, else row-major;
a channels_last_3d 5-d input is PyTorch's error.
"""

from __future__ import annotations

from ..._memory_format import array_memory_format, channels_last, channels_last_3d, contiguous_format, laid_out
from ..._size import c_type_name
from ..._tensor import Tensor
from ...autograd.graph import Node, torch_named


def _shuffled(a, r: int):
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r), a NumPy view where it can be one."""
    *batch, c, h, w = a.shape
    k = len(batch)
    x = a.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.transpose(*range(k), k, k + 3, k + 1, k + 4, k + 2)  # (*, C, H, r, W, r)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def _unshuffled(a, r: int):
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W), a NumPy view where it can be one."""
    *batch, c, h, w = a.shape
    k = len(batch)
    x = a.reshape(*batch, c, h // r, r, w // r, r)
    x = x.transpose(*range(k), k, k + 2, k + 4, k + 1, k + 3)  # (*, C, r, r, H, W)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def _new(a, x):
    """A copy of the rearranged ``a``, laid out as PyTorch lays out the result for the input array ``x``."""
    fmt = array_memory_format(x)
    return laid_out(a, fmt if fmt is channels_last else contiguous_format)


@torch_named("PixelShuffleBackward0")
class PixelShuffle(Node):
    def forward(self, x, r):
        self.r = r
        return _new(_shuffled(x, r), x)

    def backward(self, g):
        return (_unshuffled(g, self.r),)


@torch_named("PixelUnshuffleBackward0")
class PixelUnshuffle(Node):
    def forward(self, x, r):
        self.r = r
        return _new(_unshuffled(x, r), x)

    def backward(self, g):
        return (_shuffled(g, self.r),)


def _check(name: str, input: Tensor, factor, what: str) -> None:
    if not isinstance(factor, int) or isinstance(factor, bool):
        raise TypeError(f"{name}(): argument '{what}' (position 2) must be int, not {c_type_name(factor)}")
    if input._data.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with "
                           f"{input._data.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def _check_layout(input: Tensor) -> None:
    """PyTorch's CPU kernel lays its result out as the input's suggested memory format, and has none for a
    channels_last_3d (5-d) one: its error, after the shape checks."""
    if input._data.ndim == 5 and array_memory_format(input._data) is channels_last_3d:
        raise RuntimeError("Unsupported memory format. Supports only ChannelsLast, Contiguous")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r) with r = ``upscale_factor``."""
    _check("pixel_shuffle", input, upscale_factor, "upscale_factor")
    r = upscale_factor
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    _check_layout(input)
    return PixelShuffle.apply(input, r=r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W) with r = ``downscale_factor``: the inverse of pixel_shuffle."""
    _check("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    r = downscale_factor
    h, w = input.shape[-2:]
    for name, n, d in (("height", h, -2), ("width", w, -1)):
        if n % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({d})={n} is not divisible by {r}")
    _check_layout(input)
    return PixelUnshuffle.apply(input, r=r)

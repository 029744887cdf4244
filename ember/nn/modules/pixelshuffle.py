"""PixelShuffle / PixelUnshuffle: channels to space and back (``F.pixel_shuffle`` / ``F.pixel_unshuffle``);
ChannelShuffle: the channels of groups interleaved (``F.channel_shuffle``)."""

from __future__ import annotations

from ..._tensor import Tensor
from .._ops.channel_shuffle import channel_shuffle
from .._ops.pixel_shuffle import pixel_shuffle, pixel_unshuffle
from .module import Module


class PixelShuffle(Module):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r) with r = ``upscale_factor``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W) with r = ``downscale_factor``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """(N, C, *) -> (N, C, *) with the channels of ``groups`` groups interleaved (ShuffleNet)."""

    __constants__ = ["groups"]

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"

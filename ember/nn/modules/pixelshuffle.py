"""PixelShuffle / PixelUnshuffle: channels to space and back (``F.pixel_shuffle`` / ``F.pixel_unshuffle``)."""

from __future__ import annotations

from ..._tensor import Tensor
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

"""Upsample, UpsamplingNearest2d, UpsamplingBilinear2d: ``F.interpolate`` as a layer."""

from __future__ import annotations

from ..._tensor import Tensor
from .._ops.interpolate import interpolate
from .module import Module


class Upsample(Module):
    """``F.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)`` as a layer.

    Give ``size`` or ``scale_factor`` (stored as float, as PyTorch does); ``mode`` defaults to 'nearest'.
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(s) for s in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners, self.recompute_scale_factor = mode, align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """2-d nearest-neighbour upsampling: ``Upsample(size, scale_factor, mode='nearest')``."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-d bilinear upsampling with ``align_corners=True``: ``Upsample(size, scale_factor, 'bilinear', True)``."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)

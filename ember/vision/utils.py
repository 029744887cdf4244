"""torchvision.utils: ``make_grid`` (tile a batch of images into one) and ``save_image``."""

from __future__ import annotations

import math
import os
from typing import BinaryIO

import ember

from .._missing import module_getattr as _module_getattr
from .._tensor import Tensor
from .transforms._functional_pil import pil


def _normalize_range(t: Tensor, value_range: tuple[float, float] | None) -> None:
    low, high = value_range if value_range is not None else (float(t.min()), float(t.max()))
    t.clamp_(min=low, max=high)
    t.sub_(low).div_(max(high - low, 1e-5))


@ember.no_grad()  # torchvision's too: the grid is a picture, not part of a graph
def make_grid(tensor: Tensor | list[Tensor], nrow: int = 8, padding: int = 2, normalize: bool = False,
              value_range: tuple[float, float] | None = None, scale_each: bool = False,
              pad_value: float = 0.0) -> Tensor:
    """Tile ``(B, C, H, W)`` images (or a list of ``(C, H, W)``) into ``(C', H', W')``: ``nrow`` per row,
    ``padding`` pixels of ``pad_value`` around each; one-channel images become three-channel. ``normalize``
    shifts and scales to [0, 1] by ``value_range`` (default the min and max; per image with ``scale_each``)."""
    if isinstance(tensor, list):
        tensor = ember.stack(tensor, dim=0)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = ember.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = ember.cat((tensor, tensor, tensor), 1)
    if normalize:
        tensor = tensor.clone()
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")
        for t in tensor if scale_each else [tensor]:
            _normalize_range(t, value_range)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), pad_value)
    for k in range(nmaps):
        y, x = divmod(k, xmaps)
        grid.narrow(1, y * height + padding, height - padding).narrow(
            2, x * width + padding, width - padding).copy_(tensor[k])
    return grid


@ember.no_grad()
def save_image(tensor: Tensor | list[Tensor], fp: str | os.PathLike | BinaryIO, format: str | None = None,
               **kwargs) -> None:
    """``make_grid(tensor, **kwargs)`` written as an 8-bit image (values in [0, 1] -> round(255 x))."""
    grid = make_grid(tensor, **kwargs)
    ndarr = grid.detach().mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(ember.uint8).numpy()
    pil().fromarray(ndarr).save(fp, format=format)

__getattr__ = _module_getattr(__name__, "torchvision.utils")  # missing names: torchvision features

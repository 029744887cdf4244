"""Padding layers: ConstantPad, ZeroPad, ReflectionPad, ReplicationPad, CircularPad (1-d, 2-d, 3-d), on ``F.pad``.

An int pads every side of the last 1, 2 or 3 dims by that amount; a tuple is ``F.pad``'s
(left, right, top, bottom, front, back) as given. Negative amounts crop.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor
from .._ops.padding import pad
from .module import Module


def _sides(padding, nd: int) -> tuple:
    """An int as 2 * nd equal sides, a sequence as given (PyTorch's ``_ntuple``)."""
    return tuple(padding) if isinstance(padding, Iterable) else (padding,) * (2 * nd)


class _PadNd(Module):
    _nd = 0
    _mode = ""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sides(padding, self._nd)

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    _mode = "constant"

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``: (C, W) or (N, C, W)."""

    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with ``value``: (C, H, W) or (N, C, H, W)."""

    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with ``value``: (C, D, H, W) or (N, C, D, H, W)."""

    _nd = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    """Pad the last dim with zeros."""


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    """Pad the last 2 dims with zeros."""


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    """Pad the last 3 dims with zeros."""


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last dim with its reflection at the border (the border element not repeated); each amount must
    be smaller than the dim."""

    _nd = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last 2 dims with their reflection at the border (the border element not repeated)."""

    _nd = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last 3 dims with their reflection at the border (the border element not repeated)."""

    _nd = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last dim by repeating its border element."""

    _nd = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last 2 dims by repeating their border elements."""

    _nd = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last 3 dims by repeating their border elements."""

    _nd = 3


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        nd = input._data.ndim
        if nd not in (self._nd + 1, self._nd + 2):
            raise ValueError(f"expected {self._nd + 1}D or {self._nd + 2}D input (got {nd}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Pad the last dim with its values from the other end (wrap around)."""

    _nd = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dims with their values from the other end (wrap around)."""

    _nd = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dims with their values from the other end (wrap around)."""

    _nd = 3

"""Pooling layers: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d,
MaxUnpool1d/2d/3d, LPPool1d/2d/3d."""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor
from .._ops.adaptive_max_pool import adaptive_max_pool
from .._ops.conv import ntuple
from .._ops.lp_pool import lp_pool
from .._ops.max_unpool import max_unpool
from .._ops.pooling import adaptive_avg_pool, avg_pool, max_pool
from .module import Module


class _MaxPoolNd(Module):
    _nd = 0

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor):
        return max_pool(input, self._nd, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                        self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max over windows of (N, C, L); stride defaults to kernel_size."""

    _nd = 1


class MaxPool2d(_MaxPoolNd):
    """Max over windows of (N, C, H, W); stride defaults to kernel_size."""

    _nd = 2


class MaxPool3d(_MaxPoolNd):
    """Max over windows of (N, C, D, H, W); stride defaults to kernel_size."""

    _nd = 3


class _AvgPoolNd(Module):
    _nd = 0

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool(input, self._nd, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                        self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mean over windows of (N, C, L); stride defaults to kernel_size."""

    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        # PyTorch stores AvgPool1d's sizes as 1-tuples (visible in its repr), its ``_single``: a sequence (a string
        # too) as a tuple of its elements, anything else in a 1-tuple, unchecked: avg_pool1d refuses what is no int
        # when the module runs, not here
        stride = kernel_size if stride is None else stride
        super().__init__(*(tuple(v) if isinstance(v, Iterable) else (v,) for v in (kernel_size, stride, padding)),
                         ceil_mode, count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """Mean over windows of (N, C, H, W); stride defaults to kernel_size."""

    _nd = 2


class AvgPool3d(_AvgPoolNd):
    """Mean over windows of (N, C, D, H, W); stride defaults to kernel_size."""

    _nd = 3


class _AdaptiveAvgPoolNd(Module):
    _nd = 0

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool(input, self.output_size, self._nd)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average (N, C, L) into output_size bins."""

    _nd = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average (N, C, H, W) into output_size bins per spatial dim (None keeps a dim's size)."""

    _nd = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average (N, C, D, H, W) into output_size bins per spatial dim (None keeps a dim's size)."""

    _nd = 3


class _AdaptiveMaxPoolNd(Module):
    _nd = 0

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor):
        return adaptive_max_pool(input, self.output_size, self._nd, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """The maximum of each of output_size bins of (N, C, L)."""

    _nd = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """The maximum of each bin of (N, C, H, W), output_size bins per spatial dim (None keeps a dim's size)."""

    _nd = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """The maximum of each bin of (N, C, D, H, W)."""

    _nd = 3


class _MaxUnpoolNd(Module):
    _nd = 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = ntuple(kernel_size, self._nd, "kernel_size")
        self.stride = ntuple(stride if stride is not None else kernel_size, self._nd, "stride")
        self.padding = ntuple(padding, self._nd, "padding")

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return max_unpool(input, indices, self._nd, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: each value written at its pooling index in zeros of (N, C, L_out)."""

    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d: each value written at its pooling index in zeros of (N, C, H_out, W_out)."""

    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d: each value written at its pooling index in zeros of (N, C, D, H, W)_out."""

    _nd = 3


class _LPPoolNd(Module):
    _nd = 0

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return lp_pool(input, self._nd, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """(sum of x^p over each window of (N, C, L))^(1/p); stride defaults to kernel_size, no padding."""

    _nd = 1


class LPPool2d(_LPPoolNd):
    """(sum of x^p over each window of (N, C, H, W))^(1/p); stride defaults to kernel_size, no padding."""

    _nd = 2


class LPPool3d(_LPPoolNd):
    """(sum of x^p over each window of (N, C, D, H, W))^(1/p); stride defaults to kernel_size, no padding."""

    _nd = 3

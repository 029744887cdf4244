"""Convolution layers: Conv1d, Conv2d (stride, padding int/tuple/'same'/'valid', dilation, groups, padding_mode)."""

from __future__ import annotations

from ..._tensor import Tensor
from .. import init
from .._ops.conv import conv, conv_pads, ntuple
from .._ops.padding import pad
from .linear import _empty_param, optional_bias
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _nd = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = ntuple(kernel_size, nd, "kernel_size")
        self.stride, self.dilation = ntuple(stride, nd, "stride"), ntuple(dilation, nd, "dilation")
        self.padding = padding if isinstance(padding, str) else ntuple(padding, nd, "padding")
        self.output_padding = (0,) * nd
        self.transposed = False
        self.padding_mode = padding_mode
        # validates 'same'/'valid' (and strided 'same') now rather than at the first forward
        self._pads = conv_pads(self.padding, self.kernel_size, self.stride, self.dilation)
        self.weight = _empty_param(out_channels, in_channels // groups, *self.kernel_size, dtype=dtype, device=device)
        optional_bias(self, bias, out_channels, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.init_fan_in_uniform_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode == "zeros":
            return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups, self._nd)
        amounts = tuple(p for lo_hi in reversed(self._pads) for p in lo_hi)  # F.pad order: last dim first
        return conv(pad(input, amounts, mode=self.padding_mode), self.weight, self.bias, self.stride, 0,
                    self.dilation, self.groups, self._nd)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if isinstance(self.padding, str) or any(self.padding):
            s += f", padding={self.padding}"
        if any(d != 1 for d in self.dilation):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-d convolution over (N, C_in, L) (or unbatched (C_in, L)); weight (C_out, C_in/groups, k)."""

    _nd = 1


class Conv2d(_ConvNd):
    """2-d convolution over (N, C_in, H, W) (or unbatched); weight (C_out, C_in/groups, kh, kw).

    Default init (PyTorch's): kaiming_uniform_(a=sqrt(5)) weight, U(+-1/sqrt(fan_in)) bias.
    """

    _nd = 2

"""Convolution layers: Conv1d/2d/3d (stride, padding int/tuple/'same'/'valid', dilation, groups, padding_mode) and
ConvTranspose1d/2d/3d (also output_padding, and ``output_size=`` in forward), and their lazy forms (``LazyConv1d``...:
``in_channels`` from the first input)."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import init
from .._ops.conv import conv, conv_pads
from .._ops.conv_transpose import conv_transpose
from .._ops.padding import pad
from ..parameter import UninitializedParameter, materialize
from .lazy import LazyModuleMixin
from .linear import _empty_param, optional_bias
from .module import Module
from .utils import _ntuple

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _nd = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__()
        self._setup(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                    padding_mode, device, dtype)

    def _setup(self, in_channels: int, out_channels: int, kernel_size, stride, padding, dilation, transposed: bool,
               output_padding, groups: int, bias: bool, padding_mode: str, device, dtype) -> None:
        """PyTorch's _ConvNd.__init__: the attributes, and the weight (out, in/groups, *k), or (in, out/groups, *k)
        for a transposed convolution."""
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
        # as PyTorch's _single/_pair/_triple: an int repeated, a sequence kept as given (one of another length
        # than nd is refused by the convolution at the first forward, as PyTorch's)
        expand = _ntuple(nd)
        self.kernel_size = expand(kernel_size)
        self.stride, self.dilation = expand(stride), expand(dilation)
        self.padding = padding if isinstance(padding, str) else expand(padding)
        self.output_padding = expand(output_padding)
        self.transposed = transposed
        self.padding_mode = padding_mode
        self._pads = None  # (arguments of another length than nd: the first forward's error)
        if not transposed and all(len(v) == nd for v in (self.kernel_size, self.stride, self.dilation)) and \
                (isinstance(self.padding, str) or len(self.padding) == nd):
            # validates 'same'/'valid' (and strided 'same') now rather than at the first forward
            self._pads = conv_pads(self.padding, self.kernel_size, self.stride, self.dilation)
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = _empty_param(*shape, *self.kernel_size, dtype=dtype, device=device)
        optional_bias(self, bias, out_channels, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.init_fan_in_uniform_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        """This layer's convolution with a given weight and bias (PyTorch's hook for layers that wrap a
        convolution and change its weight per call, as LoRA does: ``conv._conv_forward(x, w + delta, b)``)."""
        if self.padding_mode == "zeros" or self._pads is None:
            return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups, self._nd)
        amounts = tuple(p for lo_hi in reversed(self._pads) for p in lo_hi)  # F.pad order: last dim first
        return conv(pad(input, amounts, mode=self.padding_mode), weight, bias, self.stride, 0,
                    self.dilation, self.groups, self._nd)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if isinstance(self.padding, str) or any(self.padding):
            s += f", padding={self.padding}"
        if any(d != 1 for d in self.dilation):
            s += f", dilation={self.dilation}"
        if any(self.output_padding):
            s += f", output_padding={self.output_padding}"
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


class Conv3d(_ConvNd):
    """3-d convolution over (N, C_in, D, H, W) (or unbatched); weight (C_out, C_in/groups, kd, kh, kw)."""

    _nd = 3


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution: the gradient of the convolution with the same weight, stride, padding and dilation.

    Weight (C_in, C_out/groups, *k), initialised as PyTorch does (kaiming_uniform_(a=sqrt(5)), whose fan-in is
    C_out/groups * prod(k) for this shape; bias U(+-1/sqrt(that fan-in))). Only padding_mode='zeros', as PyTorch.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        Module.__init__(self)
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        self._setup(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding, groups,
                    bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        """The output_padding that gives ``output_size`` (the spatial sizes, or the whole shape), as PyTorch."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        lead = 2 if input.ndim == nd + 2 else 1
        size = [int(v) for v in output_size]
        if len(size) == lead + nd:
            size = size[lead:]
        if len(size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.ndim}D input, output_size must have {nd} or "
                             f"{lead + nd} elements (got {len(size)})")
        lows = [(input.shape[lead + d] - 1) * self.stride[d] - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        highs = [lo + s - 1 for lo, s in zip(lows, self.stride)]
        if not all(lo <= n <= hi for lo, n, hi in zip(lows, size, highs)):
            raise ValueError(f"requested an output size of {size}, but valid sizes range from {lows} to {highs} (for "
                             f"an input of {list(input.shape[lead:])})")
        return tuple(n - lo for n, lo in zip(size, lows))

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        return conv_transpose(input, self.weight, self.bias, self.stride, self.padding,
                              self._output_padding(input, output_size), self.groups, self.dilation, self._nd)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution over (N, C_in, L) (or unbatched); weight (C_in, C_out/groups, k)."""

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution over (N, C_in, H, W) (or unbatched); weight (C_in, C_out/groups, kh, kw).
    Output size per dim: (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1."""

    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution over (N, C_in, D, H, W) (or unbatched); weight (C_in, C_out/groups, kd, kh, kw)."""

    _nd = 3


class _LazyConvXdMixin(LazyModuleMixin):
    """A convolution whose ``in_channels`` is its first input's channel dimension."""

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)  # type: ignore
        self._lazy_weight_and_bias(out_channels, bias, device, dtype)

    def _lazy_weight_and_bias(self: Any, out_channels: int, bias: bool, device, dtype) -> None:
        self.out_channels = out_channels
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.register_parameter("bias", UninitializedParameter(device=device, dtype=dtype) if bias else None)
        self._start_lazy()

    def reset_parameters(self: Any) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self: Any, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                batched, unbatched = self._nd + 2, self._nd + 1
                if input.dim() not in (batched, unbatched):
                    raise RuntimeError(f"Expected {unbatched}D (unbatched) or {batched}D (batched) input to "
                                       f"{type(self).__name__}, but got input of size: {input.shape}")
                self.in_channels = input.shape[1] if input.dim() == batched else input.shape[0]
                if self.in_channels % self.groups:
                    raise ValueError("in_channels must be divisible by groups")
                shape = ((self.in_channels, self.out_channels // self.groups) if self.transposed
                         else (self.out_channels, self.in_channels // self.groups))
                materialize(self.weight, (*shape, *self.kernel_size))
                if self.bias is not None:
                    materialize(self.bias, (self.out_channels,))
                self.reset_parameters()


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """``Conv1d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """``Conv2d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """``Conv3d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = Conv3d


class _LazyConvTransposeXdMixin(_LazyConvXdMixin):
    """A transposed convolution whose ``in_channels`` is its first input's channel dimension."""

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super(_LazyConvXdMixin, self).__init__(0, 0, kernel_size, stride, padding, output_padding,  # type: ignore
                                               groups, False, dilation, padding_mode)
        self._lazy_weight_and_bias(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvTransposeXdMixin, ConvTranspose1d):
    """``ConvTranspose1d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeXdMixin, ConvTranspose2d):
    """``ConvTranspose2d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeXdMixin, ConvTranspose3d):
    """``ConvTranspose3d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = ConvTranspose3d

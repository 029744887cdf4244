"""Affine and shape layers: Identity, Linear, Bilinear, Flatten, Unflatten, and LazyLinear (``in_features`` from the
first input)."""

from __future__ import annotations

import math

from ... import _creation
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import init
from .._ops.linear import bilinear, linear
from ..parameter import Parameter, UninitializedParameter, materialize
from .lazy import LazyModuleMixin
from .module import Module


def _empty_param(*shape, dtype=None, device=None) -> Parameter:
    """An uninitialised parameter (reset_parameters fills it)."""
    return Parameter(_creation.empty(shape, dtype=dtype, device=device))


def optional_bias(module: Module, bias: bool, size: int, dtype, device) -> None:
    """Register ``bias`` as a parameter of ``size`` elements, or as None when ``bias`` is False."""
    module.register_parameter("bias", _empty_param(size, dtype=dtype, device=device) if bias else None)


class Identity(Module):
    """Returns its input unchanged (accepts and ignores any constructor arguments)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x W^T + b with W (out_features, in_features).

    Default init (PyTorch's): W ~ kaiming_uniform_(a=sqrt(5)), i.e. U(+-1/sqrt(in_features)),
    and b ~ U(+-1/sqrt(in_features)).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = _empty_param(out_features, in_features, dtype=dtype, device=device)
        optional_bias(self, bias, out_features, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.init_fan_in_uniform_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """``Linear`` under the name MultiheadAttention's output projection has in PyTorch (a marker for its
    quantization tools; ember does not quantize, so it is the plain layer)."""


class Bilinear(Module):
    """y = x1^T A x2 + b with A (out_features, in1_features, in2_features); init U(+-1/sqrt(in1_features))."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = _empty_param(out_features, in1_features, in2_features, dtype=dtype, device=device)
        optional_bias(self, bias, out_features, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Flatten(Module):
    """Flattens dims start_dim..end_dim (default 1..-1: keeps the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dim ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dimension of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.register_parameter("bias", UninitializedParameter(device=device, dtype=dtype) if bias else None)
        self._start_lazy()

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                materialize(self.weight, (self.out_features, self.in_features))
                if self.bias is not None:
                    materialize(self.bias, (self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # (loaded from a state dict before the first forward)
            self.in_features = input.shape[-1]

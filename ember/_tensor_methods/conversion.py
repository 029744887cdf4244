"""Tensor methods for dtype conversion, copies and new tensors (``ember/ops/__init__.py``, ``ember/_legacy.py``).

``float``, ``int`` and ``bool`` are methods here (PyTorch's names), so annotations in this class write
``builtins.bool``.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from .. import _dtype, ops
from .._backend import xp

if TYPE_CHECKING:
    from .._tensor import Tensor


class ConversionMethods:
    __slots__ = ()

    def clone(self, *, memory_format=None) -> Tensor:
        return ops.clone(self, memory_format=memory_format)

    def to(self, *args, **kwargs) -> Tensor:
        return ops.to(self, *args, **kwargs)

    def type(self, dtype=None, non_blocking: bool = False, **kwargs) -> Any:
        return ops.type_(self, dtype, non_blocking, **kwargs)

    def type_as(self, other: Tensor) -> Tensor:
        return ops.elementwise.cast(self, other.dtype)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: builtins.bool = False) -> Tensor:
        return ops.new_filled(self, xp.zeros, size, dtype, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad: builtins.bool = False) -> Tensor:
        return ops.new_filled(self, xp.ones, size, dtype, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad: builtins.bool = False) -> Tensor:
        return ops.new_filled(self, xp.empty, size, dtype, requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: builtins.bool = False) -> Tensor:
        return ops.new_full(self, size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad: builtins.bool = False) -> Tensor:
        return ops.new_tensor(self, data, dtype=dtype, device=device, requires_grad=requires_grad)

    def float(self, memory_format=None) -> Tensor:
        return ops.elementwise.cast(self, _dtype.float32)

    def double(self, memory_format=None) -> Tensor:
        return ops.elementwise.cast(self, _dtype.float64)

    def half(self, memory_format=None) -> Tensor:
        return ops.elementwise.cast(self, _dtype.float16)

    def long(self, memory_format=None) -> Tensor:
        return ops.elementwise.cast(self, _dtype.int64)

    def int(self, memory_format=None) -> Tensor:
        return ops.elementwise.cast(self, _dtype.int32)

    def bool(self, memory_format=None) -> Tensor:
        return ops.elementwise.cast(self, _dtype.bool_)

"""max_unpool1d/2d/3d: the partial inverse of max pooling, each value written where its pooling index points.

Composed: the spatial dims are flattened and the values scattered into zeros at the indices (the flat positions
``max_pool(..., return_indices=True)`` returns), so the gradient is the upstream gradient gathered at them. Every
position no index names stays zero.
"""

from __future__ import annotations

import math

from ..._dtype import SCALAR_TYPE_NAMES, int64
from ..._tensor import Tensor
from .conv import ntuple


def unpool_output_size(input: Tensor, kernel, stride, padding, output_size) -> list:
    """PyTorch's rule: (in - 1) * stride + kernel - 2 * padding per spatial dim, or ``output_size`` (spatial dims,
    or all dims) when each entry lies strictly within one stride of that."""
    nd = len(kernel)
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(nd):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return [int(n) for n in output_size]


def max_unpool(input: Tensor, indices: Tensor, nd: int, kernel_size, stride=None, padding=0,
               output_size=None) -> Tensor:
    kernel = ntuple(kernel_size, nd, "kernel_size")
    stride = kernel if stride is None else ntuple(stride, nd, "stride")
    padding = ntuple(padding, nd, "padding")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"max_unpool{nd}d: expected {nd + 1}D or {nd + 2}D input, got input of size "
                           f"{list(input.shape)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    if indices.dtype != int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {SCALAR_TYPE_NAMES[indices.dtype.name]}")
    size = unpool_output_size(input, kernel, stride, padding, output_size)
    lead = tuple(input.shape[:-nd])
    flat_indices = indices.reshape(*lead, -1)
    idx = flat_indices._data
    invalid = ((idx < 0) | (idx >= math.prod(size))).reshape(-1)
    if invalid.any():  # (the first in order, as PyTorch's loop meets it; a 1-d input is its 2-d kernel's Nx1)
        shown = "x".join(str(n) for n in (size if nd > 1 else (*size, 1)))
        raise RuntimeError(f"Found an invalid max index: {int(idx.reshape(-1)[invalid.argmax()])} (output volumes "
                           f"are of size {shown})")
    out = input.new_zeros(*lead, math.prod(size))
    return out.scatter(-1, flat_indices, input.reshape(*lead, -1)).reshape(*lead, *size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    return max_unpool(input, indices, 1, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    return max_unpool(input, indices, 2, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    return max_unpool(input, indices, 3, kernel_size, stride, padding, output_size)

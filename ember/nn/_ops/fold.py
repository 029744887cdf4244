"""``unfold`` (im2col) and ``fold`` (col2im): sliding blocks of a 2-d image as columns, and back.

unfold: (N, C, H, W) -> (N, C * kh * kw, L), column l holding the (padded, dilated) block at the l-th output
position in row-major order; channel-major rows (c, ki, kj). fold is its adjoint: each column's values are added
back where its block sits, overlaps summed, padding cropped. So each one's gradient is the other: the gradient
of unfold is fold of the gradient, and the gradient of fold is unfold of it. Both loop over the kh * kw kernel
offsets, one strided window (``conv_geometry.window``) of the whole batch per offset; fold reuses pooling's scatter of
windows (channels split over threads).
"""

from __future__ import annotations

import math

from ..._backend import xp
from ..._tensor import Tensor
from ...autograd.graph import Node, torch_named
from .conv_geometry import crop_spatial, offsets, out_size, pad_spatial, window
from .pooling import _scatter


def _im2col(x, kernel, dilation, pads, stride, out):
    """x (N, C, H, W) -> (N, C, kh, kw, oh, ow): the window of each kernel offset."""
    xpad = pad_spatial(x, pads)
    cols = xp.empty_like(x, shape=(*x.shape[:2], *kernel, *out))  # (_like: under create_graph, a recorded buffer)
    for offs in offsets(kernel):
        cols[(slice(None), slice(None)) + offs] = xpad[window(offs, out, stride, dilation, 2, 0)]
    return cols


def _col2im(cols, size, kernel, dilation, pads, stride, out):
    """cols (N, C, kh, kw, oh, ow) -> (N, C, H, W): each offset's block added back where its window reads."""
    padded = (*cols.shape[:2], *(n + lo + hi for n, (lo, hi) in zip(size, pads)))

    def parts(c0: int, c1: int):
        return ((cols[(slice(None), slice(c0, c1)) + offs], None) for offs in offsets(kernel))

    return crop_spatial(_scatter(cols, out, padded, kernel, stride, dilation, parts), pads)


def _blocks6(cols, kernel, out):
    """(N, C * kh * kw, L) as (N, C, kh, kw, oh, ow)."""
    return cols.reshape(cols.shape[0], cols.shape[1] // math.prod(kernel), *kernel, *out)


@torch_named("Im2ColBackward0")  # (PyTorch's im2col kernel)
class Unfold(Node):
    def forward(self, x, kernel, dilation, pads, stride, out):
        self.meta = (x.shape[2:], kernel, dilation, pads, stride, out)
        cols = _im2col(x, kernel, dilation, pads, stride, out)
        return cols.reshape(x.shape[0], x.shape[1] * math.prod(kernel), math.prod(out))

    def backward(self, g):
        size, kernel, dilation, pads, stride, out = self.meta
        return (_col2im(_blocks6(g, kernel, out), size, kernel, dilation, pads, stride, out),)


@torch_named("Col2ImBackward0")  # (PyTorch's col2im kernel)
class Fold(Node):
    def forward(self, cols, size, kernel, dilation, pads, stride, out):
        self.meta = (kernel, dilation, pads, stride, out)
        return _col2im(_blocks6(cols, kernel, out), size, kernel, dilation, pads, stride, out)

    def backward(self, g):
        kernel, dilation, pads, stride, out = self.meta
        cols = _im2col(g, kernel, dilation, pads, stride, out)
        return (cols.reshape(g.shape[0], g.shape[1] * math.prod(kernel), math.prod(out)),)


def _pair(value, name: str) -> tuple:
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    return value


def _args(kernel_size, dilation, padding, stride):
    kernel, dilation = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    for name, v, low in (("kernel size", kernel, 1), ("stride", stride, 1), ("dilation", dilation, 1),
                         ("padding", padding, 0)):
        if min(v) < low:
            word = name.split()[0]
            raise RuntimeError(f"{name} should be {'non-negative' if low == 0 else 'greater than zero'}, but got "
                               f"{word}_height: {v[0]} {word}_width: {v[1]}")
    return kernel, dilation, tuple((p, p) for p in padding), stride


def _blocks(size, kernel, dilation, pads, stride, what: str) -> tuple:
    out = out_size([n + lo + hi for n, (lo, hi) in zip(size, pads)], kernel, stride, dilation)
    if min(out) < 1:
        raise RuntimeError(f"Given {what}={tuple(size)}, kernel_size={kernel}, dilation={dilation}, padding="
                           f"{tuple(p for p, _ in pads)}, calculated shape of the array of sliding blocks as "
                           f"{tuple(out)}, but its components must be at least one.")
    return out


def _check_input(input: Tensor, ndims: tuple, expected: str, kernel: str, verb: str) -> int:
    """The input's dim count, after PyTorch's checks: ``ndims`` dims, the non-batch ones non-empty, floating."""
    nd = input._data.ndim
    if nd not in ndims or any(n == 0 for n in input._data.shape[nd - ndims[0]:]):
        raise RuntimeError(f"{expected}, but got: {list(input.shape)}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype}': ember {verb} floating-point "
                                  "tensors")
    return nd


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding blocks of (N, C, H, W) (or unbatched (C, H, W)) as columns: (N, C * prod(kernel_size), L)."""
    nd = _check_input(input, (3, 4), "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
                      "non-zero dimensions for input", "im2col_out_cpu", "unfolds")
    kernel, dilation, pads, stride = _args(kernel_size, dilation, padding, stride)
    x = input if nd == 4 else input.unsqueeze(0)
    out = _blocks(x._data.shape[2:], kernel, dilation, pads, stride, "input with spatial size")
    cols = Unfold.apply(x, kernel=kernel, dilation=dilation, pads=pads, stride=stride, out=out)
    return cols if nd == 4 else cols.squeeze(0)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum columns (N, C * prod(kernel_size), L) (or unbatched (C * prod(kernel_size), L)) back into
    (N, C, *output_size): the adjoint of ``unfold``; overlapping blocks add up."""
    nd = _check_input(input, (2, 3), "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size "
                      "and non-zero dimensions for input", "col2im_out_cpu", "folds")
    size = _pair(output_size, "output_size")
    kernel, dilation, pads, stride = _args(kernel_size, dilation, padding, stride)
    cols = input if nd == 3 else input.unsqueeze(0)
    rows, length = cols._data.shape[1:]
    if rows % math.prod(kernel):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={rows} and kernel_size={kernel}.")
    out = _blocks(size, kernel, dilation, pads, stride, "output_size")
    if math.prod(out) != length:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, padding="
                           f"{tuple(p for p, _ in pads)}, stride={stride}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {out[0]} * {out[1]} = {math.prod(out)}, "
                           f"but got input.size(2)={length}.")
    x = Fold.apply(cols, size=size, kernel=kernel, dilation=dilation, pads=pads, stride=stride, out=out)
    return x if nd == 3 else x.squeeze(0)

"""Convolution (1-d and 2-d, any stride/padding/dilation/groups) by im2col + batched matmul.

The input is padded, viewed as sliding windows without copying
(``sliding_window_view``), and the windows are copied once into a column
matrix; the convolution is then one matmul per group. Backward scatters the
column gradient back with one strided add per kernel offset (``col2im``).
Pooling reuses these window helpers.
"""

from __future__ import annotations

import itertools
import math

from ..._backend import xp
from ..._tensor import Tensor
from ...autograd.graph import Node
from .linear import _check_same_dtype


def pad_spatial(x, pads, value=0):
    """Pad the spatial dims (all after the first two) by ``pads`` = ((lo, hi), ...)."""
    if not any(lo or hi for lo, hi in pads):
        return x
    return xp.pad(x, ((0, 0), (0, 0), *pads), constant_values=value)


def windows(x, kernel, stride, dilation):
    """A (N, C, *out, *kernel) view of every (strided, dilated) window of the padded input ``x``."""
    nd = len(kernel)
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    win = xp.lib.stride_tricks.sliding_window_view(x, span, axis=tuple(range(2, 2 + nd)))
    return win[(slice(None),) * 2 + tuple(slice(None, None, s) for s in stride)
               + tuple(slice(None, None, d) for d in dilation)]


def col2im(gcols, padded_shape, stride, dilation, dtype):
    """Sum window gradients (N, C, *kernel, *out) back onto the padded input: the adjoint of ``windows``."""
    nd = len(stride)
    kernel, out = gcols.shape[2:2 + nd], gcols.shape[2 + nd:]
    gx = xp.zeros(padded_shape, dtype=dtype)
    for offs in itertools.product(*(range(k) for k in kernel)):
        target = (slice(None),) * 2 + tuple(
            slice(o * d, o * d + s * (n - 1) + 1, s) for o, d, s, n in zip(offs, dilation, stride, out))
        gx[target] += gcols[(slice(None),) * 2 + offs]
    return gx


def crop_spatial(g, pads):
    """Undo ``pad_spatial`` on a gradient."""
    if not any(lo or hi for lo, hi in pads):
        return g
    return g[(slice(None),) * 2 + tuple(slice(lo, g.shape[2 + i] - hi) for i, (lo, hi) in enumerate(pads))]


class ConvNd(Node):
    def forward(self, x, w, b, stride, pads, dilation, groups):
        nd = x.ndim - 2
        n, o = x.shape[0], w.shape[0]
        xpad = pad_spatial(x, pads)
        win = windows(xpad, w.shape[2:], stride, dilation)
        out_sp = win.shape[2:2 + nd]
        # im2col, the one copy: (N, G, C/G * prod(kernel), prod(out))
        order = (0, 1, *range(2 + nd, 2 + 2 * nd), *range(2, 2 + nd))
        cols = win.transpose(order).reshape(n, groups, -1, math.prod(out_sp))
        out = xp.matmul(w.reshape(groups, o // groups, -1), cols).reshape(n, o, *out_sp)
        if b is not None:
            out += b.reshape(o, *(1,) * nd)
        self.saved = (cols, w)
        self.meta = (xpad.shape, out_sp, stride, pads, dilation, groups)
        return out

    def backward(self, g):
        cols, w = self.saved
        padded_shape, out_sp, stride, pads, dilation, groups = self.meta
        nx, nw, nb = self.needs_input_grad
        n, o = g.shape[:2]
        gm = g.reshape(n, groups, o // groups, -1)
        gx = gw = gb = None
        if nw:  # dW = sum_n g_n @ cols_n^T, per group
            gw = xp.matmul(gm, cols.transpose(0, 1, 3, 2)).sum(0).reshape(w.shape)
        if nx:  # dcols = W^T g, then scatter back to the input positions
            gcols = xp.matmul(w.reshape(groups, o // groups, -1).transpose(0, 2, 1), gm)
            gcols = gcols.reshape(n, padded_shape[1], *w.shape[2:], *out_sp)
            gx = crop_spatial(col2im(gcols, padded_shape, stride, dilation, g.dtype), pads)
        if nb:
            gb = g.sum(axis=(0, *range(2, g.ndim)))
        return gx, gw, gb


def ntuple(value, n: int, name: str) -> tuple:
    """An int or a sequence of n ints as a tuple of n ints."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        return value * n
    if len(value) != n or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {value}")
    return value


def conv_pads(padding, kernel, stride, dilation) -> tuple:
    """((lo, hi), ...) for an int/tuple padding or 'same'/'valid'."""
    nd = len(kernel)
    if padding == "valid":
        return ((0, 0),) * nd
    if padding == "same":
        if any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in total)  # the odd extra goes on the right, as PyTorch
    if isinstance(padding, str):
        raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    return tuple((p, p) for p in ntuple(padding, nd, "padding"))


def conv(input: Tensor, weight: Tensor, bias, stride, padding, dilation, groups: int, nd: int) -> Tensor:
    """Shared body of conv1d/conv2d: validate, add the batch dim if missing, run the node."""
    name = f"conv{nd}d"
    if input._data.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input.shape)}")
    if weight._data.ndim != nd + 2:
        raise RuntimeError(f"{name}: weight must be {nd + 2}-D (out, in/groups, *kernel), got {list(weight.shape)}")
    unbatched = input._data.ndim == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    stride, dilation = ntuple(stride, nd, "stride"), ntuple(dilation, nd, "dilation")
    kernel = weight._data.shape[2:]
    pads = conv_pads(padding, kernel, stride, dilation)
    c = input._data.shape[1]
    if weight._data.shape[1] * groups != c or weight._data.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight._data.shape[1] * groups} channels, but got {c} "
                           "channels instead")
    padded = [n + lo + hi for n, (lo, hi) in zip(input._data.shape[2:], pads)]
    span = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(p < s for p, s in zip(padded, span)):
        raise RuntimeError(f"{name}: calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                           f"Kernel size: ({' x '.join(map(str, span))}). Kernel size can't be greater than actual "
                           "input size")
    _check_same_dtype(name, input, weight, bias)
    out = ConvNd.apply(input, weight, bias, stride=stride, pads=pads, dilation=dilation, groups=groups)
    return out.squeeze(0) if unbatched else out


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """1-d cross-correlation of (N, C_in, L) with weight (C_out, C_in/groups, k)."""
    return conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """2-d cross-correlation of (N, C_in, H, W) with weight (C_out, C_in/groups, kh, kw)."""
    return conv(input, weight, bias, stride, padding, dilation, groups, 2)

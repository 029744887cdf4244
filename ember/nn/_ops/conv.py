"""Convolution (1-d and 2-d, any stride/padding/dilation/groups) by im2col + one matmul per group.

Layout: the convolution works on *batch-last* arrays, (C, *spatial, N) in memory, and returns
its output as an (N, C, *spatial) view of such an array. Each of the prod(kernel) shifted
windows of the input is then a block whose rows are long contiguous runs (W * N elements),
so building the column matrix (im2col) and scattering its gradient back (col2im) are a few
large strided copies instead of many short ones, and the matmul output already is the next
layer's layout. Elementwise ops and pooling keep the layout (NumPy allocates results in the
input's memory order), so a conv stack converts to batch-last once, at its input.
Pooling reuses ``offsets`` and ``window``.
"""

from __future__ import annotations

import itertools

from ..._backend import xp
from ..._tensor import Tensor
from ...autograd.graph import Node
from .linear import _check_same_dtype


def offsets(kernel):
    """Every kernel offset (k_1, ..., k_d), row-major (window order)."""
    return itertools.product(*(range(k) for k in kernel))


def window(offs, out, stride, dilation, lead: int, trail: int) -> tuple:
    """Index of the input elements under kernel offset ``offs`` for every output position."""
    return ((slice(None),) * lead
            + tuple(slice(o * d, o * d + s * (n - 1) + 1, s) for o, d, s, n in zip(offs, dilation, stride, out))
            + (slice(None),) * trail)


def out_size(padded, kernel, stride, dilation) -> tuple:
    return tuple((p - d * (k - 1) - 1) // s + 1 for p, k, s, d in zip(padded, kernel, stride, dilation))


def pad_spatial(x, pads, value=0):
    """Pad the spatial dims (all after the first two) by ``pads`` = ((lo, hi), ...)."""
    if not any(lo or hi for lo, hi in pads):
        return x
    return xp.pad(x, ((0, 0), (0, 0), *pads), constant_values=value)


def crop_spatial(g, pads, lead: int = 2):
    """Undo a padding of the dims after the first ``lead`` ones (a view)."""
    if not any(lo or hi for lo, hi in pads):
        return g
    return g[(slice(None),) * lead + tuple(slice(lo, g.shape[lead + i] - hi) for i, (lo, hi) in enumerate(pads))]


def _batch_last_padded(x, pads):
    """(N, C, *sp) -> padded (C, *padded, N), contiguous: a view when x already is batch-last and unpadded."""
    xb = x.transpose(*range(1, x.ndim), 0)
    if not any(lo or hi for lo, hi in pads):
        return xb if xb.flags.c_contiguous else xp.ascontiguousarray(xb)
    out = xp.zeros((xb.shape[0], *(n + lo + hi for n, (lo, hi) in zip(xb.shape[1:-1], pads)), xb.shape[-1]), xb.dtype)
    out[(slice(None),) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(xb.shape[1:-1], pads))] = xb
    return out


class ConvNd(Node):
    def forward(self, x, w, b, stride, pads, dilation, groups):
        nd = x.ndim - 2
        o, kernel = w.shape[0], w.shape[2:]
        xb = _batch_last_padded(x, pads)
        out_sp = out_size(xb.shape[1:-1], kernel, stride, dilation)
        # im2col, the one copy: cols[c, *k, *out, n] = xpad[n, c, out * stride + k * dilation]
        cols = xp.empty((xb.shape[0], *kernel, *out_sp, xb.shape[-1]), x.dtype)
        for offs in offsets(kernel):
            cols[(slice(None), *offs)] = xb[window(offs, out_sp, stride, dilation, 1, 1)]
        wg = w.reshape(groups, o // groups, -1)
        out = xp.matmul(wg, cols.reshape(groups, wg.shape[2], -1)).reshape(o, *out_sp, xb.shape[-1])
        if b is not None:
            out += b.reshape(o, *(1,) * (nd + 1))
        self.saved = (cols, w)
        self.meta = (xb.shape, out_sp, stride, pads, dilation, groups)
        return out.transpose(nd + 1, *range(nd + 1))

    def backward(self, g):
        cols, w = self.saved
        padded_shape, out_sp, stride, pads, dilation, groups = self.meta
        nx, nw, nb = self.needs_input_grad
        o, kernel = w.shape[0], w.shape[2:]
        wg = w.reshape(groups, o // groups, -1)
        # (N, O, *out) -> (G, O/G, out * N): free when g is batch-last (it is, behind this layer's own ops)
        gb_last = g.transpose(*range(1, g.ndim), 0)
        gm = (gb_last if gb_last.flags.c_contiguous else xp.ascontiguousarray(gb_last)).reshape(groups, o // groups, -1)
        colm = cols.reshape(groups, wg.shape[2], -1)
        gx = gw = gb = None
        if nw:  # dW = g @ cols^T, per group
            gw = xp.matmul(gm, colm.transpose(0, 2, 1)).reshape(w.shape)
        if nx:  # dcols = W^T g, then col2im: add each offset's block back where im2col took it
            gcols = xp.matmul(wg.transpose(0, 2, 1), gm).reshape(cols.shape)
            gxb = xp.zeros(padded_shape, g.dtype)
            for offs in offsets(kernel):
                gxb[window(offs, out_sp, stride, dilation, 1, 1)] += gcols[(slice(None), *offs)]
            gxb = crop_spatial(gxb, pads, lead=1)
            gx = gxb.transpose(gxb.ndim - 1, *range(gxb.ndim - 1))
        if nb:
            gb = gm.reshape(o, -1).sum(1)
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

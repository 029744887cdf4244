"""``pad``: constant padding (negative amounts crop) and reflect / replicate / circular padding."""

from __future__ import annotations

from ..._backend import xp
from ..._tensor import Tensor
from ...autograd.graph import Node

_INDEX_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


class ConstantPad(Node):
    def forward(self, x, widths, value):
        self.widths = widths
        return xp.pad(x, widths, constant_values=value)

    def backward(self, g):
        return (g[tuple(slice(lo, g.shape[i] - hi) for i, (lo, hi) in enumerate(self.widths))],)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last len(pad)//2 dims: ``pad = (left, right, top, bottom, ...)`` starting from the last dim.

    'constant' fills with ``value`` (default 0) and crops for negative amounts; 'reflect',
    'replicate' and 'circular' repeat the input's own values (gradients flow back to them).
    """
    pad = tuple(int(p) for p in pad)
    nd = input._data.ndim
    if len(pad) % 2:
        raise ValueError(f"Padding length must be divisible by 2, got pad={pad}")
    if len(pad) // 2 > nd:
        raise ValueError(f"Padding length too large: pad={pad} pads {len(pad) // 2} dims of a {nd}-D input")
    widths = [(0, 0)] * nd
    for i in range(len(pad) // 2):
        widths[nd - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode == "constant":
        if any(lo < 0 or hi < 0 for lo, hi in widths):
            input = input[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(widths, input.shape))]
            widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
        return ConstantPad.apply(input, widths=tuple(widths), value=0 if value is None else value)
    if mode not in _INDEX_MODES:
        raise NotImplementedError(f"pad: mode '{mode}' is not supported (use constant, reflect, replicate or circular)")
    if value is not None:
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument.')
    k = len(pad) // 2
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {nd}D input tensor: {mode} padding "
                                  "pads the last 1, 2 or 3 dims of a (C, *) or (N, C, *) input (pad length 2, 4 or 6)")
    from ...ops.indexing import index_select

    for d, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        n = input._data.shape[d]
        grow = (max(lo, 0), max(hi, 0))  # negative amounts crop, after the padding (as PyTorch's kernels index)
        if (mode == "reflect" and max(grow) >= n) or (mode == "circular" and max(grow) > n) \
                or n + lo + hi < (mode != "circular"):
            raise RuntimeError(f"pad: padding ({lo}, {hi}) of dim {d} must be smaller than the dimension's size {n} "
                               f"in {mode} mode{' (or equal to it)' if mode == 'circular' else ''}, and not crop it "
                               "away")
        idx = xp.pad(xp.arange(n), grow, mode=_INDEX_MODES[mode])
        idx = idx[max(-lo, 0):idx.shape[0] - max(-hi, 0)]
        input = index_select(input, d, Tensor._make(idx))
    return input

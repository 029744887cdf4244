"""``pad``: constant padding (negative amounts crop) and reflect / replicate / circular padding."""

from __future__ import annotations

from ..._backend import xp
from ..._tensor import Tensor
from ...autograd.graph import Node, shown_as, torch_named

_INDEX_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


class IndexPad(Node):
    """Reflect / replicate / circular padding of the dims in ``widths`` ((lo, hi) each; negative amounts crop after
    padding, as PyTorch's kernels index). Backward folds each dim's border gradient back onto the pixels it copied,
    the last padded dim first."""

    def forward(self, x, widths, mode):
        grow = tuple((max(lo, 0), max(hi, 0)) for lo, hi in widths)
        self.meta = (x.shape, widths, mode)
        if mode != "circular":  # PyTorch's reflection / replication gradient formula reads the input: under
            self.formula_reads = (0,)  # create_graph it requires grad (recorded._reading_inputs), as PyTorch's
        out = xp.pad(x, grow, mode=_INDEX_MODES[mode])
        return out[tuple(slice(max(-lo, 0), out.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(widths))]

    def backward(self, g):
        shape, widths, mode = self.meta
        if any(lo < 0 or hi < 0 for lo, hi in widths):  # undo the crop: the cropped border had no gradient
            full = xp.zeros_like(g, shape=tuple(n + max(lo, 0) + max(hi, 0) for n, (lo, hi) in zip(shape, widths)),
                                 order="C")
            full[tuple(slice(max(-lo, 0), full.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(widths))] = g
            g = full
        for d in reversed(range(len(widths))):
            lo, hi = max(widths[d][0], 0), max(widths[d][1], 0)
            if lo or hi:
                g = _fold(g, d, shape[d], lo, hi, mode)
        return (g,)


def _fold(g, d: int, n: int, lo: int, hi: int, mode: str):
    """The gradient of padding dim ``d`` (length n) by (lo, hi) in ``mode``: each border's gradient added to the
    pixels it copied."""

    def at(a, b):
        return (slice(None),) * d + (slice(a, b),)

    core = g[at(lo, lo + n)].copy(order="K")
    left, right = g[at(0, lo)], g[at(lo + n, lo + n + hi)]
    if mode == "reflect":  # padded index i < lo copied lo - i; right index j copied n - 2 - j
        core[at(1, lo + 1)] += xp.flip(left, d)
        core[at(n - 1 - hi, n - 1)] += xp.flip(right, d)
    elif mode == "replicate":
        core[at(0, 1)] += left.sum(d, keepdims=True)
        core[at(n - 1, n)] += right.sum(d, keepdims=True)
    else:  # circular: the left border copied the last lo pixels, the right one the first hi
        core[at(n - lo, n)] += left
        core[at(0, hi)] += right
    return core


@torch_named("ConstantPadNdBackward0")
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
        raise RuntimeError(f"Padding length must be divisible by 2, got pad={pad}")
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
    out = IndexPad.apply(input, widths=tuple(widths), mode=mode)
    if mode == "circular":  # (PyTorch's is a composite of copies, its last node a CopySlices: kept as IndexPad)
        return out
    return shown_as(out, f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{k}DBackward0")  # PyTorch's kernels

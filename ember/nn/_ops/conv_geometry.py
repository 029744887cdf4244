"""The geometry of convolution and pooling windows: kernel offsets, the input elements under each, output sizes,
and padding / cropping of the spatial dims (all after the first two)."""

from __future__ import annotations

import itertools

from ..._backend import xp


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
    """Pad the spatial dims (all after the first two) by ``pads`` = ((lo, hi), ...), in x's memory order (a
    batch-last input stays batch-last for the pooling that reads it)."""
    if not any(lo or hi for lo, hi in pads):
        return x
    out = xp.empty_like(x, shape=(*x.shape[:2], *(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads))))
    pad_spatial_into(x, pads, out, value)
    return out


def pad_spatial_into(x, pads, out, value=0) -> None:
    """Write x padded by ``pads`` = ((lo, hi), ...) along its spatial dims into ``out``: its borders set to
    ``value``, then x copied inside them (so that a block of samples can be padded by the thread that uses it)."""
    for d, (lo, hi) in enumerate(pads):
        lead = (slice(None),) * (d + 2)
        out[lead + (slice(0, lo),)] = value
        out[lead + (slice(out.shape[d + 2] - hi, None),)] = value
    out[(slice(None),) * 2 + tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape[2:], pads))] = x


def crop_spatial(g, pads, lead: int = 2):
    """Undo a padding of the dims after the first ``lead`` ones (a view)."""
    if not any(lo or hi for lo, hi in pads):
        return g
    return g[(slice(None),) * lead + tuple(slice(lo, g.shape[lead + i] - hi) for i, (lo, hi) in enumerate(pads))]

"""The convolution's two layouts and the copies between them.

ember's transposed convolutions and its Winograd convolutions of narrow images compute on *batch-last* arrays,
(C, *spatial, N) in memory (see ``conv.py``: Winograd's transforms and the batch-last im2col then run over long
contiguous runs; the other convolutions compute in PyTorch's layout, ``conv_nchw.py`` and ``winograd.py``), but
they take and return (N, C, *spatial) arrays laid out as PyTorch's are: a convolution's output is contiguous
(channels last where PyTorch's is, ``as_pytorch_lays_out``) and its strides equal PyTorch's, so ``view``,
``flatten`` and code that checks strides see what they see in PyTorch. So each such convolution converts twice
per direction: its input into a padded batch-last copy (a copy im2col needed anyway for the padding) and its
result back into (N, C, *spatial) (with the bias added on the way).

The NumPy copies here are the reference; ``ember/_kernels/conv.py`` has compiled ones (a NumPy transposing copy
walks one side with a stride of N or C * H * W elements, at a fifth of a plain copy's speed), chosen by
``policy.use_compiled()`` for float32/float64 arrays of at most 3 spatial dims. Both give the same bits.
"""

from __future__ import annotations

from ..._backend import xp
from ..._kernels import conv as compiled
from ..._kernels.policy import policy
from ..._memory_format import array_memory_format, channels_last, channels_last_3d, has_format_strides, laid_out
from ..._parallel import parallel_for


def _compiled(*arrays) -> bool:
    """Whether the compiled copies take these (plain NumPy, float32/float64, at most 3 spatial dims) arrays."""
    return (all(type(a) is xp.ndarray and a.dtype in (xp.float32, xp.float64) and a.ndim <= 5 for a in arrays)
            and policy.use_compiled())


def _as_3d(shape) -> tuple:
    """(lead, lead2, *sp) with sp of 1-3 dims -> the same with 3 spatial dims (unit dims in front)."""
    return (*shape[:2], *(1,) * (5 - len(shape)), *shape[2:])


def as_pytorch_lays_out(out, x, w):
    """A (transposed) convolution's contiguous result ``out`` of input ``x`` and weight ``w`` laid out as PyTorch's
    CPU convolutions lay theirs out: channels last (channels_last_3d) when either ``x`` or ``w`` suggests that
    format (a model moved to ``channels_last``, or its input), for the 3-d ones only in the oneDNN path's dtypes
    (a float64 3-d convolution takes PyTorch's slow path, whose result is contiguous); else ``out`` itself."""
    if out.ndim not in (4, 5) or type(out) is not xp.ndarray:
        return out
    fmt = channels_last if out.ndim == 4 else channels_last_3d
    if out.ndim == 5 and out.dtype == xp.float64:
        return out
    for a in (x, w):
        if array_memory_format(a) is fmt:
            return out if has_format_strides(out, fmt) else laid_out(out, fmt)
    return out


def from_batch_last(a):
    """(C, *sp, N) -> its (N, C, *sp) view."""
    return a.transpose(a.ndim - 1, *range(a.ndim - 1))


def to_nchw(a, bias=None):
    """Batch-last a (C, *sp, N) -> a new contiguous (N, C, *sp) array, plus ``bias`` (C,) per channel when given."""
    out, copy, least = nchw_copy(a, bias)
    if least is None:  # NumPy's copy: one call over the whole arrays
        copy(0, a.shape[0])
    else:  # one pass: split only where it pays a hand-off
        parallel_for(copy, a.shape[0], a.size, least)
    return out


def nchw_copy(a, bias=None):
    """``to_nchw``'s copy, not yet run, so that a caller can run it by channels inside a split of its own: (out,
    ``copy(c0, c1)`` writing channels c0..c1 of out, the ``min_elements`` from which ``to_nchw`` splits it, None for
    NumPy's copy, which it does not split)."""
    out = xp.empty((a.shape[-1], *a.shape[:-1]), a.dtype)
    if _compiled(a, out) and (bias is None or bias.dtype == a.dtype) and a.strides[-1] == a.itemsize:
        if a.flags.c_contiguous:  # each channel's plane as one run
            src, dst = a.reshape(a.shape[0], 1, 1, -1, a.shape[-1]), out.reshape(*out.shape[:2], 1, 1, -1)
        else:  # a strided view (the cropped input gradient of a padded convolution): row by row, no copy first
            unit = (None,) * (5 - a.ndim)
            src, dst = a[(slice(None), *unit)], out[(slice(None), slice(None), *unit)]
        b = xp.empty(0, a.dtype) if bias is None else xp.ascontiguousarray(bias)
        return out, lambda c0, c1: compiled.to_nchw(src, b, c0, c1, dst), policy.min_parallel_pass_elements
    nchw = from_batch_last(a)

    def copy(c0: int, c1: int) -> None:
        if bias is None:
            out[:, c0:c1] = nchw[:, c0:c1]
        else:
            xp.add(nchw[:, c0:c1], bias[c0:c1].reshape(-1, *(1,) * (a.ndim - 2)), out=out[:, c0:c1])

    return out, copy, None


def batch_last_padded(x, pads):
    """(N, C, *sp) -> padded (C, *padded, N), contiguous: a view when x already is batch-last and unpadded."""
    out, copy, least = padded_copy(x, pads)
    if copy is not None:
        parallel_for(copy, out.shape[0], out.size, least)
    return out


def padded_copy(x, pads):
    """``batch_last_padded``'s copy, not yet run, so that a caller can run it by channels inside a split of its own:
    (out, ``copy(c0, c1)`` writing channels c0..c1 of out, or None where out is already whole (x's view, or NumPy's
    contiguous copy of an unpadded x), the ``min_elements`` from which ``batch_last_padded`` splits it)."""
    xb = x.transpose(*range(1, x.ndim), 0)
    padded = any(lo or hi for lo, hi in pads)
    if not padded and xb.flags.c_contiguous:
        return xb, None, None
    shape = (xb.shape[0], *(n + lo + hi for n, (lo, hi) in zip(xb.shape[1:-1], pads)), xb.shape[-1])
    if x.flags.c_contiguous and _compiled(x):
        out = xp.empty(shape, x.dtype)
        x5 = x.reshape(_as_3d(x.shape))
        o5 = out.reshape(shape[0], *(1,) * (5 - len(shape)), *shape[1:])
        lo = (0,) * (3 - len(pads)) + tuple(lo for lo, _ in pads)
        return (out, lambda c0, c1: compiled.to_batch_last_padded(x5, *lo, c0, c1, o5),
                policy.min_parallel_pass_elements)
    if not padded:
        return xp.ascontiguousarray(xb), None, None
    out = xp.empty(shape, xb.dtype)
    inner = tuple(slice(lo, lo + n) for n, (lo, _) in zip(xb.shape[1:-1], pads))

    def copy(c0: int, c1: int) -> None:  # channels c0..c1: zero the border only, then copy the interior
        o = out[c0:c1]
        for d, (lo, hi) in enumerate(pads):
            lead = (slice(None),) * (d + 1)
            o[lead + (slice(0, lo),)] = 0
            o[lead + (slice(o.shape[d + 1] - hi, None),)] = 0
        o[(slice(None),) + inner] = xb[c0:c1]

    return out, copy, policy.min_parallel_elements


def to_batch_last(g):
    """(N, C, *sp) -> a contiguous (C, *sp, N): free when g is batch-last already."""
    return batch_last_padded(g, ((0, 0),) * (g.ndim - 2))

"""LayerNorm and RMSNorm (LayerNorm without centering) forward and input gradient, one row at a time (numba): the
counterparts of the NumPy passes in ``LayerNorm`` and ``RMSNorm`` (``ember/nn/_ops/norm.py``, the reference). A
row's sums are accumulated in float64 by ``rows.row_sum`` / ``rows.row_dot`` (vector lanes), so results agree with
the reference (float32 BLAS sums) to rounding, not bit for bit: a row's mean and 1 / std (and the gradient's two
means) are rounded to the input's dtype before the elementwise passes, as PyTorch's kernels compute in float32
(float64 elementwise passes measured 1.35x slower). Rows are indexed in 2-D (a row view per row would update
reference counts).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel, prange
from .rows import row_dot, row_sum


@kernel
def layer_norm(x, w, b, eps, center, xhat, invstd, out):
    """Rows of x (R, F): xhat = (x - mean) / sqrt(var + eps), invstd (R, 1), out = xhat * w + b (w, b: (F,), or
    empty for none). ``xhat`` and ``invstd`` of one row only: scratch (inference keeps neither). ``center``
    False: RMSNorm, xhat = x / sqrt(mean(x^2) + eps)."""
    _layer_norm_rows(x, w, b, eps, center, xhat, invstd, out, 0, x.shape[0])


@kernel
def layer_norm_blocks(x, w, b, eps, center, xhat, invstd, out, blocks):
    """``layer_norm`` in ``blocks`` ranges of rows, one per iteration of a ``prange`` loop (numba's OpenMP threads
    in ``layer_norm_blocks.parallel``); ``xhat`` and ``invstd`` of one row: scratch of its own per range. Each row
    is computed alone: ``layer_norm``'s bits."""
    r_, f = x.shape
    keep = xhat.shape[0] == r_
    for k in prange(blocks):
        lo, hi = r_ * k // blocks, r_ * (k + 1) // blocks
        xh, inv = (xhat, invstd) if keep else (np.empty((1, f), x.dtype), np.empty((1, 1), x.dtype))
        _layer_norm_rows(x, w, b, eps, center, xh, inv, out, lo, hi)  # (one call: the helper compiled in once)


@kernel.inline
def _layer_norm_rows(x, w, b, eps, center, xhat, invstd, out, lo, hi):
    """``layer_norm`` of rows lo..hi-1 (xhat and invstd of one row: scratch, as there)."""
    f = x.shape[1]
    scale = 1.0 / f
    w2, b2 = w.reshape((1, w.shape[0])), b.reshape((1, b.shape[0]))
    keep = xhat.shape[0] == x.shape[0]
    for r in range(lo, hi):
        h = r if keep else 0
        mean = x.dtype.type(row_sum(x, r, f) * scale) if center else x.dtype.type(0)
        for j in range(f):
            xhat[h, j] = x[r, j] - mean
        inv = x.dtype.type(1.0 / np.sqrt(row_dot(xhat, h, xhat, h, f) * scale + eps))
        invstd[h, 0] = inv
        for j in range(f):
            xhat[h, j] = xhat[h, j] * inv
        if w.shape[0] and b.shape[0]:
            for j in range(f):
                out[r, j] = xhat[h, j] * w2[0, j] + b2[0, j]
        elif w.shape[0]:
            for j in range(f):
                out[r, j] = xhat[h, j] * w2[0, j]
        elif b.shape[0]:
            for j in range(f):
                out[r, j] = xhat[h, j] + b2[0, j]
        else:
            for j in range(f):
                out[r, j] = xhat[h, j]


@kernel
def layer_norm_grad(g, xhat, invstd, w, center, gw_rows, gx):
    """gx = invstd (g w - mean(g w) - xhat mean(g w xhat)) per row, and gw_rows = g * xhat (summed over rows
    after, for the weight's gradient); w (F,) or empty for none. ``center`` False: RMSNorm's, without the
    mean(g w) term. Its ``prange`` loop runs on numba's OpenMP threads in ``layer_norm_grad.parallel`` (each row
    alone: the same bits)."""
    r_, f = g.shape
    scale = 1.0 / f
    w2 = w.reshape((1, w.shape[0]))
    for r in prange(r_):
        for j in range(f):
            gw_rows[r, j] = g[r, j] * xhat[r, j]
        if w.shape[0]:
            for j in range(f):
                gx[r, j] = g[r, j] * w2[0, j]  # g w, scaled below
            m1 = g.dtype.type(row_sum(gx, r, f) * scale) if center else g.dtype.type(0)
            m2 = g.dtype.type(row_dot(gw_rows, r, w2, 0, f) * scale)
        else:
            for j in range(f):
                gx[r, j] = g[r, j]
            m1 = g.dtype.type(row_sum(g, r, f) * scale) if center else g.dtype.type(0)
            m2 = g.dtype.type(row_sum(gw_rows, r, f) * scale)
        inv = invstd[r, 0]
        for j in range(f):
            gx[r, j] = (gx[r, j] - m1 - xhat[r, j] * m2) * inv


@kernel
def accumulate_rows_bf16(terms, acc):
    """acc (F,) += each row of terms (R, F) in turn, every partial sum rounded to bfloat16 (to nearest, ties to
    even; NaN stays NaN), acc holding bfloat16 values as float32: PyTorch's CPU LayerNorm weight and bias gradients
    of a bfloat16 input (``LayerNorm._param_grad``, the reference, rounds through ml_dtypes)."""
    bits = acc.view(np.uint32)
    for i in range(terms.shape[0]):
        for j in range(terms.shape[1]):
            acc[j] = acc[j] + terms[i, j]
            b = bits[j]
            if (b & np.uint32(0x7F800000)) == np.uint32(0x7F800000):  # inf stays, NaN becomes the quiet NaN
                if b & np.uint32(0x007FFFFF):
                    b = b | np.uint32(0x00400000)
            else:
                b = b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))
            bits[j] = b & np.uint32(0xFFFF0000)

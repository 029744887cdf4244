"""LayerNorm forward and input gradient, one row at a time (numba): the counterparts of the NumPy passes in
``LayerNorm`` (``ember/nn/_ops/norm.py``, the reference). A row's sums are accumulated in float64, in eight
interleaved partial sums (independent chains the CPU overlaps), so results agree with the reference (float32
BLAS sums) to rounding, not bit for bit.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel


@kernel.inline
def _row_sum(a, b, use_b):
    """sum(a) (or sum(a * b) when use_b) of two 1-D rows, in float64."""
    n = a.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    j = 0
    while j + 8 <= n:
        if use_b:
            s0 += np.float64(a[j]) * b[j]
            s1 += np.float64(a[j + 1]) * b[j + 1]
            s2 += np.float64(a[j + 2]) * b[j + 2]
            s3 += np.float64(a[j + 3]) * b[j + 3]
            s4 += np.float64(a[j + 4]) * b[j + 4]
            s5 += np.float64(a[j + 5]) * b[j + 5]
            s6 += np.float64(a[j + 6]) * b[j + 6]
            s7 += np.float64(a[j + 7]) * b[j + 7]
        else:
            s0 += a[j]
            s1 += a[j + 1]
            s2 += a[j + 2]
            s3 += a[j + 3]
            s4 += a[j + 4]
            s5 += a[j + 5]
            s6 += a[j + 6]
            s7 += a[j + 7]
        j += 8
    while j < n:
        s0 += np.float64(a[j]) * b[j] if use_b else a[j]
        j += 1
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))


@kernel
def layer_norm(x, w, b, eps, xhat, invstd, out):
    """Rows of x (R, F): xhat = (x - mean) / sqrt(var + eps), invstd (R, 1), out = xhat * w + b (w, b: (F,), or
    empty for none)."""
    r_, f = x.shape
    scale = 1.0 / f
    for r in range(r_):
        xr, hr, orow = x[r], xhat[r], out[r]
        mean = _row_sum(xr, xr, False) * scale
        for j in range(f):
            hr[j] = xr[j] - mean
        inv = 1.0 / np.sqrt(_row_sum(hr, hr, True) * scale + eps)
        invstd[r, 0] = inv
        for j in range(f):
            hr[j] = hr[j] * inv
        if w.shape[0] and b.shape[0]:
            for j in range(f):
                orow[j] = hr[j] * w[j] + b[j]
        elif w.shape[0]:
            for j in range(f):
                orow[j] = hr[j] * w[j]
        elif b.shape[0]:
            for j in range(f):
                orow[j] = hr[j] + b[j]
        else:
            for j in range(f):
                orow[j] = hr[j]


@kernel
def layer_norm_grad(g, xhat, invstd, w, gw_rows, gx):
    """gx = invstd (g w - mean(g w) - xhat mean(g w xhat)) per row, and gw_rows = g * xhat (summed over rows
    after, for the weight's gradient); w (F,) or empty for none."""
    r_, f = g.shape
    scale = 1.0 / f
    for r in range(r_):
        gr, hr, dr, pr = g[r], xhat[r], gx[r], gw_rows[r]
        for j in range(f):
            pr[j] = gr[j] * hr[j]
        if w.shape[0]:
            for j in range(f):
                dr[j] = gr[j] * w[j]  # g w, scaled below
            m1 = _row_sum(dr, dr, False) * scale
            m2 = _row_sum(pr, w, True) * scale
        else:
            for j in range(f):
                dr[j] = gr[j]
            m1 = _row_sum(gr, gr, False) * scale
            m2 = _row_sum(pr, pr, False) * scale
        inv = invstd[r, 0]
        for j in range(f):
            dr[j] = (dr[j] - m1 - hr[j] * m2) * inv

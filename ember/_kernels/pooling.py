"""2-d max pooling on batch-last arrays (numba): the counterpart of the per-offset NumPy passes in
``ember/nn/_ops/pooling.py`` (the reference). Arrays are (C, H, W, N) in memory, the layout ember's convolutions
produce, so the batch is the inner, contiguous loop. Forward keeps the reference's running maximum and "first
maximum wins" rule (NaN propagates, and ``_nan_args`` points NaN windows at their NaN afterwards, on both paths):
the same bits. Backward adds each output's gradient at its maximum: the same values; where windows overlap, a
position's several contributions are added in output order instead of offset order. ``max_pool2d_planes_grad``
is that backward for arrays whose rows are innermost in memory (NCHW, or vmap's per-example (C, N, H, W)), and
``max_pool2d_planes_2x2`` the forward of 2x2 windows there (unrolled: a loop over a runtime count of offsets,
measured, ran no faster than NumPy's per-offset passes), ``max_pool2d_planes_row`` that of one-row windows (1-d
pooling's: one loop along a contiguous row, faster than the passes' several NumPy calls per offset on 1-d sizes).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel, prange


@kernel
def max_pool2d(x, kh, kw, sh, sw, dh, dw, out, arg):
    """out[c, i, j, n] = max over the (kh, kw) window at (i sh, j sw) with dilation (dh, dw) of x (C, H, W, N);
    arg: the window offset (row-major) of the first maximum."""
    c_, ho, wo, n = out.shape
    for c in prange(c_):
        for i in range(ho):
            for j in range(wo):
                for q in range(n):
                    out[c, i, j, q] = x[c, i * sh, j * sw, q]
                    arg[c, i, j, q] = 0
                for k in range(1, kh * kw):
                    r, s = i * sh + (k // kw) * dh, j * sw + (k % kw) * dw
                    for q in range(n):
                        v, m = x[c, r, s, q], out[c, i, j, q]
                        if v > m:
                            out[c, i, j, q] = v
                            arg[c, i, j, q] = k
                        elif v != v:  # NaN wins (the reference's maximum propagates it)
                            out[c, i, j, q] = v


@kernel
def max_pool2d_planes_2x2(x, sh, sw, dh, dw, out, arg):
    """``max_pool2d`` of 2x2 windows on (A, B, H, W) arrays whose rows are innermost in memory: out[a, b, i, j] =
    the maximum of x's window at (i sh, j sw), dilation (dh, dw), NaN where the window holds one; arg the offset
    (row-major) of the first maximum. Each window's offsets are compared in order with ``>``, as the reference's
    running maximum (no branch on NaN in that chain: a NaN window's output is set after, its arg by the caller)."""
    a_, b_, ho, wo = out.shape
    for a in prange(a_):
        for b in range(b_):
            for i in range(ho):
                r0 = i * sh
                r1 = r0 + dh
                for j in range(wo):
                    c0 = j * sw
                    c1 = c0 + dw
                    v0, v1, v2, v3 = x[a, b, r0, c0], x[a, b, r0, c1], x[a, b, r1, c0], x[a, b, r1, c1]
                    m = v0
                    best = 0
                    if v1 > m:
                        m = v1
                        best = 1
                    if v2 > m:
                        m = v2
                        best = 2
                    if v3 > m:
                        m = v3
                        best = 3
                    if (v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3):
                        m = v0 + v1 + v2 + v3  # NaN
                    out[a, b, i, j] = m
                    arg[a, b, i, j] = best


@kernel
def max_pool2d_planes_row(x, kw, sh, sw, dw, out, arg):
    """``max_pool2d`` of one-row (1, kw) windows (1-d pooling, PyTorch's 2-d pooling of a (..., 1, L) view) on
    (A, B, H, W) arrays whose rows are innermost in memory: out[a, b, i, j] = the maximum of x[a, b, i sh,
    j sw + t dw] over t < kw, NaN where the window holds one; arg the offset of the first maximum (of a NaN window:
    set by the caller). The reference's running maximum, a row at a time (branch-free selects along the row, which
    LLVM vectorises): the same bits."""
    a_, b_, ho, wo = out.shape
    for a in range(a_):
        for b in range(b_):
            for i in range(ho):
                r = i * sh
                for j in range(wo):
                    out[a, b, i, j] = x[a, b, r, j * sw]
                    arg[a, b, i, j] = 0
                for t in range(1, kw):
                    for j in range(wo):
                        v, m = x[a, b, r, j * sw + t * dw], out[a, b, i, j]
                        better = v > m
                        out[a, b, i, j] = v if (better or v != v) else m  # NaN propagates, as numpy.maximum
                        arg[a, b, i, j] = t if better else arg[a, b, i, j]


@kernel
def max_pool2d_grad(g, arg, kw, sh, sw, dh, dw, gx):
    """gx[c, (window of output i, j at offset arg)] += g[c, i, j, n], gx (C, Hp, Wp, N) zeroed here first (each
    channel by the thread that adds into it)."""
    c_, ho, wo, n = g.shape
    for c in prange(c_):
        for r in range(gx.shape[1]):
            for s in range(gx.shape[2]):
                for q in range(gx.shape[3]):
                    gx[c, r, s, q] = 0
        for i in range(ho):
            for j in range(wo):
                for q in range(n):
                    k = arg[c, i, j, q]
                    gx[c, i * sh + (k // kw) * dh, j * sw + (k % kw) * dw, q] += g[c, i, j, q]


@kernel
def max_pool1d_rows_grad(g, arg, sw, dw, gx):
    """``max_pool2d_planes_grad`` of 1-d pooling (one-row windows on planes of one row: (N, C, 1, L) arrays,
    C-contiguous) seen as rows (N C, L): gx[r, j sw + arg[r, j] dw] += g[r, j] for the zeroed gx. Each position's
    contributions are added in output order, as there (the same bits), without its 4-d indexing and offset tables
    (a (16, 32, 1, 16) gradient: 7.6 µs against 13.8)."""
    rows, wo = g.shape
    for r in range(rows):
        for j in range(wo):
            gx[r, j * sw + arg[r, j] * dw] += g[r, j]


@kernel
def max_pool2d_planes_grad(g, arg, kw, sh, sw, dh, dw, gx):
    """``max_pool2d_grad`` on (A, B, H, W) arrays whose rows are innermost in memory (an (N, C, H, W) array in its
    memory order: C-contiguous, or (C, N, H, W) as vmap's per-example convolutions leave it), any strides; gx
    zeroed here first (each of its planes by the thread that adds into it)."""
    a_, b_, ho, wo = g.shape
    taps = kw * gx.shape[2]  # at least the window's offsets (kh <= the padded height)
    rows = np.empty(taps, np.int64)  # each offset's row and column shift: no division per element
    cols = np.empty(taps, np.int64)
    for k in range(taps):
        rows[k] = (k // kw) * dh
        cols[k] = (k % kw) * dw
    for a in prange(a_):
        for b in range(b_):
            for r in range(gx.shape[2]):
                for s in range(gx.shape[3]):
                    gx[a, b, r, s] = 0
            for i in range(ho):
                for j in range(wo):
                    k = arg[a, b, i, j]
                    gx[a, b, i * sh + rows[k], j * sw + cols[k]] += g[a, b, i, j]

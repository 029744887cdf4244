"""Winograd F(m, 2) on the four stride-2 phases of a 4x4 stride-2 convolution (numba): the weight transform, the
input transform from the padded batch-last input, and the output transform into (N, O, H, W) with the bias added;
for the weight gradient, the output transform's transpose (from the batch-last output gradient) and the weight
transform's.

``ember/nn/_ops/conv_phases.py`` says what is computed and why. ``g`` (m + 1 by 2), ``bt`` (m + 1 by m + 1) and
``at`` (m by m + 1) are the transforms' matrices (G, B^T and A^T); their zero entries are skipped, every other
coefficient is multiplied in, in a fixed order: the results do not depend on how channels are split among
threads. The innermost loops run over the batch (contiguous in the batch-last input) or over whole rows of tiles,
indexing the arrays themselves with the innermost loop's own variable as the last index (no view made per run:
the runs are short, 16-64 elements; an index computed as offset + i measured 5-7x slower in flat arrays: numba's
check for negative indices on each element keeps the loop from vectorising).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel


@kernel
def weight_tiles(w, g, k0, k1, u):
    """u[k, o, (2 a + b) C + c] = sum_j g[q, j] sum_i g[p, i] w[o, c, 2 i + a, 2 j + b] for the transformed values
    k = p (m + 1) + q in k0..k1: the F(m, 2) transform (G f G^T) of the 2x2 sub-kernel of phase (a, b), w (O, C, 4,
    4). Each filter's taps are first copied tap-major (reading w in order), so that the sum over i, then the sum
    over j, run over all channels c at once (2x faster than reading w's taps 16 elements apart)."""
    al = g.shape[0]
    c_ = w.shape[1]
    taps = np.empty((16, c_), w.dtype)  # taps[4 i + j, c] = w[o, c, i, j]
    t = np.empty((al, 2, c_), w.dtype)  # t[p, j, c] = sum_i g[p, i] w[o, c, 2 i + a, 2 j + b]
    for o in range(w.shape[0]):
        for c in range(c_):
            for i in range(4):
                for j in range(4):
                    taps[4 * i + j, c] = w[o, c, i, j]
        for a in range(2):
            for b in range(2):
                c0 = (2 * a + b) * c_
                for p in range(k0 // al, (k1 - 1) // al + 1):
                    g0, g1 = g[p, 0], g[p, 1]
                    for j in range(2):
                        r0, r1 = 4 * a + 2 * j + b, 4 * (2 + a) + 2 * j + b
                        for c in range(c_):
                            t[p, j, c] = g0 * taps[r0, c] + g1 * taps[r1, c]
                for k in range(k0, k1):
                    p, q = k // al, k % al
                    g0, g1 = g[q, 0], g[q, 1]
                    for c in range(c_):
                        u[k, o, c0 + c] = g0 * t[p, 0, c] + g1 * t[p, 1, c]


@kernel
def input_tiles(xb, bt, ty_n, tx_n, k0, k1, v):
    """v[k, (2 u + s) C + c, (ty TX + tx) N + n] = sum_l bt[q, l] sum_j bt[p, j] d[j, l] for the transformed values
    k = p (m + 1) + q in k0..k1, d[j, l] = xb[c, 2 (m ty + j) + u, 2 (m tx + l) + s, n]: the F(m, 2) input tile of
    phase (u, s) of the padded batch-last input xb (C, Hp, Wp, N) (Hp, Wp at least 2 m TY + 2, 2 m TX + 2). The sum
    over j (a tile row's rows) first, for a whole row of tiles, then the sum over l. The values k0..k1 alone: a
    thread computes those of its own GEMMs (and the sums over j of their rows p, which a thread beside it may
    compute too)."""
    al = bt.shape[0]
    m = al - 1
    c_, n_ = xb.shape[0], xb.shape[3]
    width = m * tx_n + 1  # one phase's columns that a row of tiles reads
    e = np.empty((al, width, n_), xb.dtype)
    v4 = v.reshape(v.shape[0], v.shape[1], -1, n_)  # (.., tile, n): every innermost index a loop's own variable
    for c in range(c_):
        for u in range(2):
            for s in range(2):
                kc = (2 * u + s) * c_ + c
                for ty in range(ty_n):
                    # e[p, col, n] = sum_j bt[p, j] xb[c, 2 (m ty + j) + u, 2 col + s, n], for the rows p of k0..k1
                    for p in range(k0 // al, (k1 - 1) // al + 1):
                        first = True
                        for j in range(al):
                            f = bt[p, j]
                            if f == 0:
                                continue
                            row = 2 * (m * ty + j) + u
                            if first:
                                for col in range(width):
                                    for r in range(n_):
                                        e[p, col, r] = f * xb[c, row, 2 * col + s, r]
                            else:
                                for col in range(width):
                                    for r in range(n_):
                                        e[p, col, r] += f * xb[c, row, 2 * col + s, r]
                            first = False
                    for pq in range(k0, k1):
                        p, q = pq // al, pq % al
                        first = True
                        for ll in range(al):
                            f = bt[q, ll]
                            if f == 0:
                                continue
                            if first:
                                for tx in range(tx_n):
                                    for r in range(n_):
                                        v4[pq, kc, ty * tx_n + tx, r] = f * e[p, m * tx + ll, r]
                            else:
                                for tx in range(tx_n):
                                    for r in range(n_):
                                        v4[pq, kc, ty * tx_n + tx, r] += f * e[p, m * tx + ll, r]
                            first = False


@kernel
def output_tiles(mm, at, bias, tx_n, o0, o1, y):
    """y[n, o, m ty + i, m tx + j] = sum_p at[i, p] sum_q at[j, q] mm[p (m + 1) + q, o, (ty TX + tx) N + n]
    (+ bias[o] where bias is not empty) for output channels o0..o1 and the positions inside y (N, O, Ho, Wo): the
    F(m, 2) output transform of the tile GEMMs' result mm ((m + 1)^2, O, TY TX N). The sum over q first, then over
    p, each over all tiles at once, into a channel's batch-last plane; then each sample's plane is written in one
    run."""
    al = at.shape[1]
    m = al - 1
    n_, ho, wo = y.shape[0], y.shape[2], y.shape[3]
    cols = mm.shape[2]
    ty_n = cols // (tx_n * n_)
    r = np.empty((al, m, cols), y.dtype)  # the sums over q
    r4 = r.reshape(al, m, -1, n_)  # (.., tile, n): every innermost index a loop's own variable
    z = np.empty((m * ty_n, m * tx_n, n_), y.dtype)  # then over p: one channel's plane, batch-last
    for o in range(o0, o1):
        for p in range(al):
            for j in range(m):
                first = True
                for q in range(al):
                    f = at[j, q]
                    if f == 0:
                        continue
                    pq = p * al + q
                    if first:
                        for t in range(cols):
                            r[p, j, t] = f * mm[pq, o, t]
                    else:
                        for t in range(cols):
                            r[p, j, t] += f * mm[pq, o, t]
                    first = False
        for i in range(m):
            for j in range(m):
                first = True
                for p in range(al):
                    f = at[i, p]
                    if f == 0:
                        continue
                    for ty in range(ty_n):
                        for tx in range(tx_n):
                            tt = ty * tx_n + tx
                            if first:
                                for t in range(n_):
                                    z[m * ty + i, m * tx + j, t] = f * r4[p, j, tt, t]
                            else:
                                for t in range(n_):
                                    z[m * ty + i, m * tx + j, t] += f * r4[p, j, tt, t]
                    first = False
        for n in range(n_):
            if bias.shape[0]:
                b = bias[o]
                for h in range(ho):
                    for w in range(wo):
                        y[n, o, h, w] = z[h, w, n] + b
            else:
                for h in range(ho):
                    for w in range(wo):
                        y[n, o, h, w] = z[h, w, n]


@kernel
def grad_tiles(gb, at, ty_n, tx_n, k0, k1, dm):
    """dm[k, o, (ty TX + tx) N + n] = sum_j at[j, q] sum_i at[i, p] gb[o, m ty + i, m tx + j, n] for the transformed
    values k = p (m + 1) + q in k0..k1, the positions past gb's (Ho, Wo) taken as zeros: the transpose of
    ``output_tiles``' transform, dL/dM of the tile GEMMs' result for the batch-last output gradient gb (O, Ho, Wo, N).
    The sum over i (a tile's rows) first, for a whole row of tiles, then the sum over j; each in ascending order."""
    al = at.shape[1]
    m = al - 1
    o_, ho, wo, n_ = gb.shape[0], gb.shape[1], gb.shape[2], gb.shape[3]
    e = np.empty((al, wo, n_), gb.dtype)  # e[p, x, n] = sum_i at[i, p] gb[o, m ty + i, x, n]
    dm4 = dm.reshape(dm.shape[0], dm.shape[1], -1, n_)  # (.., tile, n): every innermost index a loop's own variable
    for o in range(o_):
        for ty in range(ty_n):
            for p in range(k0 // al, (k1 - 1) // al + 1):
                first = True
                for i in range(m):
                    f = at[i, p]
                    row = m * ty + i
                    if f == 0 or row >= ho:
                        continue
                    if first:
                        for x in range(wo):
                            for r in range(n_):
                                e[p, x, r] = f * gb[o, row, x, r]
                    else:
                        for x in range(wo):
                            for r in range(n_):
                                e[p, x, r] += f * gb[o, row, x, r]
                    first = False
                if first:  # no row of this tile row's p inside gb
                    e[p] = 0
            for pq in range(k0, k1):
                p, q = pq // al, pq % al
                for tx in range(tx_n):
                    t = ty * tx_n + tx
                    first = True
                    for j in range(m):
                        f = at[j, q]
                        col = m * tx + j
                        if f == 0 or col >= wo:
                            continue
                        if first:
                            for r in range(n_):
                                dm4[pq, o, t, r] = f * e[p, col, r]
                        else:
                            for r in range(n_):
                                dm4[pq, o, t, r] += f * e[p, col, r]
                        first = False
                    if first:
                        for r in range(n_):
                            dm4[pq, o, t, r] = 0


@kernel
def weight_grad_tiles(dut, g, dw):
    """dw[o, c, 2 i + a, 2 j + b] = sum_p g[p, i] sum_q g[q, j] dut[p (m + 1) + q, (2 a + b) C + c, o]: the transpose
    of ``weight_tiles``' transform (G^T dU G per phase (a, b)), the weight gradient dw (O, C, 4, 4) from the tile
    GEMMs' weight gradient, transposed: dut ((m + 1)^2, 4 C, O). The sum over q first, then over p, each in
    ascending order, over all output channels at once."""
    al = g.shape[0]
    o_, c_ = dw.shape[0], dw.shape[1]
    t = np.empty((al, 2, o_), dw.dtype)  # t[p, j, o] = sum_q g[q, j] dut[p al + q, kc, o]
    acc = np.empty(o_, dw.dtype)
    for c in range(c_):
        for a in range(2):
            for b in range(2):
                kc = (2 * a + b) * c_ + c
                for p in range(al):
                    for j in range(2):
                        first = True
                        for q in range(al):
                            f = g[q, j]
                            if f == 0:
                                continue
                            if first:
                                for o in range(o_):
                                    t[p, j, o] = f * dut[p * al + q, kc, o]
                            else:
                                for o in range(o_):
                                    t[p, j, o] += f * dut[p * al + q, kc, o]
                            first = False
                for i in range(2):
                    for j in range(2):
                        first = True
                        for p in range(al):
                            f = g[p, i]
                            if f == 0:
                                continue
                            if first:
                                for o in range(o_):
                                    acc[o] = f * t[p, j, o]
                            else:
                                for o in range(o_):
                                    acc[o] += f * t[p, j, o]
                            first = False
                        for o in range(o_):
                            dw[o, c, 2 * i + a, 2 * j + b] = acc[o]

"""Winograd F(2x2, 3x3) transforms as compiled passes (numba): the counterparts of the NumPy passes in
``ember/nn/_ops/winograd.py``, which stay the reference. The arithmetic is the reference's, in its order, so the
results are the same bits.

Layout decides the speed. The 16 transformed planes of a band lie a power-of-two distance apart, so a loop that
wrote all 16 values of a tile at once would send 16 streams into the same cache sets (measured: 7x slower than
NumPy). Each kernel instead writes one plane at a time over one tile row (tw * N contiguous elements, the batch
innermost and vectorised), rereading its few inputs from that tile row, which stays in the L1 cache.
"""

from __future__ import annotations

from ._jit import kernel

# B^T (and, applied to columns, B): row a of B^T d is d[_P[a]] - d[_Q[a]] where _NEG[a], else d[_P[a]] + d[_Q[a]]
# (B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]).
_P = (0, 1, 2, 1)
_Q = (2, 2, 1, 3)
_NEG = (True, False, True, True)


@kernel
def input_tiles(xb, t0, v):
    """v[a, b, c, i, j, n] = (B^T d B)[a, b] for the 4x4 tile d of xb (C, H, W, N) at rows 2 (t0 + i),
    columns 2 j: v (4, 4, C, k, tw, N). Columns first (d B), then rows, as the reference."""
    c_, k, tw, n = v.shape[2], v.shape[3], v.shape[4], v.shape[5]
    for c in range(c_):
        for i in range(k):
            r = 2 * (t0 + i)
            for a in range(4):
                ra, rb, na = r + _P[a], r + _Q[a], _NEG[a]
                for b in range(4):
                    pb, qb, nb = _P[b], _Q[b], _NEG[b]
                    for j in range(tw):
                        s = 2 * j
                        for q in range(n):
                            if nb:
                                x = xb[c, ra, s + pb, q] - xb[c, ra, s + qb, q]
                                y = xb[c, rb, s + pb, q] - xb[c, rb, s + qb, q]
                            else:
                                x = xb[c, ra, s + pb, q] + xb[c, ra, s + qb, q]
                                y = xb[c, rb, s + pb, q] + xb[c, rb, s + qb, q]
                            v[a, b, c, i, j, q] = x - y if na else x + y


@kernel
def output_tiles(m, t0, out):
    """out[o, t0 + i, a, j, b, n] = (A^T m A)[a, b] for the tile GEMMs' result m (4, 4, O, k, tw, N):
    out (O, th, 2, tw, 2, N). Rows first (A^T m, into a scratch tile row), then columns, as the reference."""
    o_, k, tw, n = m.shape[2], m.shape[3], m.shape[4], m.shape[5]
    s = m[:2, :, 0, 0].copy()  # (2, 4, tw, N) scratch: A^T m for one tile row
    for o in range(o_):
        for i in range(k):
            for b in range(4):
                for j in range(tw):
                    for q in range(n):
                        s[0, b, j, q] = m[0, b, o, i, j, q] + m[1, b, o, i, j, q] + m[2, b, o, i, j, q]
                for j in range(tw):
                    for q in range(n):
                        s[1, b, j, q] = m[1, b, o, i, j, q] - m[2, b, o, i, j, q] - m[3, b, o, i, j, q]
            for a in range(2):
                for j in range(tw):
                    for q in range(n):
                        out[o, t0 + i, a, j, 0, q] = s[a, 0, j, q] + s[a, 1, j, q] + s[a, 2, j, q]
                        out[o, t0 + i, a, j, 1, q] = s[a, 1, j, q] - s[a, 2, j, q] - s[a, 3, j, q]


@kernel
def grad_tiles(g6, t0, dm):
    """dm[a, b, o, i, j, n] = (A g A^T)[a, b] for the 2x2 output-gradient block g of g6 (O, th, 2, tw, 2, N) at
    tile (t0 + i, j): dm (4, 4, O, k, tw, N). Rows first, then columns, as the reference
    (A = [[1, 0], [1, 1], [1, -1], [0, -1]]: row a of A g is g0, g0 + g1, g0 - g1, -g1)."""
    o_, k, tw, n = dm.shape[2], dm.shape[3], dm.shape[4], dm.shape[5]
    for o in range(o_):
        for i in range(k):
            t = t0 + i
            for a in range(4):
                for b in range(4):
                    for j in range(tw):
                        for q in range(n):
                            x0 = _row(g6[o, t, 0, j, 0, q], g6[o, t, 1, j, 0, q], a)
                            x1 = _row(g6[o, t, 0, j, 1, q], g6[o, t, 1, j, 1, q], a)
                            dm[a, b, o, i, j, q] = _row(x0, x1, b)


@kernel.inline
def _row(g0, g1, a):
    """Row a of A (g0, g1)."""
    if a == 0:
        return g0
    if a == 1:
        return g0 + g1
    if a == 2:
        return g0 - g1
    return -g1

"""Winograd F(2x2, 3x3) transforms as compiled passes (numba): the counterparts of the NumPy passes in
``ember/nn/_ops/winograd.py``, which stay the reference. The arithmetic is the reference's, in its order, so the
results are the same bits.

Layout decides the speed. The 16 transformed planes of a band lie a power-of-two distance apart, so a loop that
wrote all 16 values of a tile at once would send 16 streams into the same cache sets (measured: 7x slower than
NumPy). Each kernel instead writes one plane at a time over one tile row (tw * N contiguous elements, the batch
innermost and vectorised), rereading its few inputs from that tile row, which stays in the L1 cache.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

# B^T (and, applied to columns, B): row a of B^T d is d[_P[a]] - d[_Q[a]] where _NEG[a], else d[_P[a]] + d[_Q[a]]
# (B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]).
_P = (0, 1, 2, 1)
_Q = (2, 2, 1, 3)
_NEG = (True, False, True, True)


@kernel.inline
def _tile_row_bt_b(d, r, v, c, i) -> None:
    """v[a, b, c, i, j, n] = (B^T t B)[a, b] for the 4x4 tiles t of d (H, W, N) at rows r.., columns 2 j: one tile
    row of channel c. Columns first (t B), then rows, as the reference."""
    tw, n = v.shape[4], v.shape[5]
    for a in range(4):
        ra, rb, na = r + _P[a], r + _Q[a], _NEG[a]
        for b in range(4):
            pb, qb, nb = _P[b], _Q[b], _NEG[b]
            for j in range(tw):
                s = 2 * j
                for q in range(n):
                    if nb:
                        x = d[ra, s + pb, q] - d[ra, s + qb, q]
                        y = d[rb, s + pb, q] - d[rb, s + qb, q]
                    else:
                        x = d[ra, s + pb, q] + d[ra, s + qb, q]
                        y = d[rb, s + pb, q] + d[rb, s + qb, q]
                    v[a, b, c, i, j, q] = x - y if na else x + y


@kernel
def input_tiles(xb, t0, v):
    """v[a, b, c, i, j, n] = (B^T d B)[a, b] for the 4x4 tile d of xb (C, H, W, N) at rows 2 (t0 + i),
    columns 2 j: v (4, 4, C, k, tw, N). Columns first (d B), then rows, as the reference."""
    c_, k = v.shape[2], v.shape[3]
    for c in range(c_):
        for i in range(k):
            _tile_row_bt_b(xb[c], 2 * (t0 + i), v, c, i)


@kernel.inline
def _tile_row_at(m, o, i, s) -> None:
    """s[a, b, j, n] = (A^T m)[a, b] for tile row i of output channel o of the tile GEMMs' result m (4, 4, O, k, tw,
    N): s (2, 4, tw, N) (A^T = [[1, 1, 1, 0], [0, 1, -1, -1]])."""
    tw, n = m.shape[4], m.shape[5]
    for b in range(4):
        for j in range(tw):
            for q in range(n):
                s[0, b, j, q] = m[0, b, o, i, j, q] + m[1, b, o, i, j, q] + m[2, b, o, i, j, q]
        for j in range(tw):
            for q in range(n):
                s[1, b, j, q] = m[1, b, o, i, j, q] - m[2, b, o, i, j, q] - m[3, b, o, i, j, q]


@kernel
def output_tiles(m, t0, out):
    """out[o, t0 + i, a, j, b, n] = (A^T m A)[a, b] for the tile GEMMs' result m (4, 4, O, k, tw, N):
    out (O, th, 2, tw, 2, N). Rows first (A^T m, into a scratch tile row), then columns, as the reference."""
    o_, k, tw, n = m.shape[2], m.shape[3], m.shape[4], m.shape[5]
    s = m[:2, :, 0, 0].copy()  # (2, 4, tw, N) scratch: A^T m for one tile row
    for o in range(o_):
        for i in range(k):
            _tile_row_at(m, o, i, s)
            for a in range(2):
                for j in range(tw):
                    for q in range(n):
                        out[o, t0 + i, a, j, 0, q] = s[a, 0, j, q] + s[a, 1, j, q] + s[a, 2, j, q]
                        out[o, t0 + i, a, j, 1, q] = s[a, 1, j, q] - s[a, 2, j, q] - s[a, 3, j, q]

# Bands of tile rows (batch-last tiles, as ``input_tiles`` and ``output_tiles``) read from and written to PyTorch's
# (N, C, H, W) layout inside the band, where the images are too narrow for the ``*_nchw`` kernels below (a row of a
# few tiles costs their loops more than their work): each (channel, tile row) is first gathered into a batch-last
# scratch block (4 rows, 2 tw + 2 columns, N samples; zeros outside the image: the padding), and each (output
# channel, tile row) of results scattered from one, so the arithmetic runs on the same batch-innermost runs as the
# batch-last kernels, in their order: the same bits as those kernels between ``conv_layout``'s copies, without the
# copies of the whole input and output on the calling thread before and after the bands.
@kernel
def input_tiles_from_nchw(x, top, left, t0, v):
    """v[a, b, c, i, j, n] = (B^T d B)[a, b] for the 4x4 tile d at padded rows 2 (t0 + i), columns 2 j of sample n
    of x (N, C, H, W) padded by ``top`` rows and ``left`` columns (zeros beyond x on every side): v (4, 4, C, k, tw,
    N). ``input_tiles``' arithmetic on the padded batch-last image, each channel's 2 k + 2 rows gathered once."""
    n_, h_, w_ = x.shape[0], x.shape[2], x.shape[3]
    c_, k, tw = v.shape[2], v.shape[3], v.shape[4]
    cols = 2 * tw + 2
    d = np.empty((2 * k + 2, cols, n_), x.dtype)  # the band's padded batch-last rows of one channel
    lo, hi = min(left, cols), max(min(left, cols), min(left + w_, cols))  # its columns that lie in x
    r0 = 2 * t0 - top
    for c in range(c_):
        for u in range(2 * k + 2):
            du = d[u]
            if r0 + u < 0 or r0 + u >= h_:
                for s in range(cols):
                    for q in range(n_):
                        du[s, q] = 0.0
                continue
            for s in range(lo):
                for q in range(n_):
                    du[s, q] = 0.0
            for s in range(lo, hi):
                for q in range(n_):
                    du[s, q] = x[q, c, r0 + u, s - left]
            for s in range(hi, cols):
                for q in range(n_):
                    du[s, q] = 0.0
        for i in range(k):
            _tile_row_bt_b(d, 2 * i, v, c, i)


@kernel
def output_tiles_to_nchw(m, bias, t0, out):
    """out[n, o, 2 (t0 + i) + a, 2 j + b] = (A^T m A)[a, b] (+ bias[o] when bias is not empty) for the tile GEMMs'
    result m (4, 4, O, k, tw, N), cropped to out (N, O, Ho, Wo): ``output_tiles``' arithmetic, then the bias added
    as ``conv.to_nchw`` adds it to the rounded sum."""
    o_, k, tw, n_ = m.shape[2], m.shape[3], m.shape[4], m.shape[5]
    ho, wo = out.shape[2], out.shape[3]
    s = np.empty((2, 4, tw, n_), m.dtype)  # A^T m for one tile row
    z = np.empty((2, 2, tw, n_), m.dtype)  # A^T m A: z[a, b, j, n] is output (2 i + a, 2 j + b) of sample n
    for o in range(o_):
        for i in range(k):
            _tile_row_at(m, o, i, s)
            for a in range(2):
                for j in range(tw):
                    for q in range(n_):
                        z[a, 0, j, q] = s[a, 0, j, q] + s[a, 1, j, q] + s[a, 2, j, q]
                        z[a, 1, j, q] = s[a, 1, j, q] - s[a, 2, j, q] - s[a, 3, j, q]
                if bias.shape[0]:
                    bo = bias[o]
                    for j in range(tw):
                        for q in range(n_):
                            z[a, 0, j, q] = z[a, 0, j, q] + bo
                            z[a, 1, j, q] = z[a, 1, j, q] + bo
            for q in range(n_):
                for a in range(2):
                    h = 2 * (t0 + i) + a
                    if h >= ho:
                        break
                    row = out[q, o, h]
                    for j in range(tw):
                        if 2 * j < wo:
                            row[2 * j] = z[a, 0, j, q]
                        if 2 * j + 1 < wo:
                            row[2 * j + 1] = z[a, 1, j, q]

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



@kernel
def grad_tiles_from_nchw(g, t0, dm):
    """dm[a, b, o, i, j, n] = (A g A^T)[a, b] for the 2x2 block of sample n's output gradient g (N, O, Ho, Wo) at
    rows 2 (t0 + i), columns 2 j (zeros beyond g): dm (4, 4, O, k, tw, N). ``grad_tiles``' arithmetic, on each
    (channel, tile row) gathered first into a batch-last scratch block."""
    n_, ho, wo = g.shape[0], g.shape[2], g.shape[3]
    o_, k, tw = dm.shape[2], dm.shape[3], dm.shape[4]
    e = np.empty((2, 2 * tw, n_), g.dtype)  # the tile row's two output-gradient rows, batch-last
    wide = min(wo, 2 * tw)
    for o in range(o_):
        for i in range(k):
            t = t0 + i
            for u in range(2):
                eu = e[u]
                if 2 * t + u >= ho:
                    for s in range(2 * tw):
                        for q in range(n_):
                            eu[s, q] = 0.0
                    continue
                for q in range(n_):
                    src = g[q, o, 2 * t + u]
                    for s in range(wide):
                        eu[s, q] = src[s]
                    for s in range(wide, 2 * tw):
                        eu[s, q] = 0.0
            for a in range(4):
                for b in range(4):
                    for j in range(tw):
                        for q in range(n_):
                            x0 = _row(e[0, 2 * j, q], e[1, 2 * j, q], a)
                            x1 = _row(e[0, 2 * j + 1, q], e[1, 2 * j + 1, q], a)
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


# The filter transforms, in float64 and rounded once to the output's dtype, as the reference (``_weight_tiles``,
# ``_weight_grad_untiles``: a dozen NumPy passes over (3, 3, O, C) blocks, 40-190 us a layer at a CIFAR ResNet's
# sizes, on the calling thread). One output channel at a time, through a (16, C) scratch block: U's 16 planes lie
# O * C elements apart (a power of two: the same cache sets), so each plane's row is read or written in one run.
@kernel
def weight_tiles(w, u):
    """u[4 i + j, o, c] = (G w[o, c] G^T)[i, j] for w (O, C, 3, 3): u (16, O, C). Along the kernel's rows first
    (per column: G times it), then along the columns, each as the reference's ``_g_first``."""
    o_, c_ = w.shape[0], w.shape[1]
    t = np.empty((4, 3), np.float64)
    row = np.empty((16, c_), u.dtype)
    for o in range(o_):
        for c in range(c_):
            f = w[o, c]
            for k in range(3):
                a0, a1, a2 = np.float64(f[0, k]), np.float64(f[1, k]), np.float64(f[2, k])
                s = a0 + a2
                t[0, k] = a0
                t[1, k] = (s + a1) * 0.5
                t[2, k] = (s - a1) * 0.5
                t[3, k] = a2
            for i in range(4):
                a0, a1, a2 = t[i, 0], t[i, 1], t[i, 2]
                s = a0 + a2
                row[4 * i, c] = a0
                row[4 * i + 1, c] = (s + a1) * 0.5
                row[4 * i + 2, c] = (s - a1) * 0.5
                row[4 * i + 3, c] = a2
        for p in range(16):  # (element by element: numba's array-to-array assignment took 3 s more to compile)
            src, dst = row[p], u[p, o]
            for c in range(c_):
                dst[c] = src[c]


@kernel
def weight_grad_untiles(du, out):
    """out[o, c, l, k] = (G^T dU[:, o, c] G)[l, k] for dU (16, O, C) (tile positions row-major): out (O, C, 3, 3).
    Along the tile rows first (per tile column: G^T times it), then along the columns, each as the reference's
    ``_gt_first``."""
    o_, c_ = du.shape[1], du.shape[2]
    t = np.empty((3, 4), np.float64)
    row = np.empty((16, c_), np.float64)
    for o in range(o_):
        for p in range(16):
            src = du[p, o]
            for c in range(c_):
                row[p, c] = src[c]
        for c in range(c_):
            for j in range(4):
                d0, d1, d2, d3 = row[j, c], row[4 + j, c], row[8 + j, c], row[12 + j, c]
                s = (d1 + d2) * 0.5
                t[0, j] = d0 + s
                t[1, j] = (d1 - d2) * 0.5
                t[2, j] = s + d3
            r = out[o, c]
            for l_ in range(3):
                a0, a1, a2, a3 = t[l_, 0], t[l_, 1], t[l_, 2], t[l_, 3]
                s = (a1 + a2) * 0.5
                r[l_, 0] = a0 + s
                r[l_, 1] = (a1 - a2) * 0.5
                r[l_, 2] = s + a3


# (N, C, H, W) in and out, no layout copies: the tiles of a band of samples, V[a, b, c, q, i, j] for sample q, tile
# row i, tile column j (the GEMMs do not care in which order the tiles stand). An image is read and written a row
# at a time, as it lies; rows are kept split by parity (even rows, odd rows), so that the passes between tile rows
# run over a whole plane's tiles in one loop (a loop per 4-16 element row cost more than its work on 8x8 and
# 16x16 images). Same arithmetic in the same order as the batch-last kernels above and the NumPy reference: the
# same bits. Loops index with unsigned counters where a signed one would keep them from vectorising (numba's
# negative-index wraparound).
@kernel
def input_tiles_nchw(x, top, left, n0, v):
    """v[a, b, c, q, i, j] = (B^T d B)[a, b] for the 4x4 tile d at padded rows 2 i, columns 2 j of sample n0 + q of
    x (N, C, H, W) padded by ``top`` rows and ``left`` columns (zero outside x): v (4, 4, C, nb, th, tw)."""
    c_, nb, th, tw = v.shape[2], v.shape[3], v.shape[4], v.shape[5]
    h_, w_ = x.shape[2], x.shape[3]
    hp, wp = 2 * th + 2, 2 * tw + 2
    p = np.zeros((2, (th + 1) * wp), x.dtype)  # a padded plane, even and odd rows (its borders stay zero)
    r = np.empty((4, 2, (th + 1) * tw), x.dtype)  # d B per column b of B, for the even and the odd padded rows
    vf = v.reshape(4, 4, c_, nb, th * tw)
    lo_w, hi_w = max(0, left), min(wp, left + w_)  # the padded columns x covers
    run, twu, span = np.uint64(max(0, hi_w - lo_w)), np.uint64(tw), np.uint64(th * tw)
    one, two, three = np.uint64(1), np.uint64(2), np.uint64(3)
    for q in range(nb):
        for c in range(c_):
            xs = x[n0 + q, c]
            for rr in range(hp):
                xr = rr - top
                dst = p[rr % 2, rr // 2 * wp + lo_w:]
                if xr < 0 or xr >= h_:
                    for s in range(run):
                        dst[s] = 0
                else:
                    src = xs[xr, lo_w - left:]
                    for s in range(run):
                        dst[s] = src[s]
            for par in range(2):
                pp, r0, r1, r2, r3 = p[par], r[0, par], r[1, par], r[2, par], r[3, par]
                for k in range(th + 1):
                    base, o = np.uint64(k * wp), np.uint64(k * tw)
                    for j in range(twu):
                        s = base + two * j
                        r0[o + j] = pp[s] - pp[s + two]
                        r1[o + j] = pp[s + one] + pp[s + two]
                        r2[o + j] = pp[s + two] - pp[s + one]
                        r3[o + j] = pp[s + one] - pp[s + three]
            for b in range(4):
                # tile row i reads padded rows 2i, 2i + 1, 2i + 2, 2i + 3: even[i], odd[i], even[i + 1], odd[i + 1]
                ev, od = r[b, 0], r[b, 1]
                v0, v1, v2, v3 = vf[0, b, c, q], vf[1, b, c, q], vf[2, b, c, q], vf[3, b, c, q]
                for t in range(span):
                    v0[t] = ev[t] - ev[t + twu]
                    v1[t] = od[t] + ev[t + twu]
                    v2[t] = ev[t + twu] - od[t]
                    v3[t] = od[t] - od[t + twu]


@kernel
def output_tiles_nchw(m, bias, n0, out):
    """out[n0 + q, o, 2 i + a, 2 j + b] = (A^T m A)[a, b] (+ bias[o] when bias is not empty) for the tile GEMMs'
    result m (4, 4, O, nb, th, tw), cropped to out (N, O, Ho, Wo). Rows first (A^T m), then columns, each over a
    whole plane's tiles into scratch planes; only then are the two output columns of each tile interleaved into
    the image's rows. (Computing the columns inside the row loop, tw tiles at a time, took 1.3-1.5x as long on
    8x8 and 16x16 tile planes: the loop was bound by its short trips, not by memory.)"""
    o_, nb, th, tw = m.shape[2], m.shape[3], m.shape[4], m.shape[5]
    ho, wo = out.shape[2], out.shape[3]
    s = np.empty((2, 4, th * tw), m.dtype)  # A^T m for a plane's tiles
    z = np.empty((2, 2, th * tw), m.dtype)  # A^T m A: z[a, b, t] is output (2 i + a, 2 j + b) of tile t = (i, j)
    mf = m.reshape(4, 4, o_, nb, th * tw)
    full, span = np.uint64(wo // 2), np.uint64(th * tw)  # full: tile columns whose both output columns exist
    one, two = np.uint64(1), np.uint64(2)
    for q in range(nb):
        for o in range(o_):
            for b in range(4):
                m0, m1, m2, m3 = mf[0, b, o, q], mf[1, b, o, q], mf[2, b, o, q], mf[3, b, o, q]
                s0, s1 = s[0, b], s[1, b]
                for t in range(span):
                    s0[t] = m0[t] + m1[t] + m2[t]
                    s1[t] = m1[t] - m2[t] - m3[t]
            for a in range(2):
                t0, t1, t2, t3, z0, z1 = s[a, 0], s[a, 1], s[a, 2], s[a, 3], z[a, 0], z[a, 1]
                if bias.shape[0]:
                    bo = bias[o]
                    for t in range(span):
                        z0[t] = (t0[t] + t1[t] + t2[t]) + bo
                        z1[t] = (t1[t] - t2[t] - t3[t]) + bo
                else:
                    for t in range(span):
                        z0[t] = t0[t] + t1[t] + t2[t]
                        z1[t] = t1[t] - t2[t] - t3[t]
            plane = out[n0 + q, o]
            for i in range(th):
                k = np.uint64(i * tw)
                for a in range(2):
                    if 2 * i + a >= ho:
                        break
                    row, z0, z1 = plane[2 * i + a], z[a, 0], z[a, 1]
                    for j in range(full):
                        row[two * j] = z0[k + j]
                        row[two * j + one] = z1[k + j]
                    if wo % 2:
                        row[two * full] = z0[k + full]


@kernel
def grad_tiles_nchw(g, n0, dm):
    """dm[a, b, o, q, i, j] = (A g A^T)[a, b] for the 2x2 block of g (N, O, Ho, Wo) at rows 2 i, columns 2 j of
    sample n0 + q (zero beyond g): dm (4, 4, O, nb, th, tw). Rows first (A g: g0, g0 + g1, g0 - g1, -g1), then
    columns, as ``grad_tiles``."""
    o_, nb, th, tw = dm.shape[2], dm.shape[3], dm.shape[4], dm.shape[5]
    ho, wo = g.shape[2], g.shape[3]
    p = np.zeros((2, th * 2 * tw), g.dtype)  # the plane's even and odd rows, zero-extended to 2 tw columns
    r = np.empty((4, th * 2 * tw), g.dtype)  # A times them
    dmf = dm.reshape(4, 4, o_, nb, th * tw)
    run, rows, span = np.uint64(wo), np.uint64(th * 2 * tw), np.uint64(th * tw)
    one, two = np.uint64(1), np.uint64(2)
    e, od = p[0], p[1]
    for q in range(nb):
        for o in range(o_):
            for rr in range(2 * th):
                dst = p[rr % 2, rr // 2 * 2 * tw:]
                if rr < ho:
                    src = g[n0 + q, o, rr]
                    for s in range(run):
                        dst[s] = src[s]
                else:
                    for s in range(run):
                        dst[s] = 0
            r0, r1, r2, r3 = r[0], r[1], r[2], r[3]
            for u in range(rows):
                r0[u] = e[u]
                r1[u] = e[u] + od[u]
                r2[u] = e[u] - od[u]
                r3[u] = -od[u]
            for a in range(4):
                ra = r[a]  # columns 2 j and 2 j + 1 of tile t: ra[2 t], ra[2 t + 1]
                d0, d1, d2, d3 = dmf[a, 0, o, q], dmf[a, 1, o, q], dmf[a, 2, o, q], dmf[a, 3, o, q]
                for t in range(span):
                    d0[t] = ra[two * t]
                    d1[t] = ra[two * t] + ra[two * t + one]
                    d2[t] = ra[two * t] - ra[two * t + one]
                    d3[t] = -ra[two * t + one]

"""The tiled products of the DCGAN transposed convolution's Winograd transforms (numba): the counterparts of
``_tile_ref`` (twice, along both dims: ``tile2d``) and ``_untile_ref`` in
``ember/nn/_ops/conv_transpose_winograd.py``, which stay the reference.

The NumPy reference makes one pass over whole arrays per coefficient; these loops make one pass, a row (``r``) at a
time, innermost over the batch (contiguous in every array). Each element is computed with the reference's
operations in its order (the nonzero coefficients ascending, a term's product rounded before its sum, overlapping
tiles added in the reference's order): the same bits.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel


@kernel.inline
def _scaled(d, s, cf, first):
    """d = cf s when ``first``, else d += cf s (1-d arrays)."""
    if first:
        for q in range(d.shape[0]):
            d[q] = cf * s[q]
    else:
        for q in range(d.shape[0]):
            d[q] += cf * s[q]


@kernel
def untile(src, mat, step, off, r0, r1, dst):
    """dst[r, step a + j - off, q] = sum over j ascending and the tiles a that reach it of (sum_k mat[k, j]
    src[k, r, a, q] over the nonzero mat[k, j], k ascending), for rows r0..r1; positions outside dst are dropped:
    src (K, R, A, Q), dst (R, L, Q) (Q: the trailing dims, contiguous)."""
    kk, jj = mat.shape
    count, q_ = src.shape[2], src.shape[3]
    length = dst.shape[1]
    t = np.empty_like(dst[0, 0])
    for r in range(r0, r1):
        dst[r] = 0
        for j in range(jj):
            for a in range(count):
                pos = step * a + j - off
                if pos < 0 or pos >= length:
                    continue
                first = True
                for k in range(kk):
                    cf = mat[k, j]
                    if cf == 0:
                        continue
                    _scaled(t, src[k, r, a], cf, first)
                    first = False
                if not first:
                    d = dst[r, pos]
                    for q in range(q_):
                        d[q] += t[q]


@kernel
def tile2d(src, mat, step, c0, c1, dst):
    """Both tiled products of a 2-d transform, for channels c0..c1: dst[k2, k1, c, a, b, q] = sum_j2 mat[k2, j2]
    t[k1, a, step b + j2, q] with t[k1, a, x, q] = sum_j1 mat[k1, j1] src[c, step a + j1, x, q] (each sum over the
    nonzero coefficients, j ascending): src (C, L1, L2, Q), dst (K, K, C, A, B, Q). ``tile`` along dim 1 and then
    along dim 2 (of its result as rows), the same bits, with the intermediate t one channel's (a few hundred KiB,
    kept in cache) instead of a whole array written out and read back."""
    kk, jj = mat.shape
    ca, cb = dst.shape[3], dst.shape[4]
    l2, q_ = src.shape[2], src.shape[3]
    t = np.empty((kk, ca, l2, q_), src.dtype)
    rows = t.reshape(kk, ca, l2 * q_)
    for c in range(c0, c1):
        sc = src[c].reshape(src.shape[1], l2 * q_)
        for k in range(kk):  # along dim 1: a run of L2 * Q elements at a time
            for a in range(ca):
                d = rows[k, a]
                first = True
                for j in range(jj):
                    cf = mat[k, j]
                    if cf == 0:
                        continue
                    _scaled(d, sc[step * a + j], cf, first)
                    first = False
        for k2 in range(kk):  # then along dim 2
            for k1 in range(kk):
                for a in range(ca):
                    ta = t[k1, a]
                    for b in range(cb):
                        d = dst[k2, k1, c, a, b]
                        first = True
                        for j in range(jj):
                            cf = mat[k2, j]
                            if cf == 0:
                                continue
                            _scaled(d, ta[step * b + j], cf, first)
                            first = False

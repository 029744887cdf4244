"""The 1-d tiled products of the DCGAN transposed convolution's Winograd transforms (numba): the counterparts of
``_tile_ref`` and ``_untile_ref`` in ``ember/nn/_ops/conv_transpose_winograd.py``, which stay the reference.

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
def tile(src, mat, step, r0, r1, dst):
    """dst[k, r, a, q] = sum_j mat[k, j] src[r, step a + j, q] over the nonzero mat[k, j] (j ascending) for rows
    r0..r1: src (R, L, Q), dst (K, R, A, Q) (Q: the trailing dims, contiguous)."""
    kk, jj = mat.shape
    count = dst.shape[2]
    for r in range(r0, r1):
        for k in range(kk):
            for a in range(count):
                d = dst[k, r, a]
                first = True
                for j in range(jj):
                    cf = mat[k, j]
                    if cf == 0:
                        continue
                    _scaled(d, src[r, step * a + j], cf, first)
                    first = False


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

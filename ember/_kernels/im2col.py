"""im2col and col2im of 2-d convolutions (numba): the counterparts of the per-offset NumPy copies and adds in
``ember/nn/_ops/conv.py`` (batch-last, the transposed convolution's) and ``conv_nchw.py`` ((N, C, H, W), the
``_nchw`` kernels at the end), which stay the reference.

Layouts as ``conv.py``'s: the padded input (C, Hp, Wp, N) and the column matrix (Ho, C, kh, kw, Wo, N), so every
innermost loop runs over the batch, contiguous in both. NumPy's copies take one call per kernel offset and row
block, over runs of N elements; these loops make one pass. col2im adds each element's contributions in the
reference's order (kernel offsets row-major), so both give the same bits.
"""

from __future__ import annotations

from ._jit import kernel


@kernel
def im2col2d(xb, r0, sh, sw, dh, dw, cols):
    """cols[r, c, i, j, w, n] = xb[c, (r0 + r) sh + i dh, w sw + j dw, n] for the output rows r0, r0 + 1, ... that
    ``cols`` holds."""
    ho, c_, kh, kw, wo, n = cols.shape
    for r in range(ho):
        for c in range(c_):
            for i in range(kh):
                src_row = xb[c, (r0 + r) * sh + i * dh]
                for j in range(kw):
                    for w in range(wo):
                        src = src_row[w * sw + j * dw]
                        dst = cols[r, c, i, j, w]
                        for q in range(n):
                            dst[q] = src[q]


@kernel
def col2im2d(gcols, sh, sw, dh, dw, gx):
    """gx[c, r sh + i dh, w sw + j dw, n] += gcols[r, c, i, j, w, n] for the zeroed gx (C, Hp, Wp, N), offsets
    (i, j) outermost (the reference's order of additions)."""
    ho, c_, kh, kw, wo, n = gcols.shape
    for c in range(c_):
        for i in range(kh):
            for j in range(kw):
                for r in range(ho):
                    dst_row = gx[c, r * sh + i * dh]
                    for w in range(wo):
                        src = gcols[r, c, i, j, w]
                        dst = dst_row[w * sw + j * dw]
                        for q in range(n):
                            dst[q] += src[q]


@kernel
def im2col2d_nchw(x, sh, sw, dh, dw, cols):
    """cols[n, c, i, j, h, w] = x[n, c, h sh + i dh, w sw + j dw]: x (N, C, Hp, Wp) padded, cols (N, C, kh, kw, Ho,
    Wo) (``conv_nchw.forward``'s per-offset copies in one pass)."""
    n_, c_, kh, kw, ho, wo = cols.shape
    for n in range(n_):
        for c in range(c_):
            for i in range(kh):
                for j in range(kw):
                    for h in range(ho):
                        src = x[n, c, h * sh + i * dh]
                        dst = cols[n, c, i, j, h]
                        for w in range(wo):
                            dst[w] = src[w * sw + j * dw]


@kernel
def col2im2d_nchw(dcols, sh, sw, dh, dw, gx):
    """gx[n, c, h sh + i dh, w sw + j dw] += dcols[n, c, i, j, h, w] for the zeroed gx (N, C, Hp, Wp), offsets
    (i, j) outermost (``conv_nchw.input_grad``'s order of additions)."""
    n_, c_, kh, kw, ho, wo = dcols.shape
    for n in range(n_):
        for c in range(c_):
            for i in range(kh):
                for j in range(kw):
                    for h in range(ho):
                        src = dcols[n, c, i, j, h]
                        dst = gx[n, c, h * sh + i * dh]
                        for w in range(wo):
                            dst[w * sw + j * dw] += src[w]

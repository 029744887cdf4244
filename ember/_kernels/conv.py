"""The convolution's layout changes as compiled passes (numba): the counterparts of the NumPy copies in
``ember/nn/_ops/conv.py`` (``to_nchw``, ``_batch_last_padded``, ``to_batch_last``), which stay the reference.

ember's convolutions compute on batch-last arrays (C, *spatial, N) and take and return (N, C, *spatial) arrays
contiguous as PyTorch's. A NumPy transposing copy between the two walks one side with a large stride (N or
C * H * W elements) and runs at a fifth of a plain copy's speed; these loops go through one channel's plane at a
time. Pure copies (and one addition of the bias): the same bits as the reference. Spatial dims come as three (1-d
and 2-d arrays reshaped with leading unit dims).

Why in blocks: the (N, C, *spatial) side holds the N samples' planes of one channel C * H * W elements apart, a
multiple of 4 KiB for the usual power-of-two sizes, so they all fall in the same few sets of the L1 cache. A loop
that visits more samples at once than the cache has ways (8) evicts its own lines at every step: a DCGAN layer's
(32, 128, 16, 16) input took 25x a plain copy's time that way (measured one thread, Zen 3). ``to_nchw`` writes each
sample's plane in one run, reading a channel's batch-last block (a few hundred KiB at most, in the L2 cache) down
its columns. ``to_batch_last_padded`` goes through 8 samples at a time and transposes blocks of 8 samples by 8
columns through a small buffer, so that it reads runs of 8 columns and writes runs of 8 samples (32 bytes for
float32) instead of single elements N apart: 20-40 % less time than one sample's plane at a time (0.93 -> 0.74 ms
for that input padded by 1, 2.5 -> 1.5 ms for a (32, 64, 32, 32) output gradient; one thread, an AMD EPYC with
AVX-512). The same blocks did not pay for ``to_nchw`` below the L1 cache's size per channel (0.34 -> 0.59 ms for
(32, 128, 16, 16)), whose single-element accesses are reads.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

_B = 8  # the side of the square blocks transposed through a small buffer (8 samples by 8 positions)


@kernel.inline
def _zero_border(oc, pd, ph, pw, d_, h_, w_):
    """Zero what lies outside x in one channel's padded batch-last block oc (Dp, Hp, Wp, N)."""
    dp, hp, wp = oc.shape[0], oc.shape[1], oc.shape[2]
    for d in range(dp):
        for h in range(hp):
            row = oc[d, h]
            if d < pd or d >= pd + d_ or h < ph or h >= ph + h_:
                row[:, :] = 0
                continue
            for w in range(pw):
                row[w, :] = 0
            for w in range(pw + w_, wp):
                row[w, :] = 0


@kernel
def to_nchw(src, bias, c0, c1, out):
    """out[n, c, d, h, w] = src[c, d, h, w, n] (+ bias[c] when bias is not empty) for channels c0..c1: src
    (C, D, H, W, N), out (N, C, D, H, W). Each sample's plane of out is written in one run. src may be a strided
    view (the cropped interior of a padded array): its batch is the only dim read with a stride of one element
    (a contiguous src comes as (C, 1, 1, H * W * D, N), its plane read as one run)."""
    d_, h_, w_, n_ = src.shape[1], src.shape[2], src.shape[3], src.shape[4]
    for c in range(c0, c1):
        sc = src[c]
        for n in range(n_):
            o = out[n, c]
            if bias.shape[0]:
                b = bias[c]
                for d in range(d_):
                    for h in range(h_):
                        s, r = sc[d, h], o[d, h]
                        for w in range(w_):
                            r[w] = s[w, n] + b
            else:
                for d in range(d_):
                    for h in range(h_):
                        s, r = sc[d, h], o[d, h]
                        for w in range(w_):
                            r[w] = s[w, n]


@kernel
def to_batch_last_padded(x, pd, ph, pw, c0, c1, out):
    """out[c, d + pd, h + ph, w + pw, n] = x[n, c, d, h, w] for channels c0..c1, zero elsewhere: x (N, C, D, H, W),
    out (C, Dp, Hp, Wp, N). The border is zeroed first; then blocks of 8 samples by 8 columns of a row go through
    a small buffer (8 runs of 8 columns read, one from each sample's plane, 8 runs of 8 samples written), the
    rest element by element."""
    n_, c_, d_, h_, w_ = x.shape[0], x.shape[1], x.shape[2], x.shape[3], x.shape[4]
    dp, hp, wp = out.shape[1], out.shape[2], out.shape[3]
    blk = np.empty((_B, _B), x.dtype)
    xf = x.reshape(-1)
    of = out.reshape(-1)
    nu, wu = np.uint64(n_), np.uint64(w_)
    plane = np.uint64(d_ * h_ * w_)
    cs = np.uint64(c_) * plane  # one sample's elements
    wfull, nfull = w_ - w_ % _B, n_ - n_ % _B
    for c in range(c0, c1):
        oc = out[c]
        _zero_border(oc, pd, ph, pw, d_, h_, w_)
        cbase = np.uint64(c) * plane
        for n0 in range(0, nfull, _B):
            nn = np.uint64(n0)
            for d in range(d_):
                for h in range(h_):
                    src = cbase + np.uint64(d * h_ + h) * wu  # x[0, c, d, h, 0]
                    dst = np.uint64((((c * dp + d + pd) * hp + h + ph) * wp + pw) * n_)  # out[c, d+pd, h+ph, pw, 0]
                    for w0 in range(0, wfull, _B):
                        ww = np.uint64(w0)
                        for i in range(_B):
                            r = src + (nn + np.uint64(i)) * cs + ww
                            for j in range(_B):
                                blk[j, i] = xf[r + np.uint64(j)]
                        for j in range(_B):
                            o = dst + (ww + np.uint64(j)) * nu + nn
                            for i in range(_B):
                                of[o + np.uint64(i)] = blk[j, i]
                    row = oc[d + pd, h + ph]
                    for w in range(wfull, w_):  # the columns past the last whole block
                        for n in range(n0, n0 + _B):
                            row[w + pw, n] = x[n, c, d, h, w]
        for n in range(nfull, n_):  # the samples past the last whole block: each one's plane in one run
            xc = x[n, c]
            for d in range(d_):
                for h in range(h_):
                    xr, row = xc[d, h], oc[d + pd, h + ph]
                    for w in range(w_):
                        row[w + pw, n] = xr[w]

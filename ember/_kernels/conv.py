"""The convolution's layout changes as compiled passes (numba): the counterparts of the NumPy copies in
``ember/nn/_ops/conv.py`` (``to_nchw``, ``_batch_last_padded``, ``to_batch_last``), which stay the reference.

ember's convolutions compute on batch-last arrays (C, *spatial, N) and take and return (N, C, *spatial) arrays
contiguous as PyTorch's. A NumPy transposing copy between the two walks one side with a large stride (N or
C * H * W elements) and runs at a fifth of a plain copy's speed; these loops go through one channel's plane at a
time. Pure copies (and one addition of the bias): the same bits as the reference. Spatial dims come as three (1-d
and 2-d arrays reshaped with leading unit dims).

Why one sample's plane at a time: the (N, C, *spatial) side holds the N samples' planes of one channel
C * H * W elements apart, a multiple of 4 KiB for the usual power-of-two sizes, so they all fall in the same few
sets of the L1 cache. A loop that visits more samples at once than the cache has ways (8) evicts its own lines at
every step: a DCGAN layer's (32, 128, 16, 16) input took 25x a plain copy's time that way, 10x this way (measured
one thread, Zen 3). The batch-last side of one channel (a few hundred KiB at most) stays in the L2 cache while
each sample's plane is read or written in one sequential run.
"""

from __future__ import annotations

from ._jit import kernel

_FEW_SAMPLES = 8  # at most this many samples are read row by row together (no more than the L1 cache's ways)


@kernel
def to_nchw(src, bias, c0, c1, out):
    """out[n, c, s] = src[c, s, n] (+ bias[c] when bias is not empty) for channels c0..c1: src (C, S, N),
    out (N, C, S). Each sample's plane of out is written in one run."""
    s_, n_ = src.shape[1], src.shape[2]
    for c in range(c0, c1):
        sc = src[c]
        for n in range(n_):
            o = out[n, c]
            if bias.shape[0]:
                b = bias[c]
                for s in range(s_):
                    o[s] = sc[s, n] + b
            else:
                for s in range(s_):
                    o[s] = sc[s, n]


@kernel
def to_batch_last_padded(x, pd, ph, pw, c0, c1, out):
    """out[c, d + pd, h + ph, w + pw, n] = x[n, c, d, h, w] for channels c0..c1, zero elsewhere: x (N, C, D, H, W),
    out (C, Dp, Hp, Wp, N). The border is zeroed first; then each sample's plane of x is read in one run (with
    at most ``_FEW_SAMPLES`` samples, a row of out is written whole from one W-run of each instead)."""
    n_, d_, h_, w_ = x.shape[0], x.shape[2], x.shape[3], x.shape[4]
    dp, hp, wp = out.shape[1], out.shape[2], out.shape[3]
    for c in range(c0, c1):
        oc = out[c]
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
        if n_ > _FEW_SAMPLES:
            for n in range(n_):
                xc = x[n, c]
                for d in range(d_):
                    for h in range(h_):
                        xr, row = xc[d, h], oc[d + pd, h + ph]
                        for w in range(w_):
                            row[w + pw, n] = xr[w]
        else:
            for d in range(d_):
                for h in range(h_):
                    row = oc[d + pd, h + ph]
                    for n in range(n_):
                        xr = x[n, c, d, h]
                        for w in range(w_):
                            row[w + pw, n] = xr[w]

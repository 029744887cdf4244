"""The convolution's layout changes as compiled passes (numba): the counterparts of the NumPy copies in
``ember/nn/_ops/conv.py`` (``to_nchw``, ``_batch_last_padded``, ``to_batch_last``), which stay the reference.

ember's convolutions compute on batch-last arrays (C, *spatial, N) and take and return (N, C, *spatial) arrays
contiguous as PyTorch's. A NumPy transposing copy between the two walks one side with a large stride (N or
C * H * W elements) and runs at a fifth of a plain copy's speed; these loops go through one channel's plane at a
time in blocks whose both sides stay in the L1 cache. Pure copies (and one addition of the bias): the same bits
as the reference. Spatial dims come as three (1-d and 2-d arrays reshaped with leading unit dims).
"""

from __future__ import annotations

from ._jit import kernel

_BLOCK = 64  # spatial positions per block: 64 * N elements of the batch-last side (8 KiB at N = 32, float32)


@kernel
def to_nchw(src, bias, c0, c1, out):
    """out[n, c, s] = src[c, s, n] (+ bias[c] when bias is not empty) for channels c0..c1: src (C, S, N),
    out (N, C, S)."""
    s_, n_ = src.shape[1], src.shape[2]
    for c in range(c0, c1):
        for s0 in range(0, s_, _BLOCK):
            s1 = min(s0 + _BLOCK, s_)
            for n in range(n_):
                if bias.shape[0]:
                    b = bias[c]
                    for s in range(s0, s1):
                        out[n, c, s] = src[c, s, n] + b
                else:
                    for s in range(s0, s1):
                        out[n, c, s] = src[c, s, n]


@kernel
def to_batch_last_padded(x, pd, ph, pw, c0, c1, out):
    """out[c, d + pd, h + ph, w + pw, n] = x[n, c, d, h, w] for channels c0..c1, zero elsewhere: x (N, C, D, H, W),
    out (C, Dp, Hp, Wp, N). A row of out (Wp * N elements) is written whole, reading one W-run of each sample."""
    n_, d_, h_, w_ = x.shape[0], x.shape[2], x.shape[3], x.shape[4]
    dp, hp, wp = out.shape[1], out.shape[2], out.shape[3]
    for c in range(c0, c1):
        for d in range(dp):
            for h in range(hp):
                row = out[c, d, h]
                xd, xh = d - pd, h - ph
                if xd < 0 or xd >= d_ or xh < 0 or xh >= h_:
                    row[:, :] = 0
                    continue
                for w in range(pw):
                    row[w, :] = 0
                for w in range(pw + w_, wp):
                    row[w, :] = 0
                for n in range(n_):
                    xr = x[n, c, xd, xh]
                    for w in range(w_):
                        row[w + pw, n] = xr[w]

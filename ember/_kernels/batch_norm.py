"""BatchNorm's training-mode forward and input gradient over (B, C, M) planes (numba): the counterparts of
``BatchNorm._forward_rows`` / ``_backward_rows`` in ``ember/nn/_ops/norm.py`` (BLAS dots and NumPy passes, the
reference). A channel is B rows of M elements (B = N for a contiguous (N, C, *) array, as convolutions return it).

The reference makes five passes over the input in the forward and six in the backward (each dot, subtraction and
product its own); these read x three times in the forward (its sum, the sum of squares about the mean, the
output) and write only the output, and the backward reads g and x twice (the sums of g and of g (x - mean) in
one pass, dx in the next). A channel's planes stay in cache between its passes. Sums are accumulated in float64,
vectorised (``kernel.reassociating``: as fast as the reference's BLAS dots), so results agree with the reference
(float32 dots) to rounding, not bit for bit. Channels are independent: ``parallel_for`` splits them over
threads (or, as ``kernel.parallel``, the ``prange`` loop over channels runs on numba's OpenMP threads), and a
channel's arithmetic does not depend on the split: each channel's sums stay on one thread, in the serial order.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel, prange


@kernel.inline
def _row_sum(a, b, mu, squares):
    """sum(a), or sum((a - mu) (b - mu)) when ``squares``, of two 1-D rows, in float64."""
    s = 0.0
    if squares:
        for j in range(a.shape[0]):
            s += np.float64(a[j] - mu) * (b[j] - mu)
    else:
        for j in range(a.shape[0]):
            s += a[j]
    return s


@kernel.reassociating
def forward(x, w, b, eps, c0, c1, mean, var, out):
    """For channels c0..c1 of x (B, C, M): mean[c], var[c] (biased) and out = (x - mean) w / sqrt(var + eps) + b;
    w, b (C,) or empty for none; mean, var (C,) of x's dtype."""
    nb, m = x.shape[0], x.shape[2]
    count = nb * m
    # each channel's scale and shift in x's dtype, so the elementwise work rounds as x's (a row per channel: the
    # channels of a parallel loop write their own)
    k = np.zeros((c1, 2), x.dtype)
    for c in prange(c0, c1):
        s = 0.0
        for i in range(nb):
            s += _row_sum(x[i, c], x[i, c], 0, False)
        mean[c] = s / count
        mu = mean[c]
        ss = 0.0
        for i in range(nb):
            ss += _row_sum(x[i, c], x[i, c], mu, True)
        var[c] = ss / count
        inv = 1.0 / np.sqrt(np.float64(var[c]) + eps)
        k[c, 0] = inv * w[c] if w.shape[0] else inv
        if b.shape[0]:
            k[c, 1] = b[c]
        k0, k1 = k[c, 0], k[c, 1]
        for i in range(nb):
            xr, orow = x[i, c], out[i, c]
            for j in range(m):
                orow[j] = (xr[j] - mu) * k0 + k1


@kernel.reassociating
def backward(g, x, mean, a, invstd, c0, c1, gsum, gdot, gx):
    """For channels c0..c1 of the output gradient g (B, C, M), with xc = x - mean: gsum[c] = sum(g),
    gdot[c] = sum(g xc) and, when gx is not empty, dx = a g - (a invstd^2 gdot / count) xc - a gsum / count
    (a = w invstd, per channel)."""
    nb, m = g.shape[0], g.shape[2]
    count = nb * m
    k = np.empty((c1, 3), g.dtype)  # each channel's three factors in g's dtype (a row each, as forward's)
    for c in prange(c0, c1):
        mu = mean[c]
        s = d = 0.0
        for i in range(nb):
            gr, xr = g[i, c], x[i, c]
            for j in range(m):
                v = gr[j]
                s += v
                d += np.float64(v) * (xr[j] - mu)
        gsum[c], gdot[c] = s, d
        if gx.shape[0] != 0:
            ac = np.float64(a[c])
            k[c, 0] = a[c]
            k[c, 1] = ac * np.float64(invstd[c]) ** 2 * d / count
            k[c, 2] = ac * s / count
            k0, k1, k2 = k[c, 0], k[c, 1], k[c, 2]
            for i in range(nb):
                gr, xr, outr = g[i, c], x[i, c], gx[i, c]
                for j in range(m):
                    outr[j] = gr[j] * k0 - ((xr[j] - mu) * k1 + k2)

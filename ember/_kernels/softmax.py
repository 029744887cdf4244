"""Softmax forward and its vector-Jacobian product, one row at a time (numba): the counterparts of
``_softmax_chunk`` and ``softmax_vjp`` in ``ember/ops/activation.py`` (the NumPy reference: a shift by the global
max, then 4-5 passes). Here each row's max is found, and the row exponentiated (shifted by that max, as PyTorch's
kernel), summed (float64) and scaled while it is in the L1 cache.
Causal attention's mask is applied by length: row i of each (L, S) block keeps keys j <= i (the rest of the row is
0), so the scores need no -inf mask added first (NumPy's exp of -inf entries takes its slow path: softmax over
causally masked scores measured 4x the time of unmasked ones). Results agree with the reference to float32
rounding (a different exp and summation order), not bit for bit.
``log_softmax`` (rows of 16 entries or more) follows PyTorch's own order instead: (x - row max) - log(sum), the sum
in float32 in the 16 lanes of its AVX-512 kernel, which gives PyTorch's bits for nearly every entry on such a CPU.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel, prange
from .rows import exp_split, row_dot, row_sum

_F = np.float32
_MIN_ROW_SUM = 2.0 ** -16  # as ``ember.ops.activation._MIN_ROW_SUM``


@kernel.fused
def softmax(x, out, scale, block_rows, first_row, empty_zero):
    """out = softmax of each row of x * scale (R, S; float32; scale > 0: attention's, folded in here rather than
    a pass over the queries), computed as exp((x - m) * scale) / sum with m the row's own max, as PyTorch shifts:
    the row's largest entry is exp(0) = 1 exactly before the division, so a dominant entry comes out 1.0 as
    PyTorch's does (a shift by the whole array's max gave 0.99999994 there). A row whose sum is not >= 2**-16
    (NaN, -inf rows, a +inf entry) is redone with a NaN-propagating max. ``block_rows`` > 0: causal, row r keeps
    its first (first_row + r) % block_rows + 1 entries (the rest are 0; ``first_row``: x's first row in the whole
    array, when x is a chunk of it). A row whose kept entries are all -inf gives zeros when ``empty_zero``
    (scaled_dot_product_attention), NaN otherwise (softmax)."""
    _softmax_rows(x, out, scale, block_rows, first_row, empty_zero, 0, x.shape[0])


@kernel.fused
def softmax_blocks(x, out, scale, block_rows, empty_zero, blocks):
    """``softmax`` of all of x's rows in ``blocks`` ranges, one per iteration of a ``prange`` loop (numba's OpenMP
    threads in ``softmax_blocks.parallel``), each with its own scratch: each row alone, ``softmax``'s bits."""
    r_ = x.shape[0]
    for k in prange(blocks):
        _softmax_rows(x, out, scale, block_rows, 0, empty_zero, r_ * k // blocks, r_ * (k + 1) // blocks)


@kernel.inline
def _softmax_rows(x, out, scale, block_rows, first_row, empty_zero, lo, hi):
    """``softmax`` of rows lo..hi-1."""
    n = x.shape[1]
    keys = x.view(np.int32)  # (the row max on order-preserving integer keys: see ``_row_max_key``)
    cell = np.empty(1, np.int32)
    cell_f = cell.view(np.float32)
    bits = np.empty(n, np.int32)
    two_k = bits.view(np.float32)
    for r in range(lo, hi):  # (2-D indexing: a row view per row costs reference-count updates worth ~30 % here)
        valid = n if block_rows == 0 else min(n, (first_row + r) % block_rows + 1)
        cell[0] = _row_max_key(keys, r, valid)
        shift = cell_f[0]
        # exp over whole vectors (16 lanes) past ``valid``, zeroed after: a remainder loop would run scalar
        _exp_shifted(x, out, r, min(n, (valid + 15) // 16 * 16), shift, scale, bits, two_k)
        total = row_sum(out, r, valid)
        if not total >= _MIN_ROW_SUM:  # (also NaN)
            m = x[r, 0]
            for j in range(1, valid):
                v = x[r, j]
                m = v if (v > m or v != v) else m  # a NaN stays
            if m == -np.inf:
                fill = _F(0) if empty_zero else _F(np.nan)
                for j in range(n):
                    out[r, j] = fill
                continue
            _exp_shifted(x, out, r, valid, m, scale, bits, two_k)
            total = row_sum(out, r, valid)
        inv = _F(1) / _F(total)  # the sum rounded to float32 first, as PyTorch sums: its bits more often
        for j in range(valid):
            out[r, j] *= inv
        for j in range(valid, n):
            out[r, j] = _F(0)


@kernel.fused
def log_softmax(x, out):
    """out = log_softmax of each row of x (R, S; S >= 16; float32), as PyTorch's kernel computes it: (x - m) -
    log(sum(exp(x - m))) with m the row's own max, the sum in float32 in PyTorch's order (``_lanes_sum``) and the
    two subtractions in that order (the reference shifts by the whole array's max: a row far below it loses bits).
    ``out`` holds the row's exps until the last pass overwrites them (out is not x). Rows of fewer than 16 entries
    (which PyTorch adds one after another) stay on the reference: per row, this loop cost more than its passes
    over the whole array (52 against 33 µs for (2048, 5))."""
    _log_softmax_rows(x, out, 0, x.shape[0])


@kernel.fused
def log_softmax_blocks(x, out, blocks):
    """``log_softmax`` in ``blocks`` ranges of rows, as ``softmax_blocks``."""
    r_ = x.shape[0]
    for k in prange(blocks):
        _log_softmax_rows(x, out, r_ * k // blocks, r_ * (k + 1) // blocks)


@kernel.inline
def _log_softmax_rows(x, out, lo, hi):
    """``log_softmax`` of rows lo..hi-1."""
    n = x.shape[1]
    keys = x.view(np.int32)
    cell = np.empty(1, np.int32)
    cell_f = cell.view(np.float32)
    bits = np.empty(n, np.int32)
    two_k = bits.view(np.float32)
    tail = np.empty(16, np.float32)
    for r in range(lo, hi):
        cell[0] = _row_max_key(keys, r, n)
        m = cell_f[0]
        _exp_shifted(x, out, r, n, m, _F(1), bits, two_k)
        _subtract_log(x, out, r, n, m, _lanes_sum(out, r, n, tail))


@kernel.inline
def _subtract_log(x, out, r, n, m, total):
    """out[r] = (x[r] - m) - log(total). A sum not >= 1 (with m the true max, exp(0) = 1 is one of its terms) is
    NaN: the row holds a NaN, a +inf, or only -inf, and PyTorch's result is NaN throughout (inf - inf, NaN sums)."""
    if not total >= _F(1):
        for j in range(n):
            out[r, j] = np.nan
        return
    lse = np.log(total)
    for j in range(n):
        out[r, j] = (x[r, j] - m) - lse


@kernel.inline
def _lanes_sum(a, r, n, tail):
    """sum(a[r, :n]) (n >= 16, entries >= 0) in float32 as PyTorch's ``map_reduce_all`` adds on AVX-512: 16 lanes,
    lane l adding the entries j = l (mod 16) in order, then the lanes pairwise (l + l^8, then ^4, ^2, ^1). Sixteen
    scalars, which LLVM keeps in one vector register (a 16-entry array, updated in memory, took twice the time:
    each add waited on the last one's store); ``tail``: 16 floats of scratch for the last partial vector."""
    s0 = a[r, 0]
    s1 = a[r, 1]
    s2 = a[r, 2]
    s3 = a[r, 3]
    s4 = a[r, 4]
    s5 = a[r, 5]
    s6 = a[r, 6]
    s7 = a[r, 7]
    s8 = a[r, 8]
    s9 = a[r, 9]
    s10 = a[r, 10]
    s11 = a[r, 11]
    s12 = a[r, 12]
    s13 = a[r, 13]
    s14 = a[r, 14]
    s15 = a[r, 15]
    full = n - n % 16
    for j in range(16, full, 16):
        s0 += a[r, j + 0]
        s1 += a[r, j + 1]
        s2 += a[r, j + 2]
        s3 += a[r, j + 3]
        s4 += a[r, j + 4]
        s5 += a[r, j + 5]
        s6 += a[r, j + 6]
        s7 += a[r, j + 7]
        s8 += a[r, j + 8]
        s9 += a[r, j + 9]
        s10 += a[r, j + 10]
        s11 += a[r, j + 11]
        s12 += a[r, j + 12]
        s13 += a[r, j + 13]
        s14 += a[r, j + 14]
        s15 += a[r, j + 15]
    for j in range(16):
        tail[j] = a[r, full + j] if full + j < n else _F(0)  # (+0 to the lanes past the end: their sums stay)
    s0 += tail[0]
    s1 += tail[1]
    s2 += tail[2]
    s3 += tail[3]
    s4 += tail[4]
    s5 += tail[5]
    s6 += tail[6]
    s7 += tail[7]
    s8 += tail[8]
    s9 += tail[9]
    s10 += tail[10]
    s11 += tail[11]
    s12 += tail[12]
    s13 += tail[13]
    s14 += tail[14]
    s15 += tail[15]
    t0, t1, t2, t3, t4, t5, t6, t7 = s0 + s8, s1 + s9, s2 + s10, s3 + s11, s4 + s12, s5 + s13, s6 + s14, s7 + s15
    u0, u1, u2, u3 = t0 + t4, t1 + t5, t2 + t6, t3 + t7
    return (u0 + u2) + (u1 + u3)


@kernel.inline
def _exp_shifted(x, out, r, width, shift, scale, bits, two_k):
    """out[r, :width] = exp((x[r, :width] - shift) * scale)."""
    for j in range(width):
        v = (x[r, j] - shift) * scale
        p, bits[j] = exp_split(v)
        out[r, j] = p if v == v else v  # exp(NaN) (a NaN entry, or inf - inf): NaN
    for j in range(width):
        out[r, j] *= two_k[j]


@kernel
def softmax_vjp(g, y, out, scale):
    """out = (g - rowsum(g * y)) * y * scale per row (out may be g): softmax's vector-Jacobian product, times
    attention's scale (1 for softmax)."""
    r_, n = g.shape
    for r in prange(r_):  # (numba's OpenMP threads in ``softmax_vjp.parallel``)
        d = _F(row_dot(g, r, y, r, n))
        for j in range(n):
            out[r, j] = (g[r, j] - d) * y[r, j] * scale



@kernel.inline
def _row_max_key(keys, r, n):
    """The bits of max(x[r, :n]) from x's int32 view ``keys`` (NaN entries may or may not win; the caller's exp then
    gives a NaN sum, and its redo the NaN row). A float32's bits i, as i ^ ((i >> 31) & 0x7fffffff), are int32 in
    the floats' order (negatives have their magnitude bits flipped); their max is a reduction LLVM vectorises, where
    a float max (its select is not reassociable under IEEE NaN rules) runs scalar: 4-10x the time. The np.int32
    casts keep numba's integer promotion from widening the lanes to int64 (half the elements per vector)."""
    m = np.int32(-2147483648)
    for j in range(n):
        i = keys[r, j]
        k = np.int32(i ^ ((i >> np.int32(31)) & np.int32(0x7fffffff)))
        m = k if k > m else m
    return np.int32(m ^ ((m >> np.int32(31)) & np.int32(0x7fffffff)))

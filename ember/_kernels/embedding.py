"""Embedding backward and sparse row gradients (numba): NumPy has no fast in-place scatter-add (``numpy.add.at``
costs ~50 ns per element), so the references (``ember/_sparse.segment_sum``, ``update_rows``) sort the indices
and sum repeated rows first, then gather, update and scatter the distinct rows.

Every kernel adds the rows of one index in lookup order, which is the order the reference sums in: the same bits.
The ``lo``/``hi`` arguments let a caller split the table's rows (or the distinct rows) among threads: a row is
only ever written by the one thread that owns it, so any split gives the same bits.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel, prange


@kernel
def gather_rows(w, idx, out, lo, hi):
    """out[i] = w[idx[i]] for i in lo..hi-1: a lookup's forward; idx (L,), out (L, D)."""
    d = w.shape[1]
    for i in prange(lo, hi):  # (numba's OpenMP threads in ``gather_rows.parallel``)
        r = idx[i]
        for j in range(d):
            out[i, j] = w[r, j]


@kernel
def zero_scatter_add_rows(out, idx, src, lo, hi):
    """Rows lo..hi-1 of out set to zero, then out[idx[i]] += src[i] for every i (in order) whose index falls in
    them: the dense gradient of a lookup, one slice of the table per thread."""
    d = src.shape[1]
    for r in range(lo, hi):
        for j in range(d):
            out[r, j] = 0
    for i in range(idx.shape[0]):
        r = idx[i]
        if lo <= r < hi:
            for j in range(d):
                out[r, j] += src[i, j]


@kernel
def distinct_rows(idx, num):
    """(rows, where): the distinct values of idx (L,) in [0, num), ascending, and for each table row its position
    in rows (-1 for a row idx does not have) — found without a sort: a mark per table row, then one scan."""
    where = np.full(num, -1, np.int64)
    for i in range(idx.shape[0]):
        where[idx[i]] = 0
    k = 0
    for r in range(num):
        if where[r] == 0:
            where[r] = k
            k += 1
    rows = np.empty(k, np.int64)
    for r in range(num):
        if where[r] >= 0:
            rows[where[r]] = r
    return rows, where


@kernel
def sum_rows(idx, src, where, sums, lo, hi):
    """sums[k] = the sum of the rows src[i] (src (L, D)) whose index idx[i] is rows[k], for k in lo..hi-1
    (``distinct_rows``' where), added in lookup order, the first one copied (not added to a zero, so a lone
    -0.0 keeps its sign): ``segment_sum``'s sums."""
    d = src.shape[1]
    seen = np.zeros(hi - lo, np.bool_)
    for i in range(idx.shape[0]):
        s = where[idx[i]]
        if lo <= s < hi:
            if seen[s - lo]:
                for j in range(d):
                    sums[s, j] += src[i, j]
            else:
                seen[s - lo] = True
                for j in range(d):
                    sums[s, j] = src[i, j]


@kernel
def add_rows_scaled(p, rows, values, alpha, lo, hi):
    """p[rows[k]] += values[k] * alpha for k in lo..hi-1 (rows distinct): ``update_rows``' gather, update and
    scatter in one pass; alpha a scalar of p's dtype."""
    d = values.shape[1]
    for k in range(lo, hi):
        r = rows[k]
        for j in range(d):
            p[r, j] += values[k, j] * alpha


@kernel
def sparse_adam_rows(p, m, v, rows, values, beta1c, beta2c, step, eps, lo, hi):
    """SparseAdam's update of the distinct rows rows[lo:hi], in the reference's arithmetic and order::

        m[r] += (g - m[r]) * beta1c;  v[r] += (g * g - v[r]) * beta2c;  p[r] += m[r] / (sqrt(v[r]) + eps) * step

    (beta1c = 1 - beta1, beta2c = 1 - beta2, step = -lr * bias correction; scalars of p's dtype)."""
    d = values.shape[1]
    for k in range(lo, hi):
        r = rows[k]
        for j in range(d):
            g = values[k, j]
            mj = m[r, j]
            mj += (g - mj) * beta1c
            m[r, j] = mj
            vj = v[r, j]
            vj += (g * g - vj) * beta2c
            v[r, j] = vj
            p[r, j] += mj / (np.sqrt(vj) + eps) * step

"""Embedding backward as an in-place scatter-add (numba): NumPy has no fast one (``numpy.add.at`` costs ~50 ns
per element), so the reference (``ember/_sparse.segment_sum``) sorts the indices and sums repeated rows first.
The kernel adds every looked-up row's gradient into its table row in lookup order, which is the order the
reference sums in: the same bits.
"""

from __future__ import annotations

from ._jit import kernel


@kernel
def scatter_add_rows(out, idx, src):
    """out[idx[i]] += src[i] for i = 0, 1, ... in order; out (rows, D), idx (L,), src (L, D)."""
    d = src.shape[1]
    for i in range(idx.shape[0]):
        r = idx[i]
        for j in range(d):
            out[r, j] += src[i, j]

"""The transposing copy that brings a GEMM computed with its operands' roles swapped back to C order (numba).

A Linear of a few rows computes ``(w @ x.T).T`` where OpenBLAS is slow on ``x @ w.T`` (``nn/_ops/linear.py``:
``_swapped``); the product is then the transpose of the output's layout. NumPy's copy of a transposed array reads
it column by column (at 64 x 384 float32, 15 µs, six times a contiguous copy); this one reads 16 of the product's
rows at a time, so that each output row is written in runs of 16 from lines still in cache, and adds the bias on
the way (one rounding per element, as ``out += b`` after the GEMM: the same bits).
"""

from __future__ import annotations

from ._jit import kernel

_BLOCK = 16  # product rows (output columns) per pass over the output's rows


@kernel
def transposed_plus(s, b, out):
    """out[i, j] = s[j, i] + b[j] for s (n, m), out (m, n); b (n,), or empty for no bias (out = s.T)."""
    n, m = s.shape
    whole = n - n % _BLOCK
    if b.shape[0]:
        for j0 in range(0, whole, _BLOCK):
            for i in range(m):
                for jj in range(_BLOCK):
                    out[i, j0 + jj] = s[j0 + jj, i] + b[j0 + jj]
        for j in range(whole, n):
            for i in range(m):
                out[i, j] = s[j, i] + b[j]
    else:
        for j0 in range(0, whole, _BLOCK):
            for i in range(m):
                for jj in range(_BLOCK):
                    out[i, j0 + jj] = s[j0 + jj, i]
        for j in range(whole, n):
            for i in range(m):
                out[i, j] = s[j, i]

"""Helpers the row kernels share (numba): sums over one row with vector lanes (``kernel.reduction``: reassociated,
see ``_jit.py``) and exp for float32 written out so that numba vectorises it.

numba vectorises arithmetic but not calls into the C library's ``exp``, so ``exp_split`` computes it as vector math
libraries do: y = k ln 2 + r with |r| <= ln 2 / 2, e^r by its Taylor polynomial to r^7 (truncation below float32's
rounding), and 2^k built from its bits (an int32 viewed as float32). Arguments below -87 give 0 (2^k would be
subnormal): exp(-87) is 1.6e-38, so a softmax or GELU value that small is 0 here where PyTorch keeps a subnormal.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import kernel

_F = np.float32  # float32 constants keep the arithmetic in float32 (a Python float would make it float64)
_LOG2E = _F(1 / math.log(2))
_LN2_HI = _F(0.693359375)  # ln 2 in two parts (Cody & Waite): k * _LN2_HI is exact for |k| < 2^8
_LN2_LO = _F(-2.12194440e-4)
_EXP = tuple(_F(1 / math.factorial(n)) for n in range(7, -1, -1))  # Taylor coefficients of e^r, highest first
_HALF, _FLOOR = _F(0.5), _F(-87.0)


@kernel.inline
def exp_split(y):
    """exp(y) for float32 y <= 0 as (p, bits): exp(y) = p * (bits viewed as float32), bits = 0 where exp(y)
    underflows and for NaN (callers that need exp(NaN) = NaN test for it)."""
    normal = y > _FLOOR  # (False for NaN)
    y = y if normal else _FLOOR
    k = np.int32(_HALF - y * _LOG2E)  # -k: round to nearest (the argument is >= 0: truncation is floor)
    kf = _F(k)
    r = (y + kf * _LN2_HI) + kf * _LN2_LO
    p = _EXP[0]
    for c in _EXP[1:]:
        p = p * r + c
    return p, ((np.int32(127) - k) << np.int32(23) if normal else np.int32(0))


@kernel.reduction
def row_sum(a, r, n):
    """sum(a[r, :n]) of a 2-D array (the row by index: a row view per call would update reference counts),
    accumulated in float64."""
    s = 0.0
    for j in range(n):
        s += a[r, j]
    return s


@kernel.reduction
def row_dot(a, ra, b, rb, n):
    """sum(a[ra, :n] * b[rb, :n]) of two 2-D arrays, accumulated in float64."""
    s = 0.0
    for j in range(n):
        s += np.float64(a[ra, j]) * b[rb, j]
    return s

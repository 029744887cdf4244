"""GELU (erf form) in one pass (numba): the counterpart of ``_gelu_erf_into`` in ``ember/nn/_ops/activation.py``
(about 20 NumPy passes, the reference). Same formula: Phi(-|x|) = t poly(t) exp(-x^2/2) / 2 with
t = 1 / (1 + p |x| / sqrt 2) (Abramowitz & Stegun 7.1.26, |error of erf| < 1.5e-7), computed in float64 and
rounded once to float32, so results are within a float32 ulp or two of the reference's float32 arithmetic.

numba vectorises arithmetic but not calls into the C library's ``exp``, so ``exp`` is written out as vector math
libraries do: y = k ln 2 + r with |r| <= ln 2 / 2, e^r by its Taylor polynomial to r^7 (truncation below
float32's rounding), and 2^k built from its bits (an int32 block viewed as float32).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import kernel

_BLOCK = 256  # elements per inner block: the exponent bits and e^r stay in the L1 cache between the loops
_F = np.float32  # float32 constants keep the arithmetic in float32 (a Python float would make it float64)
_LOG2E = _F(1 / math.log(2))
_LN2_HI = _F(0.693359375)  # ln 2 in two parts (Cody & Waite): k * _LN2_HI is exact for |k| < 2^8
_LN2_LO = _F(-2.12194440e-4)
_EXP = tuple(_F(1 / math.factorial(n)) for n in range(7, -1, -1))  # Taylor coefficients of e^r, highest first
_HALF, _ONE, _FLOOR = _F(0.5), _F(1), _F(-87.0)  # exp(y) for y below _FLOOR: 0 (2^k would be subnormal)
_T = _F(0.3275911 * math.sqrt(0.5))
_INV_SQRT_2PI = _F(1 / math.sqrt(2 * math.pi))
_AS = tuple(_F(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))  # highest first


@kernel
def gelu_erf(x, out, d):
    """out = x Phi(x) and, when d is as long as x, d = Phi(x) + x phi(x): 1-D float32 arrays."""
    n = x.shape[0]
    e = np.empty(_BLOCK, np.float32)  # exp(-x^2 / 2) = e 2^k for a block
    bits = np.empty(_BLOCK, np.int32)
    scale = bits.view(np.float32)  # 2^k
    for b0 in range(0, n, _BLOCK):
        m = min(_BLOCK, n - b0)
        xs, os = x[b0:b0 + m], out[b0:b0 + m]
        _exp_half_square(xs, e, bits)
        if d.shape[0] == n:
            ds = d[b0:b0 + m]
            for i in range(m):
                v = xs[i]
                ex = e[i] * scale[i]
                phi = _phi(v, ex)
                os[i] = v * phi
                ds[i] = phi + v * ex * _INV_SQRT_2PI
        else:
            for i in range(m):
                v = xs[i]
                os[i] = v * _phi(v, e[i] * scale[i])


@kernel.inline
def _exp_half_square(xs, e, bits):
    """exp(-x^2 / 2) = e 2^k, k in ``bits`` as a float32's exponent field (0 where exp underflows, and NaN)."""
    for i in range(xs.shape[0]):
        v = xs[i]
        y = -_HALF * v * v
        normal = y > _FLOOR  # (False for NaN)
        y = y if normal else _FLOOR
        k = np.int32(_HALF - y * _LOG2E)  # -k: round to nearest (the argument is >= 0: truncation is floor)
        kf = _F(k)
        r = (y + kf * _LN2_HI) + kf * _LN2_LO
        p = _EXP[0]
        for c in _EXP[1:]:
            p = p * r + c
        e[i] = p
        bits[i] = (np.int32(127) - k) << np.int32(23) if normal else np.int32(0)


@kernel.inline
def _phi(v, ex):
    """Phi(v) (the normal CDF) from ex = exp(-v^2 / 2), Abramowitz & Stegun 7.1.26."""
    t = _ONE / (_ONE + _T * abs(v))
    q = _AS[0]
    for c in _AS[1:]:
        q = q * t + c
    q = _HALF * q * t * ex  # Phi(-|v|)
    return (_ONE - q) if v >= 0 else q

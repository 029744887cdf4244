"""PyTorch's CPU random draws (numba): the loops NumPy cannot vectorise exactly.

- ``log``/``log1p``/``cos``/``sin``/``tan``/``exp`` of each element: numba calls the C library's double function,
  as PyTorch's scalar kernels do (NumPy's own vectorised ones may differ in the last bit). The NumPy reference is
  ``ember._random_math.libm`` (Python's ``math`` per element, the same C functions).
- ``randperm_swaps``: Fisher-Yates' sequential swaps (each reads what earlier swaps wrote). The reference is the
  Python loop in ``ember._random_draws.randperm``.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import kernel


@kernel
def _log(x, out):
    for i in range(x.shape[0]):
        out[i] = math.log(x[i])


@kernel
def _log1p(x, out):
    for i in range(x.shape[0]):
        out[i] = math.log1p(x[i])


@kernel
def _cos(x, out):
    for i in range(x.shape[0]):
        out[i] = math.cos(x[i])


@kernel
def _sin(x, out):
    for i in range(x.shape[0]):
        out[i] = math.sin(x[i])


@kernel
def _tan(x, out):
    for i in range(x.shape[0]):
        out[i] = math.tan(x[i])


@kernel
def _exp(x, out):
    for i in range(x.shape[0]):
        out[i] = math.exp(x[i])


LIBM = {"log": _log, "log1p": _log1p, "cos": _cos, "sin": _sin, "tan": _tan, "exp": _exp}


@kernel
def randperm_swaps(r, offsets):
    """For i in order: swap r[i] with r[i + offsets[i]]."""
    for i in range(offsets.shape[0]):
        k = i + offsets[i]
        t = r[i]
        r[i] = r[k]
        r[k] = t


# -- the normal kernels' blocks of 16 (PyTorch's normal_fill): u1 = 1 - u[j], u2 = u[j + 8], j < 8 ---------------
# float32: avx_mathfun.h's Cephes log and sincos with GCC's contractions, as ``ember._random_math`` emulates them
# with arrays (the reference); each fused multiply-add is rounded once: one fma instruction compiled, its emulation
# through float64 (``_fma32`` below) interpreted.
_F = np.float32
_ONE, _HALF, _MINUS_TWO = _F(1), _F(0.5), _F(-2)
_TWO_PI32, _TWO_PI = _F(2.0 * math.pi), 2.0 * math.pi
_MIN_NORM = np.array(0x00800000, np.uint32).view(_F)[()]
_SQRTHF, _LOG_Q1, _LOG_Q2 = _F(0.707106781186547524), _F(-2.12194440e-4), _F(0.693359375)
_LOW29, _HALF29, _ONE_BIT = np.uint64((1 << 29) - 1), np.uint64(1 << 28), np.uint64(1)
_EXP_SHIFT, _MANT_MASK, _HALF_BITS = np.uint32(23), np.uint32(0x807FFFFF), np.uint32(0x3F000000)
_LOG_P = np.array([7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
                   -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1], _F)
_FOPI, _DP1, _DP2, _DP3 = _F(1.27323954473516), _F(-0.78515625), _F(-2.4187564849853515625e-4), \
    _F(-3.77489497744594108e-8)
_COS0, _COS1, _COS2 = _F(2.443315711809948e-005), _F(-1.388731625493765e-003), _F(4.166664568298827e-002)
_SIN0, _SIN1, _SIN2 = _F(-1.9515295891e-4), _F(8.3321608736e-3), _F(-1.6666654611e-1)


@kernel.fma32
def _fma32(a, b, c):
    """a * b + c rounded once to float32: the product is exact in float64, the float64 sum s rounds once, and only
    an s lying exactly on a float32 midpoint (its 29 low bits 1000...0) needs its exact error (TwoSum) to round the
    right way: s moved one float64 step towards the error first."""
    p = np.float64(a) * np.float64(b)
    s = p + np.float64(c)
    bits = np.float64(s).view(np.uint64)
    if (bits & _LOW29) == _HALF29:
        bb = s - p
        t = (p - (s - bb)) + (np.float64(c) - bb)
        if t != 0.0:
            away = np.uint64((t > 0.0) == (s > 0.0))  # towards the error: away from zero, or back
            s = np.uint64(bits - _ONE_BIT + away + away).view(np.float64)
    return np.float32(s)


@kernel.inline
def _log32(x):
    bits = np.float32(max(x, _MIN_NORM)).view(np.uint32)
    ef = np.float32(np.int32(bits >> _EXP_SHIFT) - np.int32(0x7E))  # the exponent + 1
    m = np.uint32((bits & _MANT_MASK) | _HALF_BITS).view(np.float32)  # the mantissa in [0.5, 1)
    if m < _SQRTHF:
        ef = ef - _ONE
        m = (m - _ONE) + m
    else:
        m = m - _ONE
    z = m * m
    y = _LOG_P[0]
    for k in range(1, 9):
        y = _fma32(y, m, _LOG_P[k])
    y = y * m
    y = _fma32(y, z, ef * _LOG_Q1)
    y = y - z * _HALF
    m = m + y
    return _fma32(ef, _LOG_Q2, m)


@kernel.inline
def _sincos32(x):
    sign_sin = x < 0
    x = abs(x)
    j = int(x * _FOPI)
    j = (j + 1) & ~1
    y = np.float32(j)
    swap = (j & 4) != 0
    poly = (j & 2) == 0
    x = _fma32(y, _DP1, x)
    x = _fma32(y, _DP2, x)
    x = _fma32(y, _DP3, x)
    sign_cos = ((~(j - 2)) & 4) != 0
    sign_sin = sign_sin != swap
    z = x * x
    yc = _fma32(_COS0, z, _COS1)
    yc = _fma32(yc, z, _COS2)
    yc = yc * z
    yc = _fma32(yc, z, -(z * _HALF))
    yc = yc + _ONE
    ys = _fma32(_SIN0, z, _SIN1)
    ys = _fma32(ys, z, _SIN2)
    ys = ys * z
    ys = _fma32(ys, x, x)
    s = ys if poly else yc
    c = yc if poly else ys
    if sign_sin:
        s = -s
    if sign_cos:
        c = -c
    return s, c


@kernel
def normal16_f32(d):
    """Standard normals in place of the float32 uniforms d (a multiple of 16 long), block by block."""
    for o in range(0, d.shape[0] - 15, 16):
        for j in range(8):
            rad = np.sqrt(_MINUS_TWO * _log32(_ONE - d[o + j]))
            s, c = _sincos32(d[o + 8 + j] * _TWO_PI32)
            d[o + j] = rad * c
            d[o + 8 + j] = rad * s


@kernel
def normal16_f64(d):
    """Standard normals in place of the float64 uniforms d (a multiple of 16 long), with the C library's log, cos
    and sin."""
    for o in range(0, d.shape[0] - 15, 16):
        for j in range(8):
            rad = math.sqrt(-2.0 * math.log(1.0 - d[o + j]))
            theta = _TWO_PI * d[o + 8 + j]
            d[o + j] = rad * math.cos(theta)
            d[o + 8 + j] = rad * math.sin(theta)

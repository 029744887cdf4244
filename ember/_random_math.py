"""The floating-point arithmetic behind PyTorch's CPU random draws, reproduced bit for bit with NumPy.

PyTorch's kernels fuse multiply-adds (one rounding) where NumPy has no fused multiply-add, its AVX2 normal kernel
computes log, sin and cos in float32 with the Cephes polynomials of ``avx_mathfun.h``, and its scalar kernels call
the C library's double ``log``/``cos``/``sin`` element by element (NumPy's own vectorised versions may differ in
the last bit). This module provides each as an exact emulation:

- ``fma32``: a correctly rounded float32 fused multiply-add. The float32 product is exact in float64 and the
  float64 sum rounds once; rounding that to float32 is the fused result except when the float64 sum lies exactly on
  a float32 midpoint with a nonzero error, which is found (vectorised) and corrected for those elements only.
- ``fma64``: a correctly rounded float64 fused multiply-add from error-free transformations (Dekker's product,
  Knuth's sum); the rare elements whose rounding the transformations cannot decide are computed exactly with
  fractions.
- ``cephes_log32`` / ``cephes_sincos32``: ``log256_ps`` and ``sincos256_ps`` with the contractions GCC makes
  in PyTorch's AVX2 build (each Horner step fused).
- ``checked_once``: element-wise steps of several fused multiply-adds (the Cephes functions among them) with one
  midpoint check over all of them, and ``fma32`` again only for the elements it finds.
- ``libm(name, x)``: the C library's double function applied element by element: compiled (numba calls the same
  C function) when available, else Python's ``math`` module, which calls it too.
"""

from __future__ import annotations

import math

import numpy as np

_F32 = np.float32
_F64 = np.float64
_LOW29 = np.uint64((1 << 29) - 1)  # the float64 bits below a float32 mantissa
_HALF29 = np.uint64(1 << 28)       # ... set exactly at a float32 midpoint


def fma32(a, b, c):
    """``a * b + c`` with one rounding to float32 (a, b, c float32 arrays or numbers, broadcast; numbers give a
    float32 number)."""
    s = np.multiply(a, b, dtype=_F64)  # float32 * float32 is exact in float64
    s += c
    scalar = s.ndim == 0
    s = np.atleast_1d(s)
    out = s.astype(_F32)
    mid = (s.view(np.uint64) & _LOW29) == _HALF29
    if mid.any():
        _fix_midpoints(out, s, mid, a, b, c)
    return out[0] if scalar else out


def _fix_midpoints(out, s, mid, a, b, c) -> None:
    """Where the float64 sum ``s`` sits on a float32 midpoint, round the exact value instead (TwoSum's error says
    on which side of the midpoint it lies)."""
    idx = np.nonzero(mid)
    pick = [np.broadcast_to(np.asarray(v, _F32), s.shape)[idx].astype(_F64) for v in (a, b, c)]
    p = pick[0] * pick[1]
    sm = s[idx]
    bb = sm - p
    t = (p - (sm - bb)) + (pick[2] - bb)
    nudged = np.where(t != 0, np.nextafter(sm, np.where(t > 0, np.inf, -np.inf)), sm)
    out[idx] = nudged.astype(_F32)


_SPLIT = _F64(134217729.0)  # 2**27 + 1: Veltkamp's splitting constant


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fma64(a, b, c):
    """``a * b + c`` with one rounding to float64 (arrays or numbers, broadcast; the result is an array)."""
    a, b, c = (np.asarray(v, _F64) for v in (a, b, c))
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        ah = a * _SPLIT
        ah = ah - (ah - a)
        bh = b * _SPLIT
        bh = bh - (bh - b)
        e = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)  # p + e == a * b exactly
        s, t = _two_sum(p, c)
        v, w = _two_sum(t, e)   # a * b + c == s + v + w exactly
        r, z = _two_sum(s, v)   # r == round(s + v), s + v == r + z
        # r is round(r + z + w) unless w moves r + z across a rounding boundary: only possible when z lies on (or
        # within w of) half an ulp of r. Those elements, and any non-finite or near-overflow one, are done exactly.
        half = np.spacing(np.abs(r)) * 0.5
        near = np.abs(np.abs(z) - half) <= half * 2.0**-40
        near |= np.abs(np.abs(z) - half * 0.5) <= half * 2.0**-40  # a power of two's lower ulp is half
        doubt = ((w != 0) & near) | ~np.isfinite(r) | (np.abs(a) > 2.0**995) | (np.abs(b) > 2.0**995)
    r = np.array(r, dtype=_F64, copy=True)
    if doubt.any():
        aa, bb, cc = (np.broadcast_to(v, r.shape) for v in (a, b, c))
        for i in zip(*np.nonzero(doubt)) if r.ndim else [()]:
            r[i] = _exact_fma(float(aa[i]), float(bb[i]), float(cc[i]))
    return r


def _exact_fma(x: float, y: float, z: float) -> float:
    from fractions import Fraction  # rare: not imported with ember (it brings decimal)

    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        return x * y + z
    try:
        return float(Fraction(x) * Fraction(y) + Fraction(z))
    except OverflowError:
        return math.copysign(math.inf, x * y if x * y != 0 else z)


# avx_mathfun.h's log256_ps: the Cephes polynomial for log(1 + m), m in [sqrt(1/2) - 1, sqrt(2) - 1)
_LOG_P = [_F32(v) for v in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                            1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                            3.3333331174e-1)]
_MIN_NORM = np.array(0x00800000, np.uint32).view(_F32)


def cephes_log32(x, fma=fma32):
    """Natural log of a float32 array as PyTorch's AVX2 kernels compute it (x > 0); ``fma``: the fused
    multiply-add (``fma32``, or a ``MidpointsLater`` recording its steps)."""
    x = np.maximum(np.asarray(x, _F32), _MIN_NORM)
    bits = x.view(np.uint32)
    e = (bits >> np.uint32(23)).astype(np.int32)
    e -= 0x7E                                    # exponent - 127, + 1
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(_F32)  # mantissa in [0.5, 1)
    small = m < _F32(0.707106781186547524)
    e -= small
    ef = e.astype(_F32)
    m = m - _F32(1) + np.where(small, m, _F32(0))
    z = m * m
    y = _LOG_P[0]
    for coef in _LOG_P[1:]:
        y = fma(y, m, coef)
    y *= m
    y = fma(y, z, ef * _F32(-2.12194440e-4))   # GCC fuses y * z into the add of e * q1
    y -= z * _F32(0.5)
    m += y
    return fma(ef, _F32(0.693359375), m)


def cephes_sincos32(x, fma=fma32):
    """(sin, cos) of a float32 array as PyTorch's AVX2 kernels compute them (``fma`` as ``cephes_log32``'s)."""
    x = np.asarray(x, _F32)
    sign_sin = np.signbit(x)
    x = np.abs(x)
    j = (x * _F32(1.27323954473516)).astype(np.int32)  # truncation, as cvttps
    j += 1
    j &= ~1
    y = j.astype(_F32)
    swap = (j & 4) != 0
    poly = (j & 2) == 0
    x = fma(y, _F32(-0.78515625), x)
    x = fma(y, _F32(-2.4187564849853515625e-4), x)
    x = fma(y, _F32(-3.77489497744594108e-8), x)
    sign_cos = ((~(j - 2)) & 4) != 0
    sign_sin ^= swap
    z = x * x
    yc = fma(_F32(2.443315711809948e-005), z, _F32(-1.388731625493765e-003))
    yc = fma(yc, z, _F32(4.166664568298827e-002))
    yc *= z
    yc = fma(yc, z, -(z * _F32(0.5)))          # GCC fuses yc * z into the subtraction of z / 2
    yc += _F32(1)
    ys = fma(_F32(-1.9515295891e-4), z, _F32(8.3321608736e-3))
    ys = fma(ys, z, _F32(-1.6666654611e-1))
    ys *= z
    ys = fma(ys, x, x)
    s = np.where(poly, ys, yc)
    c = np.where(poly, yc, ys)
    np.negative(s, out=s, where=sign_sin)
    np.negative(c, out=c, where=sign_cos)
    return s, c


class MidpointsLater:
    """A float32 fused multiply-add for element-wise steps whose midpoint check (``fma32``'s) is made once, over
    all of them, instead of after each: every call rounds its float64 sum to float32 at once (the fused result
    unless that sum lies on a float32 midpoint and is inexact) and keeps the product and the sum; ``doubtful()``
    then says which elements had an inexact sum on a midpoint at any step. Those few are computed again with
    ``fma32`` (``checked_once``). ``steps`` bounds the calls; the steps must not change an array in place once it
    has been passed as a call's addend (it is read again by ``doubtful()``)."""

    def __init__(self, shape: tuple, steps: int) -> None:
        self._products = np.empty((steps, *shape), _F64)
        self._sums = np.empty((steps, *shape), _F64)
        self._addends: list = []

    def __call__(self, a, b, c):
        k = len(self._addends)
        self._addends.append(c)
        p = np.multiply(a, b, out=self._products[k], dtype=_F64)  # float32 * float32 is exact in float64
        return np.add(p, c, out=self._sums[k]).astype(_F32)

    def doubtful(self) -> np.ndarray:
        """The elements (a boolean array of the steps' shape) whose float64 sum lay on a float32 midpoint at some
        step with a nonzero error (an exact sum on a midpoint rounds to even, as the fused result does)."""
        used = len(self._addends)
        sums = self._sums[:used]
        mid = (sums.view(np.uint64) & _LOW29) == _HALF29
        doubt = np.zeros(sums.shape[1:], bool)
        if not mid.any():
            return doubt
        for k in np.flatnonzero(mid.reshape(used, -1).any(axis=1)):
            at = mid[k]
            s, p = sums[k][at], self._products[k][at]
            c = np.broadcast_to(np.asarray(self._addends[k], _F32), at.shape)[at].astype(_F64)
            bb = s - p  # TwoSum: s + t == p + c exactly
            t = (p - (s - bb)) + (c - bb)
            doubt[at] |= t != 0
        return doubt


def checked_once(steps, *arrays: np.ndarray, fmas: int) -> tuple:
    """``steps(*arrays, fma)``, an element-wise computation of new arrays of ``arrays``' common shape making at
    most ``fmas`` float32 fused multiply-adds, with each element rounded as ``fma32`` rounds it: the steps run
    once with ``MidpointsLater`` (one check over all fused multiply-adds), then again with ``fma32`` on the
    elements that any step left on a float32 midpoint. The same bits as ``steps(*arrays, fma32)``, in fewer NumPy
    calls: worth it on small arrays, where each call's overhead is most of its cost."""
    fma = MidpointsLater(arrays[0].shape, fmas)
    outs = steps(*arrays, fma)
    doubt = fma.doubtful()
    if doubt.any():
        exact = steps(*(a[doubt] for a in arrays), fma32)
        for out, redone in zip(outs, exact, strict=True):
            out[doubt] = redone
    return outs


_LIBM = {"log": math.log, "log1p": math.log1p, "cos": math.cos, "sin": math.sin, "tan": math.tan,
         "exp": math.exp}
_UFUNCS = {name: np.frompyfunc(fn, 1, 1) for name, fn in _LIBM.items()}


def libm(name: str, x):
    """The C library's double ``name`` (log, log1p, cos, sin, tan, exp) of each element of a float64 array."""
    x = np.ascontiguousarray(x, _F64)
    from ._kernels.policy import policy

    if policy.compiles(x.size, policy.min_compiled_elements):
        from ._kernels import random as kernels

        out = np.empty_like(x)
        kernels.LIBM[name](x.reshape(-1), out.reshape(-1))
        return out
    return np.asarray(_UFUNCS[name](x), dtype=_F64)

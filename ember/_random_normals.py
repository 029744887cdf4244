"""PyTorch's normal transform of a contiguous tensor's uniforms, in blocks of 16 (its ``normal_fill``): Box-Muller
on u1 = 1 - u[j] and u2 = u[j + 8] for j < 8, then ``v * std + mean`` fused. float32 computes log, sin and cos with
the Cephes polynomials of PyTorch's AVX2 kernel (``ember._random_math``), float64 with the C library's.

The transform reads no generator state, so it can run compiled (``ember._kernels.random``) at any size with the
same bits. Compiled from the kernel policy's ``min_compiled_elements`` on, as other kernels; below it, compiled too
once ember's compiled kernels have loaded numba in the process anyway (loading the cached transform then costs
~7-9 ms; a bare ``import numba`` of the program's is not enough: initialising numba's compiler target costs another
0.5 s), or once the process's NumPy-path transforms have taken ``normal_numpy_budget_s`` (about what loading numba
costs): a program's first few small draws import nothing, one that keeps drawing small tensors pays numba's load
once instead of the NumPy path's 0.1-0.4 ms a draw. The NumPy path (the reference, and the path with compiled
kernels off) makes its float32 fused multiply-adds' midpoint check once over all steps (``checked_once``).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ._kernels._jit import numba_loaded
from ._kernels.policy import policy
from ._random_math import cephes_log32, cephes_sincos32, checked_once, fma32, fma64, libm

_F32 = np.float32
_F64 = np.float64
_TWO_PI = 2.0 * math.pi
_FMAS32 = 8 + 1 + 1 + 3 + 3 + 3 + 2  # log's Horner steps and two more, sincos's reduction and two polynomials, scale

_numpy_seconds = 0.0  # the time this process's NumPy-path transforms took (approximate across threads)


def normals16(d: np.ndarray, mean: float, std: float) -> np.ndarray:
    """``d`` (flat, contiguous, float32 or float64, a multiple of 16 long) replaced in place by the normals of its
    uniforms, block by block, times ``std`` plus ``mean``; returns ``d``."""
    if _compiled(d.size):
        _compiled_in_place(d, mean, std)
        return d
    global _numpy_seconds
    start = time.perf_counter()
    blocks = d.reshape(-1, 16)
    d[...] = _numpy64(blocks, mean, std) if d.dtype == _F64 else _numpy32(blocks, mean, std)
    _numpy_seconds += time.perf_counter() - start
    return d


def small_normals(n: int) -> bool:
    """Whether a draw of ``n`` values is below the compiled kernels' size (``min_compiled_elements``): one of a
    few blocks, whose cost is the calls' more than the values'."""
    return n < policy.min_compiled_elements


def _compiled(size: int) -> bool:
    """Whether the transform of ``size`` values runs compiled (see the module's docstring)."""
    if size < policy.min_compiled_elements and not (
            policy.compiled and (numba_loaded() or _numpy_seconds >= policy.normal_numpy_budget_s)):
        return False
    return policy.use_compiled()


def _compiled_in_place(d: np.ndarray, mean: float, std: float) -> None:
    from ._kernels import random as kernels

    if d.dtype == _F64:
        kernels.normal16_f64(d)
        d[...] = scale64(d, mean, std)
        return
    kernels.normal16_f32(d)
    m, s = _F32(mean), _F32(std)
    if m != 0:
        from ._kernels import mt19937

        mt19937.scale32(d, s, m)  # fma(v, std, mean), rounded once
    elif s != 1:
        d *= s


def _numpy32(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    u1 = _F32(1) - blocks[:, :8]
    u2 = blocks[:, 8:] * _F32(_TWO_PI)
    out = np.empty_like(blocks)
    out[:, :8], out[:, 8:] = checked_once(lambda a, b, fma: _box_muller32(a, b, _F32(mean), _F32(std), fma),
                                          u1, u2, fmas=_FMAS32)
    return out.reshape(-1)


def _box_muller32(u1: np.ndarray, theta: np.ndarray, mean, std, fma) -> tuple[np.ndarray, np.ndarray]:
    """The pair (r cos theta, r sin theta) * std + mean of each element, r = sqrt(-2 log u1), ``fma`` as
    ``cephes_log32``'s."""
    log = cephes_log32(u1, fma)
    log *= _F32(-2)
    rad = np.sqrt(log, out=log)
    s, c = cephes_sincos32(theta, fma)
    s *= rad
    c *= rad
    return _scale32(c, mean, std, fma), _scale32(s, mean, std, fma)


def _scale32(v: np.ndarray, mean, std, fma=fma32) -> np.ndarray:
    """fma(v, std, mean) in float32 (mean, std float32 numbers)."""
    if mean == 0:
        if std != 1:
            v *= std
        return v
    return fma(v, std, mean)


def _numpy64(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    rad = np.sqrt(-2.0 * libm("log", 1.0 - blocks[:, :8]))
    theta = _TWO_PI * blocks[:, 8:]
    out = np.empty_like(blocks)
    np.multiply(rad, libm("cos", theta), out=out[:, :8])
    np.multiply(rad, libm("sin", theta), out=out[:, 8:])
    return scale64(out.reshape(-1), mean, std)


def scale64(v: np.ndarray, mean: float, std: float) -> np.ndarray:
    """fma(v, std, mean) in float64 (PyTorch's compiled ``v * std + mean``)."""
    if mean == 0:
        return v if std == 1 else v * _F64(std)
    return fma64(v, std, mean)

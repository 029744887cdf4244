"""ReLU, its gradient, hardtanh's gradient and GELU (erf form; float32, and float64 by the C library's erfc) in one
pass each (numba). ReLU's: the counterpart of the mask-then-multiply passes in ``ember/ops/unary.py``
(``Relu.backward``), the same arithmetic, so the same bits; ReLU's forward, of ``numpy.maximum(x, 0)`` (run only as
``kernel.parallel``, where numba's OpenMP threads split it; ember's own pool splits NumPy's maximum). GELU's: the
counterpart of ``_gelu_erf_into`` in ``ember/nn/_ops/activation.py`` (about 20 NumPy passes, the reference;
``gelu_erf64``'s is ``_gelu_erf64_into``). The float32 formula: Phi(-|x|) = t poly(t) exp(-x^2/2) / 2 with t = 1 / (1
+ p |x| / sqrt 2) (Abramowitz & Stegun 7.1.26, |error of erf| < 1.5e-7), computed in float64 and rounded once to
float32, so results are within a float32 ulp or two of the reference's float32 arithmetic.

exp is ``rows.exp_split``.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import kernel, prange
from .rows import exp_split

_BLOCK = 256  # elements per inner block: the exponent bits and e^r stay in the L1 cache between the loops
_F = np.float32  # float32 constants keep the arithmetic in float32 (a Python float would make it float64)
_HALF, _ONE = _F(0.5), _F(1)
_T = _F(0.3275911 * math.sqrt(0.5))
_INV_SQRT_2PI = _F(1 / math.sqrt(2 * math.pi))
_AS = tuple(_F(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))  # highest first


@kernel.fused
def gelu_erf(x, out, d):
    """out = x Phi(x) and, when d is as long as x, d = Phi(x) + x phi(x): 1-D float32 arrays."""
    _gelu_erf_range(x, out, d, 0, x.shape[0])


@kernel.fused
def gelu_erf_blocks(x, out, d, blocks):
    """``gelu_erf`` in ``blocks`` ranges (multiples of ``_BLOCK``), one per iteration of a ``prange`` loop (numba's
    OpenMP threads in ``gelu_erf_blocks.parallel``): each element alone, ``gelu_erf``'s bits."""
    for k in prange(blocks):
        lo, hi = _block_range(x.shape[0], k, blocks)
        _gelu_erf_range(x, out, d, lo, hi)


@kernel.inline
def _block_range(n, k, blocks):
    """(lo, hi): the k-th of ``blocks`` ranges of n elements, its bounds on multiples of ``_BLOCK``."""
    units = (n + _BLOCK - 1) // _BLOCK
    return min(n, units * k // blocks * _BLOCK), min(n, units * (k + 1) // blocks * _BLOCK)


@kernel.inline
def _gelu_erf_range(x, out, d, lo, hi):
    """``gelu_erf`` of elements lo..hi-1, a block of ``_BLOCK`` at a time."""
    n = x.shape[0]
    e = np.empty(_BLOCK, np.float32)  # exp(-x^2 / 2) = e 2^k for a block
    bits = np.empty(_BLOCK, np.int32)
    scale = bits.view(np.float32)  # 2^k
    for b0 in range(lo, hi, _BLOCK):
        m = min(_BLOCK, hi - b0)
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


@kernel
def gelu_erf64(x, out, d):
    """``gelu_erf`` for float64, with the C library's erfc (the polynomial's 1.5e-7 is far above float64's
    rounding): out = x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2, and, when d is as long as x, d = Phi(x) + x phi(x).
    Its ``prange`` loop runs on numba's OpenMP threads in ``gelu_erf64.parallel``."""
    n = x.shape[0]
    full = d.shape[0] == n
    for i in prange(n):
        v = x[i]
        cdf = math.erfc(v * -_SQRT_HALF64) * 0.5
        out[i] = v * cdf
        if full:  # the NumPy reference's order of operations (its exp may differ from the C library's by an ulp)
            d[i] = math.exp(v * v * -0.5) * v * _INV_SQRT_2PI64 + cdf


_SQRT_HALF64 = math.sqrt(0.5)
_INV_SQRT_2PI64 = 1 / math.sqrt(2 * math.pi)


@kernel.inline
def _exp_half_square(xs, e, bits):
    """exp(-x^2 / 2) = e 2^k, k in ``bits`` as a float32's exponent field (0 where exp underflows, and NaN)."""
    for i in range(xs.shape[0]):
        v = xs[i]
        e[i], bits[i] = exp_split(-_HALF * v * v)


@kernel.inline
def _phi(v, ex):
    """Phi(v) (the normal CDF) from ex = exp(-v^2 / 2), Abramowitz & Stegun 7.1.26."""
    t = _ONE / (_ONE + _T * abs(v))
    q = _AS[0]
    for c in _AS[1:]:
        q = q * t + c
    q = _HALF * q * t * ex  # Phi(-|v|)
    return (_ONE - q) if v >= 0 else q


@kernel
def leaky_relu(x, slope, one, out, d):
    """out = x where x > 0, else x * slope; when d is as long as x, d = one or slope there (the derivative): 1-D
    arrays, ``slope`` and ``one`` scalars of x's dtype. One pass for the NumPy reference's three or four
    (``_leaky_relu`` in ``ember/nn/_ops/activation.py``), the same bits."""
    need = d.shape[0] == x.shape[0]
    for i in range(x.shape[0]):
        v = x[i]
        pos = v > 0
        out[i] = v if pos else v * slope
        if need:
            d[i] = one if pos else slope


@kernel.fused
def silu(x, out, d):
    """out = x sigmoid(x) and, when d is as long as x, d = s (1 + x (1 - s)), s = sigmoid(x): 1-D float32 arrays.
    sigmoid(x) from e = exp(-|x|) <= 1: 1 / (1 + e) for x >= 0, e / (1 + e) below (no overflow); e is 0 below
    -87 (``exp_split``), so sigmoid(x) there is 0 where PyTorch keeps a subnormal."""
    _silu_range(x, out, d, 0, x.shape[0])


@kernel.fused
def silu_blocks(x, out, d, blocks):
    """``silu`` in ``blocks`` ranges, as ``gelu_erf_blocks``."""
    for k in prange(blocks):
        lo, hi = _block_range(x.shape[0], k, blocks)
        _silu_range(x, out, d, lo, hi)


@kernel.inline
def _silu_range(x, out, d, lo, hi):
    """``silu`` of elements lo..hi-1, a block of ``_BLOCK`` at a time."""
    n = x.shape[0]
    e = np.empty(_BLOCK, np.float32)
    bits = np.empty(_BLOCK, np.int32)
    scale = bits.view(np.float32)  # 2^k
    for b0 in range(lo, hi, _BLOCK):
        m = min(_BLOCK, hi - b0)
        xs, os = x[b0:b0 + m], out[b0:b0 + m]  # (slices: indexing x[b0 + i] measured 3x slower)
        for i in range(m):
            e[i], bits[i] = exp_split(-abs(xs[i]))
        if d.shape[0] == n:
            ds = d[b0:b0 + m]
            for i in range(m):
                v = xs[i]
                ex = e[i] * scale[i]
                s = (_ONE if v >= 0 else ex) / (_ONE + ex)
                os[i] = v * s
                ds[i] = s * (_ONE + v * (_ONE - s))
        else:
            for i in range(m):
                v = xs[i]
                ex = e[i] * scale[i]
                os[i] = v * ((_ONE if v >= 0 else ex) / (_ONE + ex))


@kernel
def relu(x, out):
    """out = max(x, 0) of 1-D arrays as PyTorch's relu: x unless x < 0 (so -0.0 and NaN kept, their sign too), else
    +0.0. The counterpart of ``relu_max`` in ``ember/ops/unary.py`` (the reference), the same bits in one pass."""
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = v if not v < 0 else 0.0


@kernel
def relu_grad(g, out, gx):
    """gx = g where out != 0 (also where out is NaN), else +0.0 (whatever g, infinite or NaN too), as PyTorch's
    ``threshold_backward``: 1-D arrays. The counterpart of ``Relu.backward``'s ``selected_gradient`` in
    ``ember/ops/unary.py`` (the reference), the same bits in one pass."""
    for i in prange(g.shape[0]):
        gx[i] = g[i] if out[i] != 0 else 0.0


@kernel
def hardtanh_grad(g, x, lo, hi, gx):
    """gx = 0 where x <= lo or x >= hi, else g (also where x is NaN), as PyTorch's ``hardtanh_backward``: 1-D
    arrays, ``lo`` and ``hi`` of x's dtype. The counterpart of ``_hardtanh_grad``'s ``where`` in
    ``ember/nn/_ops/activation.py`` (the reference), the same bits in one pass."""
    for i in prange(g.shape[0]):
        v = x[i]
        gx[i] = 0.0 if v <= lo or v >= hi else g[i]


@kernel
def multiply(a, b, out):
    """out = a * b of 1-D arrays (an activation's gradient times its derivative: ``_parallel.multiply``), run only
    as ``multiply.parallel`` on numba's OpenMP threads (``policy.omp``); NumPy's product, the same bits."""
    for i in prange(a.shape[0]):
        out[i] = a[i] * b[i]

"""Vectorised erf / erfc approximations (NumPy has none): the float32 kernels of ``erf`` / ``erfc`` and GELU's.

- ``erf_into`` / ``erfc_into``: float32 (and float16) results good to about one float32 ulp, computed in
  float64: for |x| < 1 the Taylor series of erf (13 terms, truncation < 1e-10), otherwise erfc(|x|) =
  t exp(-x^2 + P(t)), t = 1 / (1 + |x|/2), a Chebyshev fit with relative error < 1.2e-7 everywhere (so erfc
  keeps its relative accuracy far into the tail). Float64 inputs keep the C library's erf (``pointwise.py``).
- ``half_erfc_abs_into``: Abramowitz & Stegun 7.1.26 in the input's own dtype (|error of erf| < 1.5e-7): the
  few passes GELU can afford, whose result is x Phi(x), where an absolute error that size is below float32's.
"""

from __future__ import annotations

import math

from .._backend import xp

# erfc(a) = t exp(-a^2 + sum c_k t^k), t = 1 / (1 + a/2), a >= 0; lowest power first
_ERFC_CHEB = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587,
              -0.82215223, 0.17087277)
# erf(x) = x sum s_n x^(2n), s_n = 2/sqrt(pi) (-1)^n / (n! (2n + 1)); highest power first
_ERF_TAYLOR = tuple(2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(12, -1, -1))


def _erfc_abs(a):
    """erfc(a) for float64 a >= 0 (inf -> 0, nan -> nan), a new array."""
    t = a * 0.5
    t += 1
    xp.divide(1.0, t, out=t)
    p = t * _ERFC_CHEB[-1]
    for c in _ERFC_CHEB[-2:0:-1]:
        p += c
        p *= t
    p += _ERFC_CHEB[0]
    p -= xp.square(a)
    xp.exp(p, out=p)
    p *= t
    return p


def _erf_small(x):
    """erf(x) for float64 |x| < 1 (Taylor series)."""
    s = xp.square(x)
    p = s * _ERF_TAYLOR[0]
    for c in _ERF_TAYLOR[1:-1]:
        p += c
        p *= s
    p += _ERF_TAYLOR[-1]
    p *= x
    return p


def _erf_pieces(x):
    """(float64 x, |x|, erfc(|x|), indices where |x| < 1, erf there)."""
    x64 = x.astype(xp.float64)
    a = xp.abs(x64)
    small = xp.flatnonzero(a < 1)
    return x64, a, _erfc_abs(a), small, _erf_small(x64.take(small))


def erf_into(x, out) -> None:
    """out = erf(x) for 1-D float32/float16 x (out: x's dtype)."""
    x64, _, ec, small, es = _erf_pieces(x)
    xp.subtract(1.0, ec, out=ec)
    xp.copysign(ec, x64, out=ec)  # erf(-x) = -erf(x); keeps -0.0 and nan
    ec[small] = es
    out[...] = ec


def erfc_into(x, out) -> None:
    """out = erfc(x) for 1-D float32/float16 x (out: x's dtype)."""
    x64, _, ec, small, es = _erf_pieces(x)
    neg = x64 < 0
    ec[neg] = 2 - ec[neg]  # erfc(-a) = 2 - erfc(a)
    ec[small] = 1 - es
    out[...] = ec


def half_erfc_abs_into(a, scale: float, q, e) -> None:
    """q = erfc(scale a) / 2 and e = exp(-(scale a)^2), written into q and e, for a >= 0 (|x|, left unchanged).

    Abramowitz & Stegun 7.1.26: erfc(z) = t poly(t) exp(-z^2) with t = 1 / (1 + p z); the 1/2 is folded
    into the coefficients. 16 passes, one temporary; e is written out because GELU's derivative needs it.
    """
    s = a.dtype.type
    t = xp.multiply(a, s(_AS_P * scale))
    t += 1
    xp.divide(1, t, out=t)
    xp.multiply(t, s(0.5 * _AS_COEFFS[0]), out=q)
    for c in _AS_COEFFS[1:]:
        q += s(0.5 * c)
        q *= t
    xp.square(a, out=e)
    e *= s(-scale * scale / math.log(2))
    xp.exp2(e, out=e)  # exp(-(scale a)^2); NumPy's exp2 is twice as fast as its exp (see ops/activation.exp_into)
    q *= e


_AS_P = 0.3275911
_AS_COEFFS = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)  # highest power first

"""The gamma family: lgamma, digamma, polygamma(1, .) (trigamma), xlogy, mvlgamma.

NumPy has none of them. Each is computed in float64 as a vectorised series: small arguments
are shifted up by the recurrences (Gamma(x+1) = x Gamma(x), psi(x+1) = psi(x) + 1/x, ...)
until x >= 10, where the asymptotic (Stirling) series is accurate to about 1e-15; negative
arguments go through the reflection formulas. The result is cast back to the input's dtype.
"""

from __future__ import annotations

import math

from .._backend import xp
from .._tensor import Tensor
from ..autograd.graph import Node
from .elementwise import _float_operands
from .unary import _unary

_SHIFT_TO = 10.0


def _shift(x, term):
    """(x shifted up to >= 10, the sum of ``term(x + k)`` over the shifts), elementwise."""
    steps = xp.clip(xp.ceil(_SHIFT_TO - x), 0, None)
    total = xp.zeros_like(x)
    shifted = x.copy()
    for _ in range(int(steps.max(initial=0))):
        active = shifted < _SHIFT_TO
        total = total + xp.where(active, term(shifted), 0)
        shifted = xp.where(active, shifted + 1, shifted)
    return shifted, total


def _lgamma64(x):
    """log|Gamma(x)|."""
    neg = x < 0.5
    z = xp.where(neg, 1 - x, x)  # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
    z, logs = _shift(z, lambda t: xp.log(t))
    r = 1 / (z * z)
    series = (1 / 12 - r * (1 / 360 - r * (1 / 1260 - r * (1 / 1680 - r / 1188)))) / z
    out = (z - 0.5) * xp.log(z) - z + 0.5 * math.log(2 * math.pi) + series - logs
    with xp.errstate(divide="ignore", invalid="ignore"):
        reflected = math.log(math.pi) - xp.log(xp.abs(xp.sin(math.pi * x))) - out
    out = xp.where(neg, reflected, out)
    out = xp.where((x == 1) | (x == 2), 0.0, out)  # exact zeros (the shifted sum leaves ~1e-14)
    return xp.where((x <= 0) & (x == xp.floor(x)), xp.inf, out)  # poles at 0, -1, -2, ...


def _digamma64(x):
    neg = x < 0.5
    z = xp.where(neg, 1 - x, x)  # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
    z, inv = _shift(z, lambda t: 1 / t)
    r = 1 / (z * z)
    out = xp.log(z) - 0.5 / z - r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r / 132)))) - inv
    with xp.errstate(divide="ignore", invalid="ignore"):
        out = xp.where(neg, out - math.pi / xp.tan(math.pi * x), out)
    out = xp.where((x < 0) & (x == xp.floor(x)), xp.nan, out)
    return xp.where(x == 0, -xp.inf, out)  # PyTorch: -inf at 0, nan at the negative integers


def _trigamma64(x):
    neg = x < 0.5
    z = xp.where(neg, 1 - x, x)  # reflection: psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
    z, inv2 = _shift(z, lambda t: 1 / (t * t))
    r = 1 / (z * z)
    out = 1 / z + r / 2 + r / z * (1 / 6 - r * (1 / 30 - r * (1 / 42 - r / 30))) + inv2
    with xp.errstate(divide="ignore", invalid="ignore"):
        return xp.where(neg, (math.pi / xp.sin(math.pi * x)) ** 2 - out, out)


def _in_float64(fn, x):
    return fn(x.astype(xp.float64)).astype(x.dtype)


class _Series(Node):
    """f(x) computed in float64 by ``fn``; its derivative by ``derivative``."""
    diagonal_jacobian = True

    fn = derivative = None

    def forward(self, x):
        self.saved = (x,)
        return _in_float64(self.fn, x)

    def backward(self, g):
        return (g * _in_float64(self.derivative, self.saved[0]),)


class Lgamma(_Series):  # d lgamma = digamma
    fn, derivative = staticmethod(_lgamma64), staticmethod(_digamma64)


class Digamma(_Series):  # d digamma = trigamma
    fn, derivative = staticmethod(_digamma64), staticmethod(_trigamma64)


class Trigamma(Node):
    diagonal_jacobian = True

    def forward(self, x):
        self.saved = (x,)
        return _in_float64(_trigamma64, x)

    def backward(self, g):
        raise RuntimeError("polygamma(1, x): the derivative (polygamma(2, x)) is not implemented in ember")


lgamma = _unary(Lgamma)
digamma = _unary(Digamma)
_trigamma = _unary(Trigamma)


def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of digamma; ember has n = 0 (digamma) and n = 1 (trigamma)."""
    if n == 0:
        return digamma(input)
    if n == 1:
        return _trigamma(input)
    raise RuntimeError(f"polygamma(n, x) is implemented in ember for n = 0 and n = 1 only, got n = {n}")


def xlogy(input, other) -> Tensor:
    """input * log(other), and 0 where input is 0 (even where other is 0 or inf); nan stays nan."""
    from .indexing import where
    from .unary import log

    input, other = (t if isinstance(t, Tensor) else Tensor._make(xp.asarray(t, dtype=xp.float64))
                    for t in _float_operands(input, other))
    prod = input * log(other)
    return where((input == 0) & ~other.isnan(), 0.0, prod)


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma of dimension p: sum_{i<p} lgamma(x - i/2) + p(p-1)/4 log(pi)."""
    from .shape import unsqueeze

    if not bool(((input._data > (p - 1) / 2)).all()):
        raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    offsets = Tensor._make(-xp.arange(p, dtype=input._data.dtype) / 2)
    return lgamma(unsqueeze(input, -1) + offsets).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)

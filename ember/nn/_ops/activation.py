"""Pointwise activations: one node whose forward also yields f'(x) when a gradient is needed.

Each activation is a function ``fn(x, need_grad, *params) -> (f(x), f'(x) or None)``;
``Pointwise`` saves the derivative and backward is ``g * f'(x)``. Computing the
derivative alongside the forward reuses its intermediates (exp, tanh, ...).
"""

from __future__ import annotations

import math

from ... import _dtype
from ..._backend import xp
from ..._tensor import Tensor
from ...autograd.graph import Node
from ...ops.elementwise import cast


class Pointwise(Node):
    def forward(self, x, fn, params):
        out, deriv = fn(x, self.needs_input_grad is not None, *params)
        self.saved = (deriv,)
        return out

    def backward(self, g):
        return (g * self.saved[0],)


def _apply(x: Tensor, fn, *params) -> Tensor:
    if not x.is_floating_point():
        x = cast(x, _dtype.get_default_dtype())
    return Pointwise.apply(x, fn=fn, params=params)


def _scalar(x, value: float):
    """A Python number as a scalar of x's dtype, so float32 stays float32."""
    return x.dtype.type(value)


_ERF_P = 0.3275911
_ERF_COEFFS = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)  # highest power first


def _half_erfc_abs(x, scale):
    """(q, e) with e = exp(-(scale x)^2) and q = erfc(|scale x|) / 2, both new arrays.

    Abramowitz & Stegun 7.1.26 (|error of erf| < 1.5e-7; NumPy has no erf): erfc(a) = poly(t) exp(-a^2)
    with t = 1 / (1 + p a). Every step writes into one of two buffers, so an array of n elements costs
    two allocations rather than one per operation; e is returned because GELU's derivative needs it.
    """
    s = x.dtype.type
    a = xp.multiply(x, s(scale))
    xp.abs(a, out=a)
    t = xp.multiply(a, s(_ERF_P))
    t += 1
    xp.divide(1, t, out=t)
    q = xp.multiply(t, s(_ERF_COEFFS[0]))
    for c in _ERF_COEFFS[1:]:
        q += s(c)
        q *= t
    xp.square(a, out=a)
    xp.negative(a, out=a)
    xp.exp(a, out=a)
    q *= a
    q *= s(0.5)
    return q, a


def sigmoid_array(x):
    """Overflow-free logistic function: sigmoid(x) = (1 + tanh(x/2)) / 2."""
    return _scalar(x, 0.5) * (1 + xp.tanh(_scalar(x, 0.5) * x))


def _leaky_relu(x, need, slope):
    pos = x > 0
    out = xp.where(pos, x, x * _scalar(x, slope))
    return out, (xp.where(pos, _scalar(x, 1), _scalar(x, slope)) if need else None)


def _gelu(x, need, approximate):
    if x.ndim == 0:  # ufuncs on 0-d arrays return scalars, which cannot be written into
        out, deriv = _gelu(x.reshape(1), need, approximate)
        return out.reshape(()), (deriv.reshape(()) if need else None)
    # Each formula writes into a few preallocated buffers (in-place ufuncs): GELU runs on the largest
    # activations of a transformer, where allocating a temporary per operation costs as much as the math.
    s = x.dtype.type
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        x2 = xp.square(x)
        th = xp.multiply(x2, s(0.044715 * k))
        th += s(k)
        th *= x
        xp.tanh(th, out=th)  # th = tanh(k (x + 0.044715 x^3))
        half = xp.add(th, 1)
        half *= s(0.5)  # (1 + th) / 2
        out = xp.multiply(half, x)
        if not need:
            return out, None
        # d/dx = (1 + th)/2 + x/2 (1 - th^2) k (1 + 3 * 0.044715 x^2)
        x2 *= s(3 * 0.044715 * k)
        x2 += s(k)
        x2 *= x
        x2 *= s(0.5)
        xp.square(th, out=th)
        xp.subtract(1, th, out=th)
        th *= x2
        th += half
        return out, th
    # Phi(x) = 1 - q for x >= 0 and q for x < 0, q = erfc(|x|/sqrt 2)/2; e = exp(-x^2/2)
    cdf, e = _half_erfc_abs(x, 1 / math.sqrt(2))
    xp.subtract(s(0.5), cdf, out=cdf)
    xp.copysign(cdf, x, out=cdf)
    cdf += s(0.5)
    out = xp.multiply(x, cdf)
    if not need:
        return out, None
    # d/dx = Phi(x) + x phi(x), phi(x) = e / sqrt(2 pi)
    e *= x
    e *= s(1 / math.sqrt(2 * math.pi))
    e += cdf
    return out, e


def _silu(x, need):
    s = sigmoid_array(x)
    return x * s, (s * (1 + x * (1 - s)) if need else None)


def _elu(x, need, alpha):
    pos = x > 0
    neg = _scalar(x, alpha) * xp.expm1(xp.minimum(x, 0))
    out = xp.where(pos, x, neg)
    return out, (xp.where(pos, _scalar(x, 1), neg + _scalar(x, alpha)) if need else None)


def _softplus(x, need, beta, threshold):
    bx = x * _scalar(x, beta)
    linear = bx > threshold
    # log(1 + e^z) = max(z, 0) + log1p(e^-|z|) never overflows
    soft = (xp.maximum(bx, 0) + xp.log1p(xp.exp(-xp.abs(bx)))) / _scalar(x, beta)
    out = xp.where(linear, x, soft)
    return out, (xp.where(linear, _scalar(x, 1), sigmoid_array(bx)) if need else None)


def _hardtanh(x, need, lo, hi):
    out = xp.clip(x, lo, hi)
    return out, (((x > lo) & (x < hi)).astype(x.dtype) if need else None)


def _logsigmoid(x, need):
    out = xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))
    return out, (sigmoid_array(-x) if need else None)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """max(0, x) + negative_slope * min(0, x)."""
    return _maybe_inplace(input, _apply(input, _leaky_relu, negative_slope), inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x); ``approximate='tanh'`` uses the tanh formula."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got '{approximate}'")
    return _apply(input, _gelu, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (a.k.a. swish)."""
    return _maybe_inplace(input, _apply(input, _silu), inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return _maybe_inplace(input, _apply(input, _elu, alpha), inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta; linear where beta * x > threshold."""
    return _apply(input, _softplus, beta, threshold)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """clamp(x, min_val, max_val); gradient 1 strictly inside, 0 at and beyond the bounds (as PyTorch)."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    return _maybe_inplace(input, _apply(input, _hardtanh, min_val, max_val), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed without overflow."""
    return _apply(input, _logsigmoid)


def _maybe_inplace(input: Tensor, out: Tensor, inplace: bool) -> Tensor:
    """``inplace=True``: write the result into ``input`` through copy_ (version bump, graph rebase)."""
    return input.copy_(out) if inplace else out

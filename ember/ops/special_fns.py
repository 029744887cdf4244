"""Special functions NumPy lacks, as ``torch`` / ``torch.special`` compute them: sinc, deg2rad / rad2deg, the
modified Bessel functions i0, i0e, i1, i1e, erfcx, log_ndtr, ndtri, entr; and renorm, rsub.

Each is computed in float64 and cast back to the input's dtype (integer inputs give the default float dtype, as
PyTorch's):

- Bessel I0 and I1 (``_bessel_ie``, scaled by exp(-|x|)): the power series sum (x/2)^(2k+n) / (k! (k+n)!) up to
  |x| = 30 (70 terms: all positive, no cancellation; truncation below 1e-20), Hankel's asymptotic series beyond
  (18 terms, below 1e-17 from |x| = 30 on); unscaled values are exp(|x|) times the scaled ones.
- erfcx = exp(x^2) erfc(x): the product directly for 0 <= x < 4 (the C library's erfc keeps its relative accuracy),
  Laplace's continued fraction of erfc beyond, erfcx(-x) = 2 exp(x^2) - erfcx(x) for negative x.
- log_ndtr: log1p(-erfc(x/sqrt 2)/2) for x >= -1, log(erfcx(-x/sqrt 2)/2) - x^2/2 below (no underflow).
- ndtri: Abramowitz & Stegun 26.2.23's estimate (error < 4.5e-4), then Newton's steps on log_ndtr.

Gradients are PyTorch's formulas, computed by ember's ops under ``create_graph`` (so differentiable again).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from .. import _dtype
from .._arg_aliases import rsub_overloads_error
from .._backend import xp
from .._memory_format import astype_result
from .._size import c_type_name
from .._tensor import Tensor
from ..autograd.graph import Node, torch_named
from ..autograd.recorded import RecordedArray, is_recorded
from ..autograd.saved_attributes import saved_tensor
from .elementwise import cast, conj_if_complex, is_inexact
from .pointwise import _erfc
from .reduction import vector_norm_array, vector_norm_backward

_SQRT_2PI = math.sqrt(2 * math.pi)
_SERIES_UP_TO = 30.0


def _bessel_ie(n: int, a):
    """I_n(a) exp(-a) for float64 a >= 0 (n: 0 or 1; inf -> 0, nan -> nan)."""
    out = xp.empty_like(a)
    small = ~(a > _SERIES_UP_TO)  # (nan goes through the series: nan)
    s = a[small]
    half_sq = (s / 2) ** 2
    term = (s / 2) ** n  # k = 0: (a/2)^n / n!
    total = term.copy()
    for k in range(1, 70):
        term = term * half_sq / (k * (k + n))
        total += term
    out[small] = total * xp.exp(-s)
    big = a[~small]
    mu, term, total = 4.0 * n * n, xp.ones_like(big), xp.ones_like(big)
    for k in range(1, 18):
        term = term * -(mu - (2 * k - 1) ** 2) / (k * 8 * big)
        total += term
    with xp.errstate(all="ignore"):
        out[~small] = xp.where(xp.isinf(big), 0.0, total / xp.sqrt(2 * math.pi * big))
    return out


def _i0e64(x):
    return _bessel_ie(0, xp.abs(x))


def _i1e64(x):
    return xp.copysign(_bessel_ie(1, xp.abs(x)), x)


def _i0_64(x):  # (nan at +-inf, as PyTorch's)
    a = xp.abs(x)
    return xp.where(xp.isinf(a), xp.nan, _bessel_ie(0, a) * xp.exp(a))


def _i1_64(x):
    a = xp.abs(x)
    return xp.copysign(xp.where(xp.isinf(a), xp.nan, _bessel_ie(1, a) * xp.exp(a)), x)


def _erfcx_pos(a):
    """erfcx(a) for float64 a >= 0."""
    out = xp.empty_like(a)
    near = ~(a >= 4)
    out[near] = xp.exp(a[near] ** 2) * _erfc(a[near])
    far = a[~near]
    k = far.copy()
    for n in range(60, 0, -1):  # erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))
        k = far + (n / 2) / k
    out[~near] = 1 / (math.sqrt(math.pi) * k)
    return out


def _erfcx64(x):
    a = xp.abs(x)
    pos = _erfcx_pos(a)
    return xp.where(x < 0, 2 * xp.exp(a * a) - pos, pos)


def _log_ndtr64(x):
    z = x / math.sqrt(2)
    upper = xp.log1p(-_erfc(z) / 2)
    lower = xp.log(_erfcx64(-z) / 2) - x * x / 2
    return xp.where(x >= -1, upper, lower)


def _ndtri_lower(q):
    """ndtri(q) for float64 q in (0, 0.5]."""
    t = xp.sqrt(-2 * xp.log(q))
    x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t
                                                              + 0.001308 * t ** 3))
    log_q = xp.log(q)
    for _ in range(6):
        log_cdf = _log_ndtr64(x)
        x = x - (log_cdf - log_q) * _SQRT_2PI * xp.exp(x * x / 2 + log_cdf)
    return x


def _ndtri64(p):
    out = xp.full_like(p, xp.nan)
    out[p == 0], out[p == 1] = -xp.inf, xp.inf
    inside = (p > 0) & (p < 1)
    q = p[inside]
    upper = q > 0.5
    values = _ndtri_lower(xp.where(upper, 1 - q, q))
    out[inside] = xp.where(q == 0.5, 0.0, xp.where(upper, -values, values))
    return out


def _entr64(x):
    return xp.where(x > 0, -x * xp.log(xp.where(x > 0, x, 1)), xp.where(x == 0, 0.0, xp.where(x < 0, -xp.inf, x)))


# name -> (value, derivative) as functions of the float64 input (the derivative may read the value)
_FUNCTIONS = {
    "i0": (_i0_64, lambda x, y: _i1_64(x)),
    "i0e": (_i0e64, lambda x, y: _i1e64(x) - xp.sign(x) * y),
    # (0.5 at 0, and at nan, as PyTorch's)
    "i1": (_i1_64, lambda x, y: xp.where(~(xp.abs(x) > 0), 0.5, _i0_64(x) - y / xp.where(x == 0, 1, x))),
    "i1e": (_i1e64, lambda x, y: xp.where(~(xp.abs(x) > 0), 0.5,
                                          _i0e64(x) - y * (xp.sign(x) + 1 / xp.where(x == 0, 1, x)))),
    # (these two in the input's dtype from the result returned, as PyTorch's formulas: where x * x overflows
    # float32 the gradient is PyTorch's NaN, and 2 x erfcx(x) cancels 2 / sqrt(pi) to PyTorch's 0 at 1e30)
    "erfcx": (_erfcx64, lambda x, y: 2 * x * y - x.dtype.type(2 / math.sqrt(math.pi))),
    "log_ndtr": (_log_ndtr64, lambda x, y: xp.exp(-(y + x * x / 2)) / x.dtype.type(_SQRT_2PI)),
    "ndtri": (_ndtri64, lambda x, y: _SQRT_2PI * xp.exp(y * y / 2)),
    "entr": (_entr64, lambda x, y: -(1 + xp.log(x))),
}


_IN_DTYPE = ("erfcx", "log_ndtr")  # the derivatives computed in the input's dtype from the result returned


class _Special(Node):
    """A function of ``_FUNCTIONS``, in float64; the gradient is its derivative there (``_IN_DTYPE``'s: in the
    input's dtype, from the result returned)."""

    diagonal_jacobian = True
    function = ""

    def forward(self, x):
        self.saved = (x,)
        value, _ = _FUNCTIONS[self.function]
        with xp.errstate(all="ignore"):
            out = value(astype_result(x, xp.float64)).astype(x.dtype)
        if self.function in _IN_DTYPE:
            self.result = out
        return out

    def backward(self, g):
        x = self.saved[0]
        if is_recorded(x):  # create_graph: the derivative by ember's ops, recorded (differentiable again)
            return (g * RecordedArray(_recorded_derivative(self.function, x.t)),)
        value, derivative = _FUNCTIONS[self.function]
        with xp.errstate(all="ignore"):
            if self.function in _IN_DTYPE:
                return (g * derivative(x, self.result),)
            x64 = x.astype(xp.float64)
            return (g * derivative(x64, value(x64)).astype(x.dtype),)


def _recorded_derivative(function: str, t: Tensor) -> Tensor:
    """The derivative of ``function`` at the tensor ``t`` by ember's ops (``_FUNCTIONS``' formulas, recorded)."""
    from .indexing import where

    nonzero = t.abs() > 0
    safe = where(nonzero, t, 1.0)
    if function == "i0":
        return i1(t)
    if function == "i0e":
        return i1e(t) - t.sign() * i0e(t)
    if function == "i1":
        return where(nonzero, i0(t) - i1(t) / safe, 0.5)
    if function == "i1e":
        return where(nonzero, i0e(t) - i1e(t) * (t.sign() + 1 / safe), 0.5)
    if function == "erfcx":
        return 2 * t * erfcx(t) - 2 / math.sqrt(math.pi)
    if function == "log_ndtr":
        return (-t * t / 2 - log_ndtr(t)).exp() / _SQRT_2PI
    if function == "ndtri":
        return _SQRT_2PI * (ndtri(t) ** 2 / 2).exp()
    return -(1 + t.log())  # entr


def _special_node(function: str, torch_name: str) -> type[Node]:
    return type(torch_name, (_Special,), {"function": function, "__module__": __name__})


_NODES = {name: _special_node(name, node) for name, node in (
    ("i0", "I0Backward0"), ("i0e", "SpecialI0EBackward0"), ("i1", "SpecialI1Backward0"),
    ("i1e", "SpecialI1EBackward0"), ("erfcx", "SpecialErfcxBackward0"), ("log_ndtr", "SpecialLogNdtrBackward0"),
    ("ndtri", "SpecialNdtriBackward0"), ("entr", "SpecialEntrBackward0"))}


def _floating(x: Tensor) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"argument 'input' (position 1) must be Tensor, not {c_type_name(x)}")
    return x if is_inexact(x) else cast(x, _dtype.get_default_dtype())


def _refuse_complex(x: Tensor, name: str) -> None:
    if x.is_complex():
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dtype.SCALAR_TYPE_NAMES[x.dtype.name]}'")


def _special(function: str, kernel: str):
    node = _NODES[function]

    def op(input: Tensor) -> Tensor:
        x = _floating(input)
        _refuse_complex(x, kernel)
        return node.apply(x)

    op.__name__ = function
    return op


i0 = _special("i0", "i0_cpu")
i0e = _special("i0e", "i0e_cpu")
i1 = _special("i1", "i1_cpu")
i1e = _special("i1e", "i1e_cpu")
erfcx = _special("erfcx", "erfcx_cpu")
log_ndtr = _special("log_ndtr", "log_ndtr_cpu")
ndtri = _special("ndtri", "ndtri_cpu")
entr = _special("entr", "entr_cpu")
i0.__doc__ = "The modified Bessel function of the first kind of order 0, I0(x)."
i0e.__doc__ = "I0(x) exp(-|x|), the exponentially scaled I0 (finite where I0 overflows)."
i1.__doc__ = "The modified Bessel function of the first kind of order 1, I1(x)."
i1e.__doc__ = "I1(x) exp(-|x|), the exponentially scaled I1."
erfcx.__doc__ = "The scaled complementary error function exp(x^2) erfc(x)."
log_ndtr.__doc__ = "log of the standard normal CDF, accurate far into the lower tail (no underflow to -inf)."
ndtri.__doc__ = "The inverse of the standard normal CDF (-inf at 0, inf at 1, nan outside [0, 1])."
entr.__doc__ = "-x log(x) for x > 0, 0 at 0, -inf for x < 0 (elementwise entropy)."


class SincBackward0(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        px = x * x.dtype.type(math.pi)
        with xp.errstate(all="ignore"):
            return xp.where(x == 0, x.dtype.type(1), xp.sin(px) / px).astype(x.dtype)

    def backward(self, g):  # g * conj((pi x cos(pi x) - sin(pi x)) / (pi x^2)), 0 at 0 (holomorphic: conj)
        x = self.saved[0]
        px = x * math.pi
        safe = xp.where(x == 0, 1, x)
        with xp.errstate(all="ignore"):
            d = (px * xp.cos(px) - xp.sin(px)) / (math.pi * safe * safe)
        return (g * conj_if_complex(xp.where(x == 0, 0, d)),)


def sinc(input: Tensor) -> Tensor:
    """The normalised sinc, sin(pi x) / (pi x), and 1 at 0."""
    return SincBackward0.apply(_floating(input))


class _AngleScale(Node):
    diagonal_jacobian = True
    number_operand = True  # (PyTorch's deg2rad is x * (pi / 180), a product with a number)
    scale = 1.0

    def forward(self, x):
        return x * x.dtype.type(self.scale)

    def backward(self, g):
        return (g * self.scale,)


class Deg2RadBackward0(_AngleScale):
    scale = math.pi / 180


class Rad2DegBackward0(_AngleScale):
    scale = 180 / math.pi


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians, x pi / 180 (integer tensors give the default float dtype)."""
    if input.is_complex():  # (PyTorch's own words, not its kernels')
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return Deg2RadBackward0.apply(_floating(input))


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees, x 180 / pi (integer tensors give the default float dtype)."""
    if input.is_complex():
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return Rad2DegBackward0.apply(_floating(input))


def _as_rsub_overloads(fn: Callable) -> Callable:
    """``fn`` taking its arguments as PyTorch's two rsub overloads take them (``rsub_overloads_error``: a tensor
    ``other`` with ``alpha`` by keyword only, a number one with it by position too), refusing others in its words."""
    @functools.wraps(fn)
    def rsub(*args, **kwargs):
        if (error := rsub_overloads_error(args, kwargs)) is not None:
            raise error
        return fn(*args, **kwargs)

    return rsub


@_as_rsub_overloads
def rsub(input: Tensor, other, alpha=1) -> Tensor:
    """``other - alpha * input``: ``sub`` with its operands swapped (``other`` a tensor or a number; ``alpha`` by
    keyword only with a tensor ``other``, as PyTorch's overloads)."""
    from .elementwise import rsub as _rsub

    return _rsub(input, other, alpha=alpha)


@torch_named("RenormBackward0")
class Renorm(Node):
    """Each slice along ``dim`` scaled by maxnorm / (norm + 1e-7) where its p-norm exceeds maxnorm; PyTorch's
    gradient (renorm_backward), which flows through the norms too."""

    float32_compute = True
    rerun_for_higher_order = True  # backward reads the norms, which depend on the input

    def forward(self, x, p, axes, maxnorm):
        norm = vector_norm_array(x, p, axes, True)
        factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1)
        if not is_recorded(factor):
            factor = factor.astype(norm.dtype, copy=False)  # (a Python 1 and maxnorm would widen float32)
        self.saved, self.norm, self.p, self.axes, self.maxnorm = (x,), norm, p, axes, maxnorm
        return x * factor

    def backward(self, g):
        x, norm = self.saved[0], self.norm
        along = xp.real(conj_if_complex(x) * g).sum(axis=self.axes, keepdims=True)
        nb = vector_norm_backward(along, x, norm, self.p, self.axes, True)
        inv = 1 / (norm + 1e-7)
        factor = inv * self.maxnorm
        return (xp.where(norm > self.maxnorm, factor * g - (factor * inv) * nb, g),)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice ``input.select(dim, i)`` whose p-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm``
    (by maxnorm / (norm + 1e-7), as PyTorch); the others unchanged. The gradient flows through the norms too."""
    if not isinstance(input, Tensor):
        raise TypeError(f"renorm(): argument 'input' (position 1) must be Tensor, not {c_type_name(input)}")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (got p={p})")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    d = dim + input.dim() if dim < 0 else dim
    axes = tuple(i for i in range(input.dim()) if i != d)
    return Renorm.apply(input, p=float(p), axes=axes, maxnorm=maxnorm)

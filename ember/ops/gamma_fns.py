"""The gamma family: lgamma, digamma, polygamma (psi^(n), any order n >= 0), xlogy, mvlgamma, the regularized
incomplete gamma functions igamma / igammac (P and Q, series and continued fraction: see igamma).

NumPy has none of them. Each is computed in float64 as a vectorised series: small arguments
are shifted up by the recurrences (Gamma(x+1) = x Gamma(x), psi(x+1) = psi(x) + 1/x, ...)
until x >= 10 (10 + n for psi^(n)), where the asymptotic (Stirling) series to its seventh term is
accurate to a few float64 ulps (to the fifth, its truncation was 2e-14: digamma(1) 88 ulps from -gamma);
negative arguments go through the reflection formulas. The result is cast back to the input's dtype.
Each member's derivative is the next one (lgamma' = digamma = psi^(0), psi^(n)' = psi^(n+1)), computed under
create_graph by the ember op, so gradients of any order are recorded.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._backend import xp
from .._memory_format import empty_result
from .._meta import iterator_layout, kept_layout
from .._size import int_argument
from .._tensor import Tensor
from ..autograd.graph import Node, show_node_as, torch_named
from ..autograd.recorded import RecordedArray, is_recorded, value_of
from ..autograd.saved_attributes import saved_tensor
from .elementwise import _float_operands, cast, is_inexact, refuse_complex

_SHIFT_TO = 10.0


def _shift(x, term, to: float = _SHIFT_TO):
    """(x shifted up to >= ``to``, the sum of ``term(x + k)`` over the shifts), elementwise."""
    steps = xp.clip(xp.ceil(to - x), 0, None)
    total = xp.zeros_like(x)
    shifted = x.copy()
    for _ in range(int(xp.nanmax(steps, initial=0))):  # (nan: no shift)
        active = shifted < to
        total = total + xp.where(active, term(shifted), 0)
        shifted = xp.where(active, shifted + 1, shifted)
    return shifted, total


def _lgamma64(x):
    """log|Gamma(x)|."""
    neg = x < 0.5
    z = xp.where(neg, 1 - x, x)  # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
    z, logs = _shift(z, lambda t: xp.log(t))
    r = 1 / (z * z)
    series = (1 / 12 - r * (1 / 360 - r * (1 / 1260 - r * (1 / 1680 - r * (1 / 1188 - r * (691 / 360360
                                                                                - r / 156)))))) / z
    out = (z - 0.5) * xp.log(z) - z + 0.5 * math.log(2 * math.pi) + series - logs
    with xp.errstate(divide="ignore", invalid="ignore"):
        reflected = math.log(math.pi) - xp.log(xp.abs(xp.sin(math.pi * x))) - out
    out = xp.where(neg, reflected, out)
    out = xp.where((x == 1) | (x == 2), 0.0, out)  # exact zeros (the shifted sum leaves ~1e-14)
    out = xp.where(x == xp.inf, xp.inf, out)  # (the series' inf - inf)
    return xp.where((x <= 0) & (x == xp.floor(x)), xp.inf, out)  # poles at 0, -1, -2, ...


def _digamma64(x):
    neg = x < 0.5
    z = xp.where(neg, 1 - x, x)  # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
    z, inv = _shift(z, lambda t: 1 / t)
    r = 1 / (z * z)
    series = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132 - r * (691 / 32760 - r / 12))))))
    out = xp.log(z) - 0.5 / z - series - inv
    with xp.errstate(divide="ignore", invalid="ignore"):
        out = xp.where(neg, out - math.pi / xp.tan(math.pi * x), out)
    out = xp.where((x < 0) & (x == xp.floor(x)), xp.nan, out)
    # PyTorch: -inf at +0, +inf at -0 (the pole's sides), nan at the negative integers
    return xp.where(x == 0, xp.copysign(xp.inf, -x), out)


def _trigamma64(x):
    neg = x < 0.5
    z = xp.where(neg, 1 - x, x)  # reflection: psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
    z, inv2 = _shift(z, lambda t: 1 / (t * t))
    r = 1 / (z * z)
    series = r / z * (1 / 6 - r * (1 / 30 - r * (1 / 42 - r * (1 / 30 - r * (5 / 66 - r * (691 / 2730 - r * 7 / 6))))))
    out = 1 / z + r / 2 + series + inv2
    with xp.errstate(divide="ignore", invalid="ignore"):
        return xp.where(neg, (math.pi / xp.sin(math.pi * x)) ** 2 - out, out)


# Bernoulli numbers B_2, B_4, ..., B_16 (the asymptotic series of psi^(n))
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _polygamma64(n: int, x):
    """psi^(n)(x) for n >= 2: (-1)^(n+1) n! sum_k (x + k)^-(n+1), by the shift to z >= 10 + n and the asymptotic
    series there; x < 0.5 by the reflection psi^(n)(x) = (-1)^n psi^(n)(1 - x) - pi d^n/dx^n cot(pi x)."""
    neg = x < 0.5
    z = xp.where(neg, 1 - x, x)
    z, tail = _shift(z, lambda t: t ** -(n + 1.0), 10.0 + n)
    series = math.factorial(n - 1) / z ** n + math.factorial(n) / (2 * z ** (n + 1))
    for k, b in enumerate(_BERNOULLI, start=1):
        series = series + b * (math.factorial(2 * k + n - 1) / math.factorial(2 * k)) / z ** (2 * k + n)
    out = (-1) ** (n + 1) * (series + math.factorial(n) * tail)
    # d^n/dx^n cot(pi x) = pi^n Q_n(cot(pi x)), Q_0(c) = c, Q_(k+1)(c) = -(1 + c^2) Q_k'(c)
    q = xp.array([0.0, 1.0])
    for _ in range(n):
        q = -xp.polynomial.polynomial.polymul([1.0, 0.0, 1.0], xp.polynomial.polynomial.polyder(q))
    with xp.errstate(divide="ignore", invalid="ignore"):
        cot = 1 / xp.tan(math.pi * x)
        reflected = (-1) ** n * out - math.pi ** (n + 1) * xp.polynomial.polynomial.polyval(cot, q)
    out = xp.where(neg, reflected, out)
    return xp.where((x <= 0) & (x == xp.floor(x)), (-1) ** (n + 1) * xp.inf, out)  # the poles


def _family64(n: int, x):
    """psi^(n)(x) in float64; n = -1: lgamma."""
    if n == -1:
        return _lgamma64(x)
    return _digamma64(x) if n == 0 else _trigamma64(x) if n == 1 else _polygamma64(n, x)


class _GammaFamily(Node):
    """psi^(n)(x) (n = -1: lgamma), computed in float64; its derivative is psi^(n+1)(x)."""

    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x, n):
        self.saved, self.n = (x,), n
        return kept_layout(_family64(n, x.astype(xp.float64)).astype(x.dtype), x)  # (the input's, as PyTorch's)

    def backward(self, g):
        x = self.saved[0]
        if is_recorded(x):  # create_graph: the derivative by the ember op, recorded (and differentiable again)
            return (g * RecordedArray(polygamma(self.n + 1, x.t)),)
        return (g * _family64(self.n + 1, x.astype(xp.float64)).astype(x.dtype),)


class Lgamma(_GammaFamily):
    pass


class Digamma(_GammaFamily):
    pass


class Polygamma(_GammaFamily):
    _saved_n = property(lambda node: node.n)


def _family(cls, n: int, x: Tensor, kernel: str | None = None) -> Tensor:
    if kernel is not None and x.is_complex():  # (PyTorch's kernel has no complex version)
        raise _dtype.not_implemented_for(kernel, x.dtype)
    if not is_inexact(x):
        x = cast(x, _dtype.get_default_dtype())
    return cls.apply(x, n=n)


def lgamma(input: Tensor) -> Tensor:
    """log|Gamma(x)| (inf at the poles 0, -1, -2, ...)."""
    return _family(Lgamma, -1, input, "lgamma_vml_cpu")


def digamma(input: Tensor) -> Tensor:
    """psi(x) = d/dx lgamma(x) (-inf at 0, nan at the negative integers, as PyTorch)."""
    return _family(Digamma, 0, input, "digamma")


def polygamma(n: int, input: Tensor) -> Tensor:
    """psi^(n)(x), the n-th derivative of digamma (n >= 0: an int, or a 0-d integer tensor; a float or a bool is
    PyTorch's TypeError)."""
    n = polygamma_order(n, "polygamma")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    # (PyTorch's kernels' names; n = 0 computes digamma, in PyTorch's PolygammaBackward0 node all the same)
    return _family(Polygamma, n, input, ("digamma", "trigamma")[n] if n < 2 else "polygamma")


def polygamma_order(n, op: str) -> int:
    """``n`` of ``op`` (polygamma, polygamma_, special_polygamma) as PyTorch's parser reads it: its first
    argument, an int."""
    return int_argument(n, op, "n", position=1)


def xlogy(input, other) -> Tensor:
    """input * log(other), and 0 where input is 0 (even where other is 0 or inf); nan stays nan."""
    return _x_times(input, other, log1p=False)


def xlog1py(input, other) -> Tensor:
    """input * log1p(other), and 0 where input is 0 (even where other is -1 or inf); nan stays nan."""
    return _x_times(input, other, log1p=True)


@torch_named("XlogyBackward0")
class XLogY(Node):
    """``x * log(y)`` (``log1p``: ``x * log1p(y)``), 0 where x is 0 and y is not nan. PyTorch's derivatives:
    d/dx = xlogy(g, y), 0 where x == 0 and y <= 0 (y <= -1 for log1p); d/dy = g * x / y (/ (y + 1))."""
    diagonal_jacobian = True
    saved_for = ((0, 1), (0, 1))
    log1p = False

    def forward(self, x, y):
        self.saved = (x, y)
        # laid out by both operands' layouts, as PyTorch's (an expanded operand's broadcast axis orders nothing)
        out = empty_result(x, y, dtype=xp.result_type(x, y))
        (xp.log1p if self.log1p else xp.log)(y, out=out)
        xp.multiply(x, out, out=out)
        xp.copyto(out, 0, where=(x == 0) & ~xp.isnan(y))
        return out

    def backward(self, g):
        x, y = self.saved
        nx, ny = self.needs_input_grad
        gx = gy = None
        if nx:
            gx = xp.where((g == 0) & ~xp.isnan(y), 0, g * (xp.log1p(y) if self.log1p else xp.log(y)))
            gx = xp.where((x == 0) & (y <= (-1 if self.log1p else 0)), 0, gx)
        if ny:
            gy = g * x / (y + 1 if self.log1p else y)
        return gx, gy


@torch_named("SpecialXlog1PyBackward0")
class XLog1PY(XLogY):
    log1p = True


def _x_times(input, other, log1p: bool) -> Tensor:
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        got = ", ".join(type(t).__name__ for t in (input, other))
        raise TypeError(f"{'xlog1py' if log1p else 'xlogy'}() received an invalid combination of arguments - got "
                        f"({got}), but expected one of: (Tensor input, Tensor other), (Number self, Tensor other), "
                        "(Tensor self, Number other)")
    input, other = _float_operands(input, other)
    refuse_complex(input if isinstance(input, Tensor) else other, "xlog1py_cpu" if log1p else "xlogy_cpu")
    # a number takes the tensor's (floating, promoted) dtype, as PyTorch's wrapped numbers do (beyond a half
    # dtype's range it is inf there, silently: no NumPy overflow warning)
    dtype = (input if isinstance(input, Tensor) else other)._data.dtype
    with xp.errstate(over="ignore"):
        input, other = (t if isinstance(t, Tensor) else Tensor._make(xp.asarray(t, dtype=dtype))
                        for t in (input, other))
    return (XLog1PY if log1p else XLogY).apply(input, other)


def check_mvlgamma(input: Tensor, p: int, op: str = "mvlgamma", position: int | None = None) -> int:
    """PyTorch's checks of mvlgamma's arguments (after autograd's refusal of out=, before out's dtype): ``p`` an
    int (a float or bool its TypeError, naming ``op`` and the ``position``), the input no bool tensor, then p >= 1;
    ``p`` as an int."""
    p = int_argument(p, op, "p", position=position)
    if isinstance(input, Tensor) and input.dtype == _dtype.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return p


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma of dimension p: sum_{i<p} lgamma(x - i/2) + p(p-1)/4 log(pi), of an integer
    tensor in the default float dtype. As PyTorch's (since it dropped its domain check), elements at or below
    (p - 1) / 2 give the formula's value (inf at a pole of lgamma), not an error."""
    from .shape import unsqueeze

    p = check_mvlgamma(input, p)
    if input.is_complex():  # (PyTorch's composite makes its offsets with arange in the input's dtype: refused)
        raise _dtype.not_implemented_for("arange_cpu", input.dtype)
    if not is_inexact(input):
        input = cast(input, _dtype.get_default_dtype())
    offsets = Tensor._make(-xp.arange(p, dtype=input._data.dtype) / 2)
    return lgamma(unsqueeze(input, -1) + offsets).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


def mvlgamma_(input: Tensor, p: int) -> Tensor:
    """``input.mvlgamma_(p)``: mvlgamma written into ``input``, a floating tensor (an integer one is PyTorch's
    error, which names the cast the other way round: "mvlgamma: result type Long can't be cast to the desired
    output type Float"; a bool one its refusal of a bool input)."""
    from .inplace import pointwise_

    p = check_mvlgamma(input, p, "mvlgamma_", 1)
    if not is_inexact(input):
        raise RuntimeError(f"mvlgamma: result type {_dtype.SCALAR_TYPE_NAMES[input.dtype.name]} can't be cast to "
                           f"the desired output type {_dtype.SCALAR_TYPE_NAMES[_dtype.get_default_dtype().name]}")
    return pointwise_(input, lambda t: mvlgamma(t, p))


def polygamma_(input: Tensor, n: int) -> Tensor:
    """``input.polygamma_(n)``: polygamma written into ``input`` (a float result into an integer one: PyTorch's
    cast error)."""
    from .inplace import pointwise_

    n = polygamma_order(n, "polygamma_")
    return pointwise_(input, lambda t: polygamma(n, t))


_IGAM_EPS = 1e-16
_IGAM_BIG = 4.503599627370496e15
# log Gamma to about one ulp (the C library's): the incomplete gamma's prefactor x^a e^-x / Gamma(a) takes the
# difference of terms near a log a, where _lgamma64's ~1e-14 relative error would cost 1e-9 at a ~ 1e4
_lgamma_exact = xp.frompyfunc(math.lgamma, 1, 1)


def _lgamma_precise(a):
    return _lgamma_exact(a).astype(xp.float64) if a.size else a


def _igam_series(a, x):
    """P(a, x) by its power series (x <= max(1, a)): x^a e^-x / Gamma(a + 1) * sum x^n / ((a+1)...(a+n))."""
    r, c, total = a.copy(), xp.ones_like(a), xp.ones_like(a)
    active = xp.ones(a.shape, dtype=bool)
    for _ in range(100000):
        if not active.any():
            break
        r = xp.where(active, r + 1, r)
        c = xp.where(active, c * x / r, c)
        total = xp.where(active, total + c, total)
        active &= c > _IGAM_EPS * total
    with xp.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        return total * xp.exp(a * xp.log(x) - x - _lgamma_precise(a + 1))


def _igamc_fraction(a, x):
    """Q(a, x) by its continued fraction (x > max(1, a)), as Cephes' igamc."""
    y = 1 - a
    z = x + y + 1
    c = xp.zeros_like(a)
    pkm2, qkm2, pkm1, qkm1 = xp.ones_like(a), x.copy(), x + 1, z * x
    ans = pkm1 / qkm1
    active = xp.ones(a.shape, dtype=bool)
    with xp.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        for _ in range(100000):
            if not active.any():
                break
            c, y, z = c + 1, y + 1, z + 2
            yc = y * c
            pk, qk = pkm1 * z - pkm2 * yc, qkm1 * z - qkm2 * yc
            ok = qk != 0
            r = xp.where(ok, pk / xp.where(ok, qk, 1), ans)
            t = xp.where(ok, xp.abs((ans - r) / r), 1.0)
            ans = xp.where(active, r, ans)
            pkm2, pkm1 = xp.where(active, pkm1, pkm2), xp.where(active, pk, pkm1)
            qkm2, qkm1 = xp.where(active, qkm1, qkm2), xp.where(active, qk, qkm1)
            big = active & (xp.abs(pk) > _IGAM_BIG)
            scale = xp.where(big, 1 / _IGAM_BIG, 1.0)
            pkm2, pkm1, qkm2, qkm1 = pkm2 * scale, pkm1 * scale, qkm2 * scale, qkm1 * scale
            active &= ~(t <= _IGAM_EPS)
        return ans * xp.exp(a * xp.log(x) - x - _lgamma_precise(a))


def _igamma64(a, x, upper: bool):
    """The regularized lower (P) or upper (Q = 1 - P) incomplete gamma function of float64 arrays, PyTorch's edge
    values: nan for a < 0, x < 0, a nan operand or a = x = 0; a = 0 gives P = 1; x = inf gives P = 1; a = inf
    (x finite) gives P = 0."""
    a, x = xp.broadcast_arrays(a, x)
    a, x = a.astype(xp.float64), x.astype(xp.float64)
    finite = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    safe_a, safe_x = xp.where(finite, a, 1.0), xp.where(finite, x, 1.0)
    by_fraction = (safe_x > 1) & (safe_x > safe_a)
    p = xp.ones_like(safe_a)
    q = xp.ones_like(safe_a)
    if (finite & ~by_fraction).any():
        s = ~by_fraction & finite
        p_series = _igam_series(safe_a[s], safe_x[s])
        p[s], q[s] = p_series, 1 - p_series
    if (finite & by_fraction).any():
        f = by_fraction & finite
        q_fraction = _igamc_fraction(safe_a[f], safe_x[f])
        q[f], p[f] = q_fraction, 1 - q_fraction
    lower = xp.where(finite, p, xp.nan)
    lower = xp.where((a == 0) & (x > 0), 1.0, lower)
    lower = xp.where((x == 0) & (a > 0), 0.0, lower)
    lower = xp.where(xp.isposinf(x) & (a >= 0) & ~xp.isposinf(a), 1.0, lower)
    lower = xp.where(xp.isposinf(a) & (x >= 0) & ~xp.isposinf(x), 0.0, lower)
    if not upper:
        return lower
    upper_q = xp.where(finite, q, 1 - lower)
    return xp.where(xp.isnan(lower), xp.nan, upper_q)


class Igamma(Node):
    """P(a, x) (``upper``: Q(a, x) = 1 - P), computed in float64; the gradient with respect to x is PyTorch's
    x^(a-1) e^-x / Gamma(a) (negated for Q); with respect to a, as PyTorch's, it is not implemented."""

    def name(self) -> str:
        return "IgammacBackward0" if self.upper else "IgammaBackward0"

    def forward(self, a, x, upper):
        self.saved, self.upper = (a, x), upper
        show_node_as(self, self.name())  # (its type too reads as PyTorch's: type(y.grad_fn).__name__)
        return iterator_layout(xp.asarray(_igamma64(a, x, upper)).astype(xp.result_type(a, x)), (a, x))

    def backward(self, g):
        a, x = self.saved
        if self.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{'igammac' if self.upper else 'igamma'}: input' is not "
                                      "implemented.")
        a_ = xp.asarray(value_of(a), dtype=xp.float64)  # (no gradient flows to a: a constant of the formula)
        log_gamma = _lgamma_precise(xp.ravel(a_)).reshape(a_.shape).astype(a.dtype)
        with xp.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            density = xp.exp((a_.astype(a.dtype) - 1) * xp.log(x) - x - log_gamma)
        return None, (-g * density if self.upper else g * density)


def _igamma(input: Tensor, other: Tensor, upper: bool) -> Tensor:
    from .elementwise import promote, require_tensor

    require_tensor("igammac" if upper else "igamma", other)  # (PyTorch's signature: tensors only, no number)
    a, x = promote(input, other)
    if not a.is_floating_point():
        raise _dtype.not_implemented_for("igammac_cpu" if upper else "igamma_cpu", a.dtype)
    return Igamma.apply(a, x, upper=upper)


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other) (``torch.special.gammainc``), computed in
    float64 (series below max(1, a), continued fraction above) and returned in the operands' promoted dtype.
    Differentiable in ``other`` only, as PyTorch's."""
    return _igamma(input, other, False)


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P (``torch.special.gammaincc``)."""
    return _igamma(input, other, True)

"""The orthogonal polynomials of ``torch.special``: Chebyshev T, U, V, W (and their shifted forms on [0, 1]),
Hermite H (physicists') and He (probabilists'), Laguerre L and Legendre P, each ``f(input, n)``.

Evaluated as PyTorch's CPU kernels evaluate them, elementwise in the operands' promoted dtype (float32 stays
float32, so a large degree overflows where PyTorch's does): ``n`` truncated to an integer, 0 for a negative one;
the values at x = +-1 (and x = 0 for Laguerre) exactly; for Chebyshev polynomials of a high degree inside (-1, 1)
the trigonometric closed forms (T_n(x) = cos(n acos x), ...); otherwise the three-term recurrence, run here for
every element at once up to the largest degree. Not differentiable (PyTorch's results do not require grad).
"""

from __future__ import annotations

from .. import _dtype
from .._backend import quiet, xp
from .._dtype import np_kind
from .._size import c_type_name
from .._tensor import Tensor
from .elementwise import promote


def _recurrence(x, n, first, step, out, todo) -> None:
    """``out[todo]`` = P_n(x) for the elements ``todo`` (n >= 2): P_0 = 1, P_1 = ``first(x)``, and
    P_{k+1} = ``step(x, k, P_k, P_{k-1})``."""
    x, n = x[todo], n[todo]
    p, q = xp.ones_like(x), first(x)
    for k in range(1, int(n.max()) if n.size else 0):
        r = step(x, k, q, p)
        p, q = q, r
        done = n == k + 1
        if done.any():
            out[todo[done]] = r[done]


def _rounded(fn):
    """``fn`` (a NumPy trigonometric function) correctly rounded to its argument's dtype, as the C library's float
    functions PyTorch's kernel calls are (NumPy's own float32 versions may differ by an ulp, which a degree of 200
    amplifies): computed in float64 and rounded."""
    return lambda a: fn(a.astype(xp.float64)).astype(a.dtype)


_acos, _cos, _sin = _rounded(xp.arccos), _rounded(xp.cos), _rounded(xp.sin)


def _chebyshev_trig(kind: str):
    """The closed form of a Chebyshev polynomial of high degree inside (-1, 1), with its value where the form's
    denominator vanishes (as PyTorch's kernel)."""

    def closed(x, n):
        t = _acos(x)
        if kind == "t":
            return _cos(n * t)
        if kind == "u":
            s = _sin(t)
            return xp.where(s != 0, _sin((n + 1) * t) / xp.where(s != 0, s, 1), (n + 1) * _cos((n + 1) * t) / x)
        half = t / 2
        if kind == "v":
            odd = xp.where(n % 2 == 0, n + n + 1, -(n + n + 1))
            return xp.where(_sin(half) != 1, _cos((n + 0.5) * t) / _cos(half), odd)
        edge = xp.where(x > 0, n + n + 1, xp.where(n % 2 == 0, 1, -1))
        return xp.where(_cos(half) != 1, _sin((n + 0.5) * t) / xp.where(_sin(half) != 0, _sin(half), 1), edge)

    return closed


def _at_ends(kind: str, x, n):
    """A Chebyshev (or Legendre: as T) polynomial's exact value at x = +-1."""
    even = n % 2 == 0
    if kind in ("t", "p"):
        return xp.where((x > 0) | even, 1, -1)
    if kind == "u":
        return xp.where((x > 0) | even, n + 1, -(n + 1))
    if kind == "v":
        return xp.where(x > 0, 1, xp.where(even, n + n + 1, -(n + n + 1)))
    return xp.where(x > 0, n + n + 1, xp.where(even, 1, -1))  # w


# Each polynomial: P_1 and the step from (P_k, P_{k-1}) to P_{k+1}, written as PyTorch's kernel orders the operations
_FIRST = {"t": lambda x: x, "u": lambda x: x + x, "v": lambda x: x + x - 1, "w": lambda x: x + x + 1,
          "h": lambda x: x + x, "he": lambda x: x, "l": lambda x: 1 - x, "p": lambda x: x}
_STEP = {
    "t": lambda x, k, q, p: (x + x) * q - p, "u": lambda x, k, q, p: (x + x) * q - p,
    "v": lambda x, k, q, p: (x + x) * q - p, "w": lambda x, k, q, p: (x + x) * q - p,
    "h": lambda x, k, q, p: (x + x) * q - (2 * k) * p,
    "he": lambda x, k, q, p: x * q - k * p,
    "l": lambda x, k, q, p: (((k + k) + (1 - x)) * q - k * p) / (k + 1),
    "p": lambda x, k, q, p: ((k + k + 1) * x * q - k * p) / (k + 1),
}
_TRIG_FROM = {"t": 6, "u": 8, "v": 8, "w": 8}  # the degrees above which the closed form is used inside (-1, 1)


def _evaluate(kind: str, x, n):
    """P_n(x) for arrays ``x`` (floating) and ``n`` (int64), broadcast together, in x's dtype."""
    x, n = xp.broadcast_arrays(x, n)
    x, n = x.ravel(), n.ravel()
    out = xp.ones_like(x)
    one = xp.ones((), x.dtype)
    with quiet():
        todo = n >= 2
        if kind in _TRIG_FROM or kind == "p":
            ends = xp.abs(x) == one
            out[ends] = _at_ends(kind, x[ends], n[ends])
            todo &= ~ends
        if kind in _TRIG_FROM:
            trig = todo & (n > _TRIG_FROM[kind]) & (xp.abs(x) < one)
            out[trig] = _chebyshev_trig(kind)(x[trig], n[trig].astype(x.dtype))
            todo &= ~trig
        if kind == "l":
            todo &= x != 0
        single = (n == 1) & ~((xp.abs(x) == one) if kind in _TRIG_FROM or kind == "p" else (x == 0) if kind == "l"
                              else xp.zeros_like(todo))
        out[single] = _FIRST[kind](x[single])
        _recurrence(x, n, _FIRST[kind], _STEP[kind], out, xp.flatnonzero(todo))
        out[n < 0] = 0
    return out


def _polynomial(name: str, kind: str, shifted: bool = False):
    def polynomial(x, n) -> Tensor:  # (PyTorch's names: special.legendre_polynomial_p(x=t, n=3))
        if not isinstance(x, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                            f"({c_type_name(x)}, {c_type_name(n)}), but expected one of:\n"
                            " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                            " * (Number x, Tensor n, *, Tensor out = None)\n"
                            " * (Tensor x, Number n, *, Tensor out = None)\n")
        promoted = promote(x, n)
        dtype = next(v for v in promoted if isinstance(v, Tensor)).dtype
        if np_kind(dtype.np) in "iub":
            dtype = _dtype.get_default_dtype()
        elif dtype.itemsize == 2 or np_kind(dtype.np) == "c":
            raise _dtype.not_implemented_for(f"{name}_cpu", dtype)
        x, k = ((v._data if isinstance(v, Tensor) else xp.asarray(v)).astype(dtype.np) for v in (x, n))
        k = xp.trunc(k).astype(xp.int64) if np_kind(k.dtype) == "f" else k.astype(xp.int64)
        if shifted:  # P*_n(x) = P_n(2x - 1), the argument rounded as PyTorch's kernel rounds it
            x = x + x - 1
        shape = xp.broadcast_shapes(x.shape, k.shape)
        return Tensor._make(_evaluate(kind, x, k).reshape(shape))

    polynomial.__name__ = polynomial.__qualname__ = name
    return polynomial


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", "t")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", "u")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", "v")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", "w")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", "t", shifted=True)
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", "u", shifted=True)
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", "v", shifted=True)
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", "w", shifted=True)
hermite_polynomial_h = _polynomial("hermite_polynomial_h", "h")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", "he")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "l")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "p")

"""Activation ops with fused backward formulas: softmax, log_softmax (and friends)."""

from __future__ import annotations

from .. import _dtype
from .._backend import xp
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import Node
from .elementwise import cast


def _new(a):
    """An uninitialised array like ``a`` for a ufunc's ``out=`` (without it, 0-d results come back as scalars,
    which cannot be written into)."""
    return xp.empty_like(a)


def row_sums(a, dim):
    """a.sum(dim, keepdims=True); over the last axis of a C-contiguous array as one matrix-vector product
    (BLAS), several times faster than NumPy's reduction over short rows."""
    n = a.shape[dim] if a.ndim else 1
    if a.ndim and dim == a.ndim - 1 and a.size and a.flags.c_contiguous:
        return (a.reshape(-1, n) @ xp.ones(n, dtype=a.dtype)).reshape(a.shape[:-1] + (1,))
    return xp.sum(a, axis=dim, keepdims=True)


# The smallest row sum of exp(x - global max) for which the global shift is exact to float rounding: then
# every exp(x - max) that matters is a normal number, and those that underflow are below 2**16 * tiny.
_MIN_ROW_SUM = 2.0 ** -16


def _exp_shifted(x, dim, keep_shifted=False):
    """(d, e, s): d = x - c, e = exp(d) (the same array as d unless ``keep_shifted``) and s = e's sums along
    dim, for a shift c that makes the largest exponent 0 in each row, so nothing overflows. Shifting every row
    by the global max is one fast reduction instead of a per-row one; it is used when no row's sum comes out
    small (then it equals the per-row result to rounding), and the per-row max otherwise (rows of very
    different scale, -inf rows, inf or nan; half precision, whose range is too narrow)."""
    if not x.size:  # nothing to shift (and max has no identity)
        shifts = (x.dtype.type(0),)
    else:
        shifts = ((xp.max(x),) if x.dtype.itemsize >= 4 else ()) + (None,)
    for shift in shifts:
        if shift is None:
            shift = xp.max(x, axis=dim, keepdims=True)
        d = xp.subtract(x, shift, out=_new(x))
        e = xp.exp(d, out=_new(d) if keep_shifted else d)
        s = row_sums(e, dim)
        if not s.size or s.min() >= _MIN_ROW_SUM:
            break
    return d, e, s


# Forward and backward write into the arrays they allocate (in-place ufuncs): softmax runs on attention
# scores, where a temporary per operation costs as much as the arithmetic.
class Softmax(Node):
    def forward(self, x, dim):
        _, e, s = _exp_shifted(x, dim)
        e /= s
        self.saved, self.dim = (e,), dim
        return e

    def backward(self, g):  # dx = y * (g - sum(g * y))
        (y,) = self.saved
        dx = xp.multiply(g, y, out=_new(y))
        dot = row_sums(dx, self.dim)
        xp.subtract(g, dot, out=dx)
        dx *= y
        return (dx,)


class LogSoftmax(Node):
    def forward(self, x, dim):
        out, _, s = _exp_shifted(x, dim, keep_shifted=True)
        out -= xp.log(s)  # log softmax = (x - c) - log(sum exp(x - c))
        self.saved, self.dim = (out,), dim
        return out

    def backward(self, g):  # dx = g - softmax * sum(g)
        (out,) = self.saved
        dx = xp.exp(out, out=_new(out))
        dx *= row_sums(g, self.dim)
        xp.subtract(g, dx, out=dx)
        return (dx,)


def _softmax_input(x: Tensor, dim, dtype):
    if dtype is not None:
        x = cast(x, dtype if isinstance(dtype, _dtype.dtype) else _dtype.from_np(_dtype.to_np(dtype)))
    if not x.is_floating_point():
        raise RuntimeError(f"softmax expects a floating point tensor, got {x.dtype}")
    if dim is None:  # PyTorch's legacy implicit dim
        dim = 0 if x._data.ndim in (0, 1, 3) else 1
    return x, _wrap_dim(dim, x._data.ndim)


def softmax(x: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    x, d = _softmax_input(x, dim, dtype)
    return Softmax.apply(x, dim=d)


def log_softmax(x: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    x, d = _softmax_input(x, dim, dtype)
    return LogSoftmax.apply(x, dim=d)

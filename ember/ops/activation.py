"""Activation ops with fused backward formulas: softmax, log_softmax (and friends)."""

from __future__ import annotations

from .. import _dtype
from .._backend import xp
from .._parallel import parallel_for, parallel_rows
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


def row_split(a, dim):
    """``a`` as a (rows, n) view when ``dim`` is the last axis of a non-empty C-contiguous array:
    the elementwise steps of a row-wise kernel are then split along rows among the intra-op threads. None
    otherwise (those steps run whole, on the calling thread)."""
    if a.size and dim == a.ndim - 1 and a.flags.c_contiguous:
        return a.reshape(-1, a.shape[-1])
    return None


def by_rows(fn, *arrays, split: bool) -> None:
    """``fn(*arrays)``, split along rows among the intra-op threads when ``split`` (every array then has the
    same number of rows, or is None). Each chunk's rows are computed as they would be whole, so the bits do
    not depend on the thread count; sums across a row (``row_sums``, BLAS) stay outside, on whole arrays."""
    if split:
        parallel_rows(fn, *arrays)
    else:
        fn(*arrays)


# The smallest row sum of exp(x - global max) for which the global shift is exact to float rounding: then
# every exp(x - max) that matters is a normal number, and those that underflow are below 2**16 * tiny.
_MIN_ROW_SUM = 2.0 ** -16


def _global_max(x, split: bool):
    """x's largest element (nan if any): the max of each thread's rows' max, which is exact."""
    if not split:
        return xp.max(x)
    parts: list = []
    parallel_for(lambda a, b: parts.append(xp.max(x[a:b])), x.shape[0], x.size)
    return xp.max(xp.array(parts, dtype=x.dtype))


def _exp_shifted(x, dim, keep_shifted=False):
    """(d, e, s): d = x - c, e = exp(d) (the same array as d unless ``keep_shifted``) and s = e's sums along
    dim, for a shift c that makes the largest exponent 0 in each row, so nothing overflows. Shifting every row
    by the global max is one fast reduction instead of a per-row one; it is used when no row's sum comes out
    small (then it equals the per-row result to rounding), and the per-row max otherwise (rows of very
    different scale, -inf rows, inf or nan; half precision, whose range is too narrow)."""
    rows = row_split(x, dim)
    split = rows is not None
    xs = rows if split else x
    if not x.size:  # nothing to shift (and max has no identity)
        shifts = (x.dtype.type(0),)
    else:
        shifts = ((_global_max(xs, split),) if x.dtype.itemsize >= 4 else ()) + (None,)
    for shift in shifts:
        d = _new(x)
        e = _new(d) if keep_shifted else d
        ds, es = (d.reshape(xs.shape), e.reshape(xs.shape)) if split else (d, e)
        if shift is None and split:  # each row's own max, computed in its chunk
            by_rows(_sub_row_max_exp, xs, xp.empty((xs.shape[0], 1), x.dtype), ds, es, split=True)
        else:
            if shift is None:
                shift = xp.max(x, axis=dim, keepdims=True)
            by_rows(lambda xa, da, ea, c=shift: _sub_exp(xa, c, da, ea), xs, ds, es, split=split)
        s = row_sums(e, dim)
        if not s.size or s.min() >= _MIN_ROW_SUM:
            break
    return d, e, s


def _sub_exp(x, c, d, e) -> None:
    xp.subtract(x, c, out=d)
    xp.exp(d, out=e)


def _sub_row_max_exp(x, m, d, e) -> None:
    xp.max(x, axis=-1, keepdims=True, out=m)
    _sub_exp(x, m, d, e)


# Forward and backward write into the arrays they allocate (in-place ufuncs): softmax runs on attention
# scores, where a temporary per operation costs as much as the arithmetic. The elementwise steps run on
# row chunks in the intra-op threads (``by_rows``); the row sums between them run whole.
class Softmax(Node):
    def forward(self, x, dim):
        _, e, s = _exp_shifted(x, dim)
        rows = row_split(e, dim)
        if rows is None:
            e /= s
        else:
            by_rows(xp.divide, rows, s.reshape(-1, 1), rows, split=True)
        self.saved, self.dim = (e,), dim
        return e

    def backward(self, g):  # dx = y * (g - sum(g * y))
        (y,) = self.saved
        dx = _new(y)
        rows = row_split(y, self.dim)
        split = rows is not None
        ys, gs, dxs = (rows, g.reshape(rows.shape), dx.reshape(rows.shape)) if split else (y, g, dx)
        by_rows(xp.multiply, gs, ys, dxs, split=split)
        dot = row_sums(dx, self.dim)
        by_rows(_sub_mul, gs, dot.reshape(-1, 1) if split else dot, ys, dxs, split=split)
        return (dx,)


def _sub_mul(g, c, y, out) -> None:
    """out = (g - c) * y."""
    xp.subtract(g, c, out=out)
    out *= y


def _exp_scale_sub(g, out, c, dx) -> None:
    """dx = g - exp(out) * c."""
    xp.exp(out, out=dx)
    dx *= c
    xp.subtract(g, dx, out=dx)


def log_softmax_array(x, dim):
    """log softmax of an array along ``dim``, a new array: (x - c) - log(sum exp(x - c))."""
    out, _, s = _exp_shifted(x, dim, keep_shifted=True)
    logs = xp.log(s)
    rows = row_split(out, dim)
    if rows is None:
        out -= logs
    else:
        by_rows(xp.subtract, rows, logs.reshape(-1, 1), rows, split=True)
    return out


class LogSoftmax(Node):
    def forward(self, x, dim):
        out = log_softmax_array(x, dim)
        self.saved, self.dim = (out,), dim
        return out

    def backward(self, g):  # dx = g - softmax * sum(g)
        (out,) = self.saved
        total = row_sums(g, self.dim)
        dx = _new(out)
        rows = row_split(out, self.dim)
        if rows is None:
            _exp_scale_sub(g, out, total, dx)
        else:
            by_rows(_exp_scale_sub, g.reshape(rows.shape), rows, total.reshape(-1, 1), dx.reshape(rows.shape),
                    split=True)
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

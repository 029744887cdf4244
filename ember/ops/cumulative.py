"""Cumulative ops along a dimension: cumprod, cummax/cummin, diff, trapezoid (cumsum lives with the reductions)."""

from __future__ import annotations

from .. import _dtype, return_types
from .._backend import xp
from .._dtype import np_kind
from .._meta import meta_results
from .._size import c_type_name
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import Node, torch_named, version_checked
from ..autograd.recorded import RecordedArray, is_recorded
from ..autograd.saved_attributes import (
    checked_argument,
    given_argument,
    held_tensor,
    keep_as_given,
    keep_dim_as_given,
    saved_dim,
    saved_tensor,
)
from .elementwise import cast, conj_if_complex, promoted, refuse_integer_history
from .indexing import _scatter_add_into

# PyTorch's CPU cumsum/cumprod carry their running value in at::acc_type: double for float32, complex<double> for
# complex64 (each output rounded once); half-precision inputs, already widened to float32 by the node, in float32
_ACCUMULATE = {"f": xp.float64, "F": xp.complex128}


def running(fn, a, axis: int, half=None):
    """``fn`` (``xp.cumsum`` or ``xp.cumprod``) of ``a`` along ``axis``, accumulated as PyTorch's CPU kernel does;
    ``half``: the half dtype a float32_compute node widened ``a`` from (accumulated in float32 then). C-contiguous,
    as PyTorch's result is whatever the input's layout (NumPy keeps a transposed input's order)."""
    wide = None if half is not None else _ACCUMULATE.get(a.dtype.char)
    if wide is None:
        return c_order(fn(a, axis=axis))
    return c_order(fn(a, axis=axis, dtype=wide).astype(a.dtype, copy=False))


def c_order(a):
    """``a`` C-contiguous (copied only when it is not; a recorded array of create_graph as it is)."""
    return xp.ascontiguousarray(a) if type(a) is xp.ndarray and not a.flags.c_contiguous else a


@torch_named("CumprodBackward0")
class CumProd(Node):
    float32_compute = True
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_result, _raw_saved_result = saved_tensor(1)
    _saved_dim = given_argument("dim", lambda node: node.dim)

    def forward(self, x, dim):
        out = running(xp.cumprod, x, dim, self.half_dtype)
        self.saved, self.dim = (x, out), dim
        return out

    def backward(self, g):
        # d out_j / d x_i = prod_{k <= j, k != i} x_k for j >= i: grad_i = sum_{j >= i} g_j out_j / x_i, with the
        # factors conjugated for complex inputs (PyTorch's convention: grad * conj(derivative))
        x, out = (conj_if_complex(a) for a in self.saved)
        d = self.dim
        if x.size <= 1 or x.shape[d] == 1:  # out is x: the gradient is g itself (under create_graph without a
            return (g,)  # history, as PyTorch's)
        if not (x == 0).any():
            return (_reverse_cumsum(g * out, d, self.half_dtype) / x,)
        # with zeros, divide nothing: one pass per position i along dim (only when zeros are present)
        xm, gm = xp.moveaxis(x, d, -1), xp.moveaxis(g, d, -1)
        grad = xp.zeros_like(xm)
        for i in range(xm.shape[-1]):
            others = xm.copy()
            others[..., i] = 1
            prods = xp.cumprod(others, axis=-1)[..., i:]
            grad[..., i] = (gm[..., i:] * prods).sum(axis=-1)
        return (xp.moveaxis(grad, -1, d),)


def _reverse_cumsum(a, axis, half=None):
    return xp.flip(running(xp.cumsum, xp.flip(a, axis), axis, half), axis)


def check_dtype_argument(dtype) -> None:
    """A reduction's ``dtype=`` as PyTorch's parser takes it: a dtype (or a Python number type); anything else its
    TypeError."""
    if not isinstance(dtype, _dtype.dtype) and not (dtype.__class__ is type and dtype in _dtype.PYTHON_TYPES):
        raise TypeError(f"argument 'dtype' must be torch.dtype, not {c_type_name(dtype)}")


def _accumulated_as(x: Tensor, dtype) -> tuple[Tensor, _dtype.dtype | None]:
    """(``x`` as PyTorch's sum, prod, cumsum and cumprod accumulate it, the dtype their result is cast to or None):
    ``x`` cast to ``dtype`` when given; integers and bools then as int64 (NumPy's sums and products widen a
    narrower integer to int64, uint8 to uint64, a dtype ember does not have), the result of an integer or bool
    ``dtype`` cast back to it (wrapping, as PyTorch's: a bool sum is whether any element is non-zero, a bool
    product whether all are)."""
    asked = None
    if dtype is not None:
        check_dtype_argument(dtype)
        refuse_integer_history(x, dtype)
        x = promoted(x, dtype)
        asked = x.dtype
    if x._data.dtype.kind in "bui" and x._data.dtype != xp.int64:
        return promoted(x, _dtype.int64), asked  # (a tensor with a history keeps it: the node refuses it)
    return x, None


def _as_asked(out: Tensor, asked: _dtype.dtype | None) -> Tensor:
    """``out`` in the integer or bool dtype its ``dtype=`` asked for (``_accumulated_as``)."""
    return out if asked is None else cast(out, asked)


def cumprod(x: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running products along ``dim``; integers and bools accumulate as int64, as in PyTorch."""
    _wrap_dim(dim, max(x._data.ndim, 1))  # (PyTorch checks the dim before a refused dtype=)
    if dtype is not None and _dtype.to_np(dtype) == xp.bool_:  # (PyTorch has no bool running product)
        raise _dtype.not_implemented_for("cumprod_out_cpu", _dtype.bool_)
    x, asked = _accumulated_as(x, dtype)
    if x._data.ndim == 0:
        _wrap_dim(dim, 0)
        return _as_asked(CumProd.apply(x.reshape(1), dim=0).reshape(()), asked)
    return _as_asked(keep_as_given(CumProd.apply(x, dim=_wrap_dim(dim, x._data.ndim)), dim=dim), asked)


class Selected(Node):
    """The elements of ``x`` at ``index`` along ``dim`` (``index`` of ``x``'s rank; the result squeezed there unless
    ``keepdim``), one node as PyTorch's value-selecting ops record (cummax, cummin, mode): its gradient is added
    back at the index (``cummaxmin_backward``, ``value_selecting_reduction_backward``). A 0-d ``x`` is its own
    value. Saves the index, not ``x`` (where PyTorch saves ``self``, the op checks its version: ``version_checked``).
    PyTorch's ``_saved_dim`` (as given) and ``_saved_indices`` (as returned); each subclass the rest its node lists."""

    linear = True
    _saved_dim = property(lambda node: saved_dim(node, node.dim))
    _saved_indices = property(lambda node: held_tensor(node, node.index if node.keepdim or not node.shape
                                                       else node.index.squeeze(node.dim)))
    scatter = "scatter_add"  # PyTorch's formula under create_graph: cummax's repeated indices add up

    def forward(self, x, index, dim, keepdim=True):
        self.shape, self.index, self.dim, self.keepdim = x.shape, index, dim, keepdim
        if not x.ndim:
            return x.copy()
        out = xp.take_along_axis(x, index, axis=dim)
        return out if keepdim else out.squeeze(dim)

    def backward(self, g):
        if not self.shape:
            return (g,)
        if not self.keepdim:
            g = xp.expand_dims(g, self.dim)
        if type(g) is RecordedArray:  # (create_graph: recorded as PyTorch's formula, a scatter into zeros)
            into = Tensor._make(xp.zeros(self.shape, dtype=g.dtype))
            return (RecordedArray(getattr(into, self.scatter)(self.dim, Tensor._make(self.index), g.t)),)
        out = xp.zeros_like(g, shape=self.shape)
        _scatter_add_into(out, self.dim, self.index, g)
        return (out,)


@torch_named("CummaxBackward0")
class CumMax(Selected):
    _saved_self = property(lambda node: checked_argument(node, 0, 0))  # (held to check its version)


@torch_named("CumminBackward0")
class CumMin(CumMax):
    pass


def _cumulative_extreme(x: Tensor, dim: int, largest: bool, name: str):
    a = x._data
    d = _wrap_dim(dim, a.ndim)  # (a scalar takes dim 0 and -1 only, as PyTorch)
    if a.dtype.kind == "c":  # (NumPy would order complex numbers lexicographically)
        raise _dtype.not_implemented_for(f"{name}_cpu", x.dtype)
    node = CumMax if largest else CumMin
    if a.ndim == 0:
        zero = xp.zeros((), dtype=xp.int64)
        return keep_dim_as_given(getattr(return_types, name)._make((
            version_checked(node.apply(x, index=zero, dim=0), x), Tensor._make(meta_results((x._data,), zero)))), dim)
    am = xp.moveaxis(a, d, -1)
    idx = xp.zeros(am.shape, dtype=xp.int64)
    best = am[..., :1].copy() if am.shape[-1] else am[..., :0]
    for i in range(am.shape[-1]):  # ties (and NaN, once seen) move the index to the latest position
        cur = am[..., i:i + 1]
        take = (cur >= best) if largest else (cur <= best)
        take |= xp.isnan(cur)
        take &= ~(xp.isnan(best) & ~xp.isnan(cur))
        if i == 0:
            take[...] = True
        best = xp.where(take, cur, best)
        idx[..., i:i + 1] = xp.where(take, i, idx[..., i - 1:i] if i else 0)
    idx = c_order(xp.moveaxis(idx, -1, d))  # (PyTorch's results are contiguous: the values follow idx)
    # (PyTorch's cummax/cummin save their input)
    return keep_dim_as_given(getattr(return_types, name)._make((
        version_checked(node.apply(x, index=idx, dim=d), x), Tensor._make(meta_results((x._data,), idx)))), dim)


def cummax(x: Tensor, dim: int):
    """Running maximum along ``dim`` and the index where it was found (the latest among ties);
    the gradient goes to that index."""
    return _cumulative_extreme(x, dim, True, "cummax")


def cummin(x: Tensor, dim: int):
    """Running minimum along ``dim`` and its index (the latest among ties)."""
    return _cumulative_extreme(x, dim, False, "cummin")


def diff(x: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along ``dim`` (``out[i] = x[i + 1] - x[i]``, n times), after
    concatenating ``prepend`` and ``append``; bool tensors give ``x[i + 1] != x[i]``."""
    from .elementwise import ne, sub
    from .indexing import narrow
    from .shape import cat

    if x._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for other in (prepend, append):  # PyTorch's checks, in its order (the dim wrapped only where there is one)
        if other is not None:
            d = _wrap_dim(dim, x._data.ndim)
            if other.ndim != x._data.ndim:
                raise RuntimeError("diff expects prepend or append to be the same dimension as input")
            for i, (a, b) in enumerate(zip(x._data.shape, other.shape)):
                if i != d and a != b:
                    raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input "
                                       f"except along the differencing dimension; input.size({i}) = {a}, but got "
                                       f"tensor.size({i}) = {b}")
    if n == 0:  # PyTorch's copy of the input (prepend and append left out), never the input itself: CopyBackwards
        from .inplace import CopyFrom

        return CopyFrom.apply(Tensor._make(xp.empty_like(x._data)), x)
    d = _wrap_dim(dim, x._data.ndim)
    parts = [t for t in (prepend, x, append) if t is not None]
    if len(parts) > 1:
        x = cat(parts, d)
    for _ in range(n):
        size = x._data.shape[d]
        if size == 0:
            break
        hi, lo = narrow(x, d, 1, size - 1), narrow(x, d, 0, size - 1)
        x = ne(hi, lo) if x._data.dtype == xp.bool_ else sub(hi, lo)
    return x


@torch_named("LogcumsumexpBackward0")
class LogCumSumExp(Node):
    float32_compute = True
    _saved_self, _raw_saved_self = CumProd._saved_self, CumProd._raw_saved_self
    _saved_result, _raw_saved_result = CumProd._saved_result, CumProd._raw_saved_result
    _saved_dim = CumProd._saved_dim

    def forward(self, x, dim):
        # running log-sum-exp, exact and overflow-free; C-contiguous, as PyTorch's result
        out = c_order(_complex_logcumsumexp(x, dim) if x.dtype.kind == "c" else xp.logaddexp.accumulate(x, axis=dim))
        self.saved, self.dim = (x, out), dim
        return out

    def backward(self, g):
        if g.dtype.kind == "c":
            # out_j = log sum_{i <= j} exp(x_i) is holomorphic: grad_i = conj(sum_{j >= i} conj(g_j) exp(x_i - out_j)),
            # the sum taken in log space as PyTorch's (exp(x_i) alone overflows at a real part of about 710):
            # conj(exp(x_i + reversed running log-sum-exp of log(conj(g_j)) - out_j))
            x, out = self.saved
            d = self.dim
            with xp.errstate(divide="ignore", invalid="ignore"):  # (log 0 = -inf: a zero g_j adds nothing)
                terms = xp.log(xp.conj(g)) - out
            tail = xp.flip(_running_complex(xp.flip(terms, d), d), d)
            return (xp.conj(xp.exp(x + tail)),)
        # grad_i = sum_{j >= i} g_j exp(x_i - out_j) = exp(x_i + log sum_{j >= i} g_j exp(-out_j)); the sum is
        # taken in log space for the positive and the negative parts of g, so nothing overflows
        x, out = self.saved
        d = self.dim
        # (PyTorch's formula: the lowest float, not log(0) = -inf, where g has the other sign, so that the
        # formula's own derivative stays finite under create_graph)
        with xp.errstate(divide="ignore"):
            log_abs = xp.log(xp.abs(g))
        lowest = xp.finfo(g.dtype).min
        pos, neg = xp.where(g > 0, log_abs, lowest) - out, xp.where(g < 0, log_abs, lowest) - out
        tail = [xp.flip(xp.logaddexp.accumulate(xp.flip(part, d), axis=d), d) for part in (pos, neg)]
        return (xp.exp(x + tail[0]) - xp.exp(x + tail[1]),)


def _complex_logcumsumexp(x, dim: int):
    """The running log-sum-exp of complex ``x`` as PyTorch's kernel: from -inf + 0j, each step
    ``hi + log1p(exp(lo - hi))``, hi the operand of larger real part (so nothing overflows), the imaginary part not
    wrapped into (-pi, pi]; a NaN in either operand (real or imaginary part) gives nan + nanj, two -inf real parts
    keep the running value, two +inf ones give log(exp(lo) + exp(hi))."""
    out = xp.moveaxis(xp.array(x, copy=True), dim, 0)
    acc = xp.full(out.shape[1:], complex(-xp.inf, 0), out.dtype)
    with xp.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for i in range(out.shape[0]):
            new = out[i]
            swap = new.real < acc.real
            lo, hi = xp.where(swap, new, acc), xp.where(swap, acc, new)
            step = hi + xp.log1p(xp.exp(lo - hi))
            both_inf = ~xp.isfinite(lo.real) & (lo.real == hi.real)
            step = xp.where(both_inf, xp.where(lo.real < 0, lo, xp.log(xp.exp(lo) + xp.exp(hi))), step)
            acc = out[i] = xp.where(xp.isnan(new) | xp.isnan(acc), complex(xp.nan, xp.nan), step)
    return xp.moveaxis(out, 0, dim)


def _running_complex(a, dim: int):
    """The complex running log-sum-exp along ``dim`` of an array, or, under create_graph, of a recorded one (NumPy's
    ``logaddexp.accumulate`` of it is ember's recorded ``logcumsumexp``)."""
    return xp.logaddexp.accumulate(a, axis=dim) if is_recorded(a) else _complex_logcumsumexp(a, dim)


def logcumsumexp(x: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(x))) along ``dim``, computed without overflow; complex tensors as PyTorch's (the imaginary
    part accumulated, not wrapped into (-pi, pi]). Integer and bool tensors are PyTorch's NotImplementedError
    (after the ``dim`` check)."""
    d = _wrap_dim(dim, x._data.ndim)
    if np_kind(x._data.dtype) not in ("f", "c"):
        raise _dtype.not_implemented_for("logcumsumexp_out_cpu", x.dtype)
    if x._data.ndim == 0:
        return x.clone()
    return keep_as_given(LogCumSumExp.apply(x, dim=d), dim=dim)


def _trapezoid_areas(y: Tensor, x: Tensor | None, dx: float | None, d: int, name: str) -> Tensor:
    """The area of each interval along ``d``: ``(x[i+1] - x[i]) * (y[i+1] + y[i]) / 2`` (spacing ``dx``, default 1,
    without sample points ``x``)."""
    from .indexing import narrow

    n = y._data.shape[d]
    pairs = narrow(y, d, 1, n - 1) + narrow(y, d, 0, n - 1)
    if x is None:
        return pairs * ((1.0 if dx is None else dx) / 2)
    if dx is not None:
        raise TypeError(f"{name}() received both sample points x and a spacing dx")
    spacing = diff(x, dim=-1 if x._data.ndim == 1 else d)
    if x._data.ndim == 1 and y._data.ndim > 1:  # 1-d sample points lie along dim
        spacing = spacing.reshape([n - 1 if i == d else 1 for i in range(y._data.ndim)])
    return spacing * pairs / 2


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: ``sum((x[i+1] - x[i]) * (y[i+1] + y[i]) / 2)``, with spacing ``dx``
    (default 1) when no sample points ``x`` are given, as ``torch.trapezoid``; differentiable in ``y`` and ``x``."""
    from .reduction import sum as sum_

    d = _wrap_dim(dim, y._data.ndim)
    if y._data.shape[d] == 0:
        return sum_(y, d)
    return sum_(_trapezoid_areas(y, x, dx, d, "trapezoid"), d)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    """PyTorch's older name of ``trapezoid``."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    """The running trapezoidal rule along ``dim``: one entry fewer than ``y`` there, entry i the area up to
    sample i + 1 (``torch.cumulative_trapezoid``)."""
    from .indexing import narrow
    from .reduction import cumsum

    d = _wrap_dim(dim, y._data.ndim)
    if y._data.shape[d] == 0:
        return narrow(y, d, 0, 0) * 1
    return cumsum(_trapezoid_areas(y, x, dx, d, "cumulative_trapezoid"), d)

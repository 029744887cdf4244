"""Reductions: sum, mean, max/min, prod, var/std, norm, logsumexp, all/any, argmax/argmin.

``dim`` may be None (everything), an int or a tuple; ``keepdim`` keeps reduced
dims as size 1. Backward re-inserts the reduced dims and broadcasts.
"""

from __future__ import annotations

import builtins
import math
import operator

from .. import _dtype, _warnings, return_types
from .._autocast import full_precision
from .._backend import ufunc_out_ellipsis, xp
from .._dtype import SCALAR_TYPE_NAMES, np_kind
from .._meta import meta_results
from .._not_given import NOT_GIVEN
from .._size import c_type_name
from .._tensor import Tensor, _wrap_dim, wrap_dims_once
from ..autograd.graph import MultiOutputNode, Node, apply_one, show_node_as, torch_named, version_checked
from ..autograd.recorded import is_recorded, value_of
from ..autograd.saved_attributes import (
    as_unsigned,
    given_argument,
    held_tensor,
    input_sizes,
    keep_as_given,
    keep_dim_as_given,
    not_saved,
    saved_dim,
    saved_tensor,
)
from .cumulative import _accumulated_as, _as_asked, _reverse_cumsum, check_dtype_argument, running
from .elementwise import cast, conj_if_complex, promoted, refuse_complex
from .unary import sign_array


def _axes(dim, ndim: int):
    """Normalise ``dim`` (None, int, or sequence) to a tuple of axes, or None for all. A ``dim`` that is no int nor
    sequence of ints is PyTorch's TypeError for its "tuple of ints" argument."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        try:
            axes = tuple(sorted(wrap_dims_once(dim, ndim, wrap_all_first=True)))
        except TypeError:
            raise _dims_unpack_error(dim) from None
    else:
        try:
            axes = (_wrap_dim(dim, ndim),)
        except TypeError:
            raise TypeError(f"argument 'dim' must be tuple of ints, not {c_type_name(dim)}") from None
    return axes if ndim else None  # a 0-d tensor accepts dim 0 / -1: the whole (single) element


def _dims_unpack_error(dims) -> TypeError:
    """PyTorch's TypeError for a sequence of dims holding something that is no int (its position from 1)."""
    for i, d in enumerate(dims):
        try:
            _wrap_dim(d, 1 << 62)
        except TypeError:
            return TypeError(f"argument 'dim' failed to unpack the object at pos {i + 1} with error \"type must be "
                             f"tuple of ints,but got {c_type_name(d)}\"")
    return TypeError("argument 'dim' must be tuple of ints")


def _dims_as_given(out: Tensor, dim) -> Tensor:
    """``out``'s node keeps ``dim`` as given (in the order given, a negative one unwrapped), which PyTorch's shows as
    its ``_saved_dim`` (a negative dim read as unsigned, ``as_unsigned``), where ember reduces over the dims wrapped
    and sorted (``_axes``)."""
    node = out.grad_fn
    if node is not None and dim is not None:
        dims = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
        if len(dims) > 1 or builtins.any(d < 0 for d in dims):
            node.dims_given = tuple(as_unsigned(operator.index(d)) for d in dims)
    return out


def _check_nonempty(name: str, x, axes) -> None:
    """PyTorch's IndexError for a max/min-like reduction over an empty dimension."""
    if x.size == 0:
        for a in range(x.ndim) if axes is None else axes:
            if x.shape[a] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


def _row_major(out):
    """A reduction's result laid out row-major, as PyTorch allocates it whatever the input's layout (NumPy's
    follows the input's: the sum over the batch of a channels-last tensor would stay channels-last), with
    PyTorch's strides for its size-1 dimensions too (NumPy's contiguity ignores theirs)."""
    if type(out) is not xp.ndarray or out.flags.c_contiguous and (
            1 not in out.shape or out.strides == _c_strides(out.shape, out.itemsize)):
        return out  # (a recorded array, create_graph's, is laid out when its forward runs)
    return out.copy()


def _c_strides(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _expand_back(g, shape, axes, keepdim: bool):
    """Reshape a reduced gradient so it broadcasts against the input ``shape``."""
    if not keepdim and axes is not None and g.ndim != len(shape):
        g = xp.expand_dims(g, axes)
    return g


@torch_named("SumBackward0")
class Sum(Node):
    linear = True
    float32_compute = True
    # (trace, PyTorch's one node, ember's sum of the diagonal: the matrix's sizes, ``trace``)
    attributes_shown = {"TraceBackward0": {"_saved_self_sym_sizes": given_argument("self_sym_sizes", input_sizes)}}
    _saved_self_sym_sizes = property(input_sizes)  # (PyTorch's name: the input's shape)

    def forward(self, x, axes, keepdim):
        self.shape, self.axes, self.keepdim = x.shape, axes, keepdim
        if type(x) is not xp.ndarray:  # a recorded array (create_graph), forward-mode tangents of one
            return x.sum(axis=axes, keepdims=keepdim)
        # the ufunc's reduce, which numpy.sum and ndarray.sum reach through Python-level wrappers (a µs per op);
        # out=... (NumPy 2.3 on) answers a full reduction with a 0-d array, not a scalar the tensor would copy
        if ufunc_out_ellipsis:
            return _row_major(xp.add.reduce(x, axes, None, keepdims=keepdim, out=...))
        return _row_major(xp.add.reduce(x, axes, None, keepdims=keepdim))

    def backward(self, g):
        g = _expand_back(g, self.shape, self.axes, self.keepdim)
        return (xp.broadcast_to(g, self.shape),)


@torch_named("MeanBackward0")
class Mean(Node):
    linear = True
    float32_compute = True
    _saved_self_sym_sizes = property(input_sizes)
    _saved_self_sym_numel = property(lambda self: math.prod(self.input_shapes[0]))

    def forward(self, x, axes, keepdim):
        # sum / count, as NumPy's mean computes it, without its warning for an empty input (nan, silently)
        total = xp.sum(x, axis=axes, keepdims=keepdim)
        self.shape, self.axes, self.keepdim = x.shape, axes, keepdim
        self.count = x.size // total.size if total.size else 1
        return _row_major(xp.true_divide(total, self.count, dtype=total.dtype))

    def backward(self, g):
        g = _expand_back(g, self.shape, self.axes, self.keepdim)
        # PyTorch's grad.expand(sizes) / numel: a tensor of its own, not an expanded view (autograd.grad returns it:
        # contiguous, writable in place)
        return (xp.broadcast_to(g, self.shape) / g.dtype.type(self.count),)


def _finite_mean(x, axes, keepdim: bool):
    """The mean std_mean and var_mean return with the spread, as PyTorch computes it: in float64 for float32 (and
    the half dtypes, which arrive as float32) and as a running mean for float64, so it is finite wherever the mean
    fits (values near the dtype's largest, whose sum overflows; ``mean()`` overflows there, as PyTorch's does), and
    NaN where an infinity is followed by another element (``_running_mean_of_infinite``)."""
    if x.dtype == xp.float32:
        return _finite_mean(x.astype(xp.float64), axes, keepdim).astype(xp.float32)
    with xp.errstate(all="ignore"):  # (inf/NaN silently, as PyTorch; an empty input's mean is NaN)
        total = xp.sum(x, axis=axes, keepdims=keepdim)
        count = x.size // total.size if total.size else 1
        out = xp.true_divide(total, count, dtype=total.dtype)
        # (no elements: the mean is NaN, with no power of two to scale by)
        if x.dtype == xp.float64 and x.size and not xp.isfinite(out).all():
            # the sum overflowed, or the input holds inf/NaN: a sum of the elements scaled by a power of two
            # (exactly) to at most 1/count of themselves cannot overflow; the mean is finite where it fits
            scale = 2.0 ** -math.ceil(math.log2(count))
            scaled = xp.sum(x * scale, axis=axes, keepdims=keepdim) / (count * scale)
            out = xp.where(xp.isfinite(out), out, scaled)
            if xp.isinf(x).any():
                out = _running_mean_of_infinite(x, axes, out)
    return xp.asarray(out)


def _running_mean_of_infinite(x, axes, out):
    """``out`` (the mean of ``x`` over ``axes``) where a reduced slice holds an infinity, as PyTorch's running
    (Welford) mean gives it: the infinity when it is the slice's last element (in its order) and the others are
    finite, else NaN, an infinity followed by any element making ``inf - inf`` or ``-inf + inf``."""
    axes = tuple(range(x.ndim)) if axes is None else (axes,) if isinstance(axes, int) else tuple(axes)
    if x.size == 0 or not axes:
        return out
    rows = xp.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim))).reshape(-1, math.prod(
        x.shape[a] for a in axes))
    last = rows[:, -1]
    kept = xp.isinf(last) & xp.isfinite(rows[:, :-1]).all(axis=1)
    infinite = xp.isinf(rows).any(axis=1)
    flat = out.reshape(-1)
    return xp.where(infinite, xp.where(kept, last, xp.nan), flat).astype(out.dtype, copy=False).reshape(out.shape)


# sum / mean over given dimensions, under PyTorch's names for that overload (names only)
@torch_named("SumBackward1")
class _SumOverDims(Sum):
    dims_given = None  # (``_dims_as_given``)
    _saved_dim = property(lambda self: self.dims_given or self.axes)
    _saved_keepdim = property(lambda self: self.keepdim)


@torch_named("MeanBackward1")
class _MeanOverDims(Mean):
    dims_given = None  # (``_dims_as_given``)
    _saved_dim = property(lambda self: self.dims_given or self.axes)
    _saved_keepdim = property(lambda self: self.keepdim)


@torch_named("ProdBackward0")
class Prod(Node):
    float32_compute = True
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_result, _raw_saved_result = saved_tensor(1)

    def forward(self, x, axes, keepdim):
        if self.half_dtype is None:
            out = xp.prod(x, axis=axes, keepdims=keepdim)
        else:  # PyTorch's CPU kernel multiplies in the half dtype: a partial product beyond its range is inf
            out = _half_product(x, axes, keepdim, self.half_dtype)
        out = _row_major(out)
        self.saved = (x, out)
        self.axes, self.keepdim = axes, keepdim
        return out

    def backward(self, g):
        x, out = self.saved
        g = _expand_back(g, x.shape, self.axes, self.keepdim)
        out = _expand_back(out, x.shape, self.axes, self.keepdim)
        zeros, axes = (x == 0).any(), range(x.ndim) if self.axes is None else self.axes
        if not x.ndim or zeros and builtins.all(x.shape[a] == 1 for a in axes):
            # one factor per product: the gradient is g itself, as PyTorch's formula gives it (under create_graph
            # without a history: its second derivative is PyTorch's error, not zeros)
            return (xp.broadcast_to(g, x.shape),)
        if zeros:  # d(prod)/dx_i = product of the others (no division by zero)
            return (g * conj_if_complex(_prod_of_others(x, self.axes)),)
        return (g * conj_if_complex(out / x),)


@torch_named("ProdBackward1")
class _ProdOverDim(Prod):
    _saved_dim = given_argument("dim", lambda node: node.axes[0])
    _saved_keepdim = property(lambda node: node.keepdim)


def _half_product(x, axes, keepdim: bool, half):
    """The product over ``axes`` of the float32 ``x`` with each partial product rounded to ``half`` (NumPy's own
    float16 product keeps a float32 running product, which never overflows where PyTorch's does), as float32."""
    axes = tuple(range(x.ndim)) if axes is None else tuple(axes)
    moved = xp.moveaxis(x.astype(half), axes, tuple(range(x.ndim - len(axes), x.ndim)))
    rows = moved.reshape(moved.shape[:x.ndim - len(axes)] + (math.prod(moved.shape[x.ndim - len(axes):]),))
    if rows.shape[-1] == 0:
        out = xp.ones(rows.shape[:-1], dtype=x.dtype)
    else:
        with xp.errstate(over="ignore", invalid="ignore"):
            out = xp.multiply.accumulate(rows, axis=-1)[..., -1].astype(x.dtype)
    return xp.expand_dims(out, axes) if keepdim else out


def _prod_of_others(x, axes):
    if axes is None:
        flat = x.reshape(-1)
        return _prod_of_others(flat, (0,)).reshape(x.shape)
    out = xp.ones_like(x)
    for axis in axes:
        # (all but the last along ``axis``: an integer index array even when empty, which a recorded array's take
        # under create_graph refuses as a float one)
        others = xp.arange(x.shape[axis] - 1)
        left = xp.cumprod(xp.concatenate([xp.ones_like(xp.take(x, [0], axis)), xp.take(x, others, axis)], axis),
                          axis)
        rev = xp.flip(x, axis)
        right = xp.flip(xp.cumprod(xp.concatenate([xp.ones_like(xp.take(rev, [0], axis)), xp.take(rev, others, axis)],
                                                  axis), axis), axis)
        out = out * left * right
    return out


def evenly_distributed_mask(x, value):
    """Where PyTorch's ``evenly_distribute_backward`` sends the gradient of ``value``, one of x's elements (max(),
    min(), median() of all elements): the elements equal to it, or every NaN when it is NaN."""
    # (a NumPy scalar: a 0-d x's reduction; under create_graph a recorded array, whose values are read: a NaN is
    # equal to nothing, so equality would send the gradient nowhere, NaN everywhere)
    raw = value_of(value)
    if (type(raw) is xp.ndarray or isinstance(raw, xp.generic)) and xp.isnan(raw).any():
        return xp.isnan(x)
    return x == value


class Extreme(Node):
    """max/min over axes: the gradient is split evenly among tied extremes (PyTorch's rule); a NaN extreme's
    among the NaNs (``evenly_distribute_backward``), but amax's and amin's (``nan_counts`` False) among the
    elements equal to it: none, a NaN gradient, as PyTorch's."""

    nan_counts = True
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_result, _raw_saved_result = saved_tensor(1)

    def name(self) -> str:  # (PyTorch's: max() / min() of all elements)
        return "MaxBackward1" if self.fn is xp.max else "MinBackward1"

    def forward(self, x, fn, axes, keepdim):
        out = fn(x, axis=axes, keepdims=True)
        self.fn = fn
        show_node_as(self, self.name())  # (its type too reads as PyTorch's: type(y.grad_fn).__name__)
        out = _row_major(out if keepdim else (out.reshape(()) if axes is None else out.squeeze(axes)))
        self.saved = (x, out)  # the result itself, as PyTorch saves it (its version checked as the result's)
        self.axes, self.keepdim = axes, keepdim
        return out

    def backward(self, g):
        x, out = self.saved
        g = _expand_back(g, x.shape, self.axes, self.keepdim)
        out = _expand_back(out, x.shape, self.axes, self.keepdim)
        mask = evenly_distributed_mask(x, out) if self.nan_counts else x == out
        # (the count of tied extremes in g's dtype, as PyTorch's grad / mask.sum(): an int64 count made it float64)
        return (mask * (g / mask.sum(axis=self.axes, keepdims=True).astype(g.dtype)),)


class MaxMinDim(Node):
    """max/min along a dim: the gradient goes to the index returned."""

    # PyTorch's names: the indices as returned (a tensor over the same memory), the input's shape
    _saved_dim = property(lambda self: saved_dim(self, self.dim))
    _saved_keepdim = property(lambda self: self.keepdim)
    # (the indices: PyTorch's saved variable, released with the graph: its error after a backward that freed it)
    _saved_indices = property(lambda self: held_tensor(self, self.indices))
    _saved_self_sym_sizes = property(lambda self: tuple(self.shape))

    def forward(self, x, dim, keepdim, largest):
        _check_nonempty("max" if largest else "min", x, (dim,))
        idx = xp.argmax(x, axis=dim) if largest else xp.argmin(x, axis=dim)
        idx = xp.expand_dims(idx, dim)
        values = xp.take_along_axis(x, idx, axis=dim)
        self.shape, self.dim, self.keepdim, self.idx = x.shape, dim, keepdim, idx
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        self.indices = idx.astype(xp.int64)
        # (PyTorch's node saves the indices: released after backward, a second one through it is its error)
        self.saved = (self.indices,)
        return values

    def backward(self, g):
        if not self.keepdim:
            g = xp.expand_dims(g, self.dim)
        out = xp.zeros_like(g, shape=self.shape)
        xp.put_along_axis(out, self.idx, g, axis=self.dim)
        return (out,)


@torch_named("MaxBackward0")  # (PyTorch's max(x, dim); max() of all elements is Extreme's MaxBackward1)
class _MaxDim(MaxMinDim):
    pass


class _ExtremeOfDim(Extreme):
    """max/min along the one dim of a 0-d tensor: PyTorch's node of the dim overload, with its saved names."""

    _saved_self, _raw_saved_self, _saved_result, _raw_saved_result = not_saved("self", "result").values()
    _saved_dim = property(lambda self: saved_dim(self, 0))
    _saved_keepdim = property(lambda self: self.keepdim)
    _saved_indices = property(lambda self: Tensor._make(xp.zeros((), xp.int64)))
    _saved_self_sym_sizes = ()

    def name(self) -> str:
        return "MaxBackward0" if self.fn is xp.max else "MinBackward0"


@torch_named("MinBackward0")
class _MinDim(MaxMinDim):
    pass


@torch_named("VarBackward0")
class Var(Node):
    """The variance over ``axes``. float32 (and the half dtypes, computed in float32) accumulate in float64, as
    PyTorch's CPU kernel does: squares past float32's range (values near 1e20 and beyond) still give a finite
    variance where it fits, and a finite ``Std`` where only the square root fits."""
    float32_compute = True
    rerun_for_higher_order = True  # backward reads x (recorded inputs under create_graph)
    _saved_self, _raw_saved_self = saved_tensor(0)
    # (the dims and correction as PyTorch's overload read them: ``_moment_arguments``)
    _saved_dim = given_argument("dim", lambda node: node.axes)
    _saved_correction = given_argument("correction", lambda node: None, raw=True)
    _saved_keepdim = property(lambda node: node.keepdim)

    def forward(self, x, axes, correction, keepdim):
        n = _reduced_count(x.shape, axes)
        self.saved = (x,)  # PyTorch's var saves its input; backward computes x - mean from it
        self.axes, self.keepdim, self.denom, self.count = axes, keepdim, builtins.max(n - correction, 0), n
        # backward's divisor, negative too as in PyTorch's formula; over every element it differs at <= 0
        self.dof, self.whole = n - correction, axes is None or x.ndim == 0
        # one temporary the input's size, squared where it is (not for a recorded input, nor a 0-d one's scalar)
        in_place = not is_recorded(x) and x.ndim > 0
        with xp.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (NumPy's mean warns of an empty slice)
            if x.dtype == xp.float32:  # (complex64 accumulates in float32, as PyTorch's)
                diff = x.astype(xp.float64)
                mean = xp.sum(diff, axis=axes, keepdims=True) / n
                diff = xp.subtract(diff, mean, out=diff) if in_place else diff - mean
            else:
                diff = _deviation(x, axes, n)
            sq = xp.multiply(diff, diff, out=diff) if in_place and diff.dtype.kind == "f" else _abs2(diff)
            var = xp.sum(sq, axis=axes, keepdims=keepdim) / sq.dtype.type(self.denom)
            out = self._finish(var).astype(x.real.dtype)
            # (an array, not NumPy's scalar for a full reduction: Std saves it as its result, var_mean returns it)
            return xp.asarray(out) if isinstance(out, xp.generic) else _row_major(out)

    def _finish(self, var):
        return var

    def backward(self, g):  # d var / dx = 2 (x - mean) / (n - correction)
        with xp.errstate(divide="ignore", invalid="ignore", over="ignore"):
            diff = _deviation(self.saved[0], self.axes, self.count)
        g = _expand_back(g, diff.shape, self.axes, self.keepdim)
        if self.dof <= 0 and self.whole:
            # PyTorch's formula where the degrees of freedom over all elements are <= 0: inf, NaN where x equals its
            # mean (inf * 0), chosen by a comparison: a constant, whose derivative is no function of x
            d = value_of(diff)
            return (g * xp.where(d == 0, xp.nan, xp.inf).astype(d.real.dtype),)
        with xp.errstate(divide="ignore", invalid="ignore"):
            return (g * diff * (2 / diff.real.dtype.type(self.dof)),)


@torch_named("StdBackward0")
class Std(Var):
    """The square root of ``Var``, taken before the result is rounded to float32 (PyTorch's order: the standard
    deviation of values near 1e30 is finite though their variance is not)."""

    _saved_result, _raw_saved_result = saved_tensor(1)

    def forward(self, x, axes, correction, keepdim):
        out = super().forward(x, axes, correction, keepdim)
        if is_recorded(x):
            # forward run again under create_graph: the result backward reads is a recorded std (this node's own
            # gradient, zero where the std is 0, as PyTorch's saved result has), not the square root of the
            # recorded variance, whose infinite slope at 0 made a constant slice's second derivative NaN
            out = type(out)(Std.apply(x.t, axes=axes, correction=correction, keepdim=keepdim))
        # backward reads the result as returned: rounded to the half dtype where the input was one
        self.saved += (out if self.half_dtype is None else out.astype(self.half_dtype).astype(out.dtype),)
        return out

    def _finish(self, var):
        return xp.sqrt(var)

    def backward(self, g):
        # d std / dx = d var / dx / (2 std), where std is 0 a zero gradient (PyTorch's masked_fill): a constant
        # input's std is at its minimum, not at sqrt's infinite slope
        out = self.saved[1]
        with xp.errstate(divide="ignore", invalid="ignore"):
            g = xp.where(out == 0, 0, g / (out * 2))
        return super().backward(g)


def _deviation(x, axes, n: int):
    """``x - mean`` over ``axes`` (``n`` elements each) in x's dtype, as PyTorch's var formula computes it."""
    return x - xp.sum(x, axis=axes, keepdims=True) / x.dtype.type(n)


def _reduced_count(shape, axes) -> int:
    """How many elements each output of a reduction over ``axes`` (None: all) of ``shape`` combines."""
    return int(math.prod(shape if axes is None else [shape[a] for a in axes]))


def _abs2(a):
    """|a|^2 elementwise, in a's real dtype (a complex variance or norm is real)."""
    return a.real * a.real + a.imag * a.imag if a.dtype.kind == "c" else a * a




def keepdim_without_dim(name: str, method: bool, dtype, keepdim=False) -> TypeError:
    """PyTorch's TypeError for ``keepdim=`` (True or False, or anything: its type is named) given to
    ``sum``/``mean``/``prod`` without a ``dim`` (``method``: ``x.sum(keepdim=True)``): its argument parser matches no
    overload, or with a ``dtype=`` wants the dim (``torch.mean``'s overloads take the dtype as a keyword there: no
    overload matches)."""
    if dtype is not None and (method or name != "mean"):
        return TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    kind = c_type_name(keepdim)
    rest = f"{'int' if name == 'prod' else 'tuple of ints'} dim, bool keepdim = False, *, torch.dtype dtype = None"
    if method:
        return TypeError(f"{name}() received an invalid combination of arguments - got (keepdim={kind}, ), but "
                         "expected "
                         f"one of:\n * (*, torch.dtype dtype = None)\n * ({rest})\n")
    got = f"Tensor, keepdim={kind}" if dtype is None else f"Tensor, dtype=torch.dtype, keepdim={kind}"
    out = ", Tensor out = None" if name == "mean" else ""
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     f" * (Tensor input, *, torch.dtype dtype = None{out})\n"
                     f" * (Tensor input, {rest}, Tensor out = None)\n")


def keepdim_flag(name: str, keepdim) -> bool:
    """``keepdim`` as PyTorch's parser reads it: a Python bool; anything else, an int or a NumPy bool included, its
    TypeError ("sum(): argument 'keepdim' must be bool, not numpy.bool")."""
    if keepdim.__class__ is bool:
        return keepdim
    raise TypeError(f"{name}(): argument 'keepdim' must be bool, not {c_type_name(keepdim)}")


def sum(x: Tensor, dim=NOT_GIVEN, keepdim: bool = NOT_GIVEN, *, dtype=None) -> Tensor:
    # PyTorch's node is SumBackward0 for sum() alone, SumBackward1 for the overload given a dim (None too)
    node = Sum
    if dim is NOT_GIVEN:  # (dim=None is PyTorch's all elements too, but keepdim, even False, needs a dim)
        if keepdim is not NOT_GIVEN:
            raise keepdim_without_dim("sum", False, dtype, keepdim)
        dim = None
    else:
        node = _SumOverDims
    keepdim = False if keepdim is NOT_GIVEN else keepdim if keepdim.__class__ is bool else keepdim_flag("sum", keepdim)
    # the whole of a plain float32/float64 tensor: apply's common case at once (graph.apply_one)
    if dim is None and dtype is None and (out := apply_one(node, x, None, keepdim)) is not None:
        return out
    ndim = x._data.ndim
    axes = None if dim is None else _axes(dim, ndim)  # (PyTorch checks the dims before a refused dtype=)
    x, asked = _accumulated_as(x, dtype)
    return _as_asked(_dims_as_given(node.apply(x, axes=axes, keepdim=keepdim), dim), asked)


def mean(x: Tensor, dim=NOT_GIVEN, keepdim: bool = NOT_GIVEN, *, dtype=None) -> Tensor:
    node = Mean  # (MeanBackward1 for the overload given a dim, None too: as sum's)
    if dim is NOT_GIVEN:
        if keepdim is not NOT_GIVEN:
            raise keepdim_without_dim("mean", False, dtype, keepdim)
        dim = None
    else:
        node = _MeanOverDims
    keepdim = False if keepdim is NOT_GIVEN else keepdim if keepdim.__class__ is bool else keepdim_flag("mean", keepdim)
    if dtype is not None:
        check_dtype_argument(dtype)
        x = promoted(x, dtype)
    if np_kind(x._data.dtype) not in "fc":
        raise RuntimeError(
            f"mean(): could not infer output dtype. {'Input' if dtype is None else 'Optional'} dtype must be either "
            f"a floating point or complex dtype. Got: {SCALAR_TYPE_NAMES[x.dtype.name]} (call .float() first, "
            "or pass a floating dtype=)"
        )
    ndim = x._data.ndim
    return _dims_as_given(node.apply(x, axes=None if dim is None else _axes(dim, ndim), keepdim=keepdim), dim)


@full_precision
def prod(x: Tensor, dim=NOT_GIVEN, keepdim: bool = NOT_GIVEN, *, dtype=None) -> Tensor:
    """The product of all elements (no ``dim``) or along ``dim`` (one int: PyTorch's ``prod`` takes no tuple of
    dims, and refuses ``dim=None``, TypeError, where ``sum`` takes it for all elements; ``keepdim`` needs a dim)."""
    if not_one_dim(dim):
        raise prod_dim_refused(dim, method=False, alone=keepdim is NOT_GIVEN and dtype is None)
    if keepdim is NOT_GIVEN:
        keepdim = False
    elif dim is NOT_GIVEN:
        raise keepdim_without_dim("prod", False, dtype, keepdim)
    elif keepdim.__class__ is not bool:
        keepdim = keepdim_flag("prod", keepdim)
    dim = None if dim is NOT_GIVEN else dim
    axes = _axes(dim, x._data.ndim)  # (PyTorch checks the dim before a refused dtype=)
    x, asked = _accumulated_as(x, dtype)
    if dim is None:
        return _as_asked(Prod.apply(x, axes=axes, keepdim=keepdim), asked)
    # (PyTorch's ProdBackward1 for the overload given a dim, which it keeps as given)
    return _as_asked(keep_as_given(_ProdOverDim.apply(x, axes=axes, keepdim=keepdim), dim=dim), asked)


def not_one_dim(dim) -> bool:
    """Whether ``prod``'s ``dim`` is None or a sequence of dims: PyTorch's ``prod`` takes one int dim only."""
    return dim is None or isinstance(dim, (tuple, list))


def prod_dim_refused(dim, method: bool, alone: bool) -> TypeError:
    """PyTorch's TypeError for ``prod(x, dim=None)`` or a tuple or list ``dim`` (``method``: ``x.prod(...)``): its
    argument parser matches no overload (``alone``: ``dim`` the only argument besides the tensor) or wants an int.
    (PyTorch words a positional ``dim`` as ``got (tuple)`` / ``(position 1)``; ember words it as a keyword.)"""
    kind = type(dim).__name__
    if not alone:
        return TypeError(f"prod(): argument 'dim' must be int, not {kind}")
    if method:
        return TypeError(f"prod() received an invalid combination of arguments - got (dim={kind}, ), but expected "
                         "one of:\n * (*, torch.dtype dtype = None)\n * (int dim, bool keepdim = False, *, "
                         "torch.dtype dtype = None)\n")
    return TypeError(f"prod() received an invalid combination of arguments - got (Tensor, dim={kind}), but expected "
                     "one of:\n * (Tensor input, *, torch.dtype dtype = None)\n * (Tensor input, int dim, bool "
                     "keepdim = False, *, torch.dtype dtype = None, Tensor out = None)\n")


def _max_or_min(x: Tensor, dim, keepdim: bool, largest: bool, other_op):
    if isinstance(dim, Tensor):
        if keepdim is not False:  # (max(input, other) has no third argument: PyTorch's parser matches no overload)
            raise TypeError(f"{'max' if largest else 'min'}() received an invalid combination of arguments - got "
                            f"(Tensor, Tensor, {c_type_name(keepdim)})")
        return other_op(x, dim)
    if x._data.dtype.kind == "c":  # (PyTorch's kernel of all elements has no complex version; the dim overload refuses)
        if dim is None:
            refuse_complex(x, "max_all" if largest else "min_all")
        raise RuntimeError(f"{'max' if largest else 'min'}(): does not support complex input")
    if dim is None:
        if x._data.size == 0:
            raise RuntimeError(
                f"{'max' if largest else 'min'}(): Expected reduction dim to be specified for "
                "input.numel() == 0. Specify the reduction dim with the 'dim' argument."
            )
        return Extreme.apply(x, fn=xp.max if largest else xp.min, axes=None, keepdim=False)
    d = _wrap_dim(dim, x._data.ndim)
    if x._data.ndim == 0:  # the single element is its own max, at index 0
        values = keep_dim_as_given(_ExtremeOfDim.apply(x, fn=xp.max if largest else xp.min, axes=None,
                                                       keepdim=keepdim), dim)
        index = Tensor._make(xp.zeros((), dtype=xp.int64))
        return (return_types.max if largest else return_types.min)._make((values, index))
    values = keep_dim_as_given((_MaxDim if largest else _MinDim).apply(x, dim=d, keepdim=keepdim, largest=largest), dim)
    node = values.grad_fn
    indices = node.indices if node is not None else _argext(x._data, d, keepdim, largest)
    return (return_types.max if largest else return_types.min)._make((values, Tensor._make(meta_results((x._data,),
                                                                                                 indices))))


def _argext(a, dim, keepdim, largest):
    idx = xp.argmax(a, axis=dim, keepdims=keepdim) if largest else xp.argmin(a, axis=dim, keepdims=keepdim)
    return idx.astype(xp.int64)


def max(x: Tensor, dim=None, keepdim: bool = False):
    from .elementwise import maximum

    return _max_or_min(x, dim, keepdim, True, maximum)


def min(x: Tensor, dim=None, keepdim: bool = False):
    from .elementwise import minimum

    return _max_or_min(x, dim, keepdim, False, minimum)


class AmaxAmin(Extreme):
    """amax / amin: ``Extreme`` named as PyTorch's."""

    nan_counts = False
    dims_given = None  # (``_dims_as_given``)
    _saved_dim = property(lambda self: self.dims_given or (() if self.axes is None else tuple(self.axes)))
    _saved_keepdim = property(lambda self: self.keepdim)

    def name(self) -> str:
        return "AmaxBackward0" if self.fn is xp.max else "AminBackward0"


def _extreme(name: str, fn, x: Tensor, dim, keepdim: bool) -> Tensor:
    if keepdim.__class__ is not bool:
        keepdim = keepdim_flag(name, keepdim)
    refuse_complex(x, "max_values_cpu" if fn is xp.max else "min_values_cpu")  # (PyTorch's kernel named)
    axes = _axes(dim, x._data.ndim)
    if x._data.size == 0:
        _refuse_empty_dims(name, x._data, dim)
    return _dims_as_given(AmaxAmin.apply(x, fn=fn, axes=axes, keepdim=keepdim), dim)


def _refuse_empty_dims(name: str, a, dim) -> None:
    """amax/amin's error for an empty input: over a dim of extent 0 an IndexError naming the first in ``dim``'s
    order as given (PyTorch's message), over all dims PyTorch's RuntimeError asking for a dim."""
    dims = () if dim is None else (dim,) if hasattr(dim, "__index__") else tuple(dim)
    if not dims:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    for d in dims:
        if a.shape[_wrap_dim(d, a.ndim)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {int(d)} to have non-zero size.")


def amax(x: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    return _extreme("amax", xp.max, x, dim, keepdim)


def amin(x: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    return _extreme("amin", xp.min, x, dim, keepdim)


def _arg_extreme(name: str, x: Tensor, dim, keepdim: bool, largest: bool) -> Tensor:
    if keepdim.__class__ is not bool:
        keepdim = keepdim_flag(name, keepdim)
    a = x._data
    if a.dtype.kind in "bc":
        raise RuntimeError(f"{name}(): does not support {'bool' if a.dtype == xp.bool_ else 'complex'} input")
    if dim is None:
        if a.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        flat = _argext(a.reshape(-1), 0, False, largest)
        return Tensor._make(meta_results((a,), flat.reshape((1,) * a.ndim) if keepdim else flat))
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return Tensor._make(xp.zeros((), dtype=xp.int64))
    _check_nonempty(name, a, (d,))
    return Tensor._make(meta_results((a,), _argext(a, d, keepdim, largest)))


def argmax(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return _arg_extreme("argmax", x, dim, keepdim, True)


def argmin(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return _arg_extreme("argmin", x, dim, keepdim, False)


def variance(x: Tensor, dim, unbiased, keepdim: bool, correction, name: str, root: bool = False):
    """The variance (``root``: the standard deviation) over ``dim`` with ``correction`` (default 1: Bessel's).
    Where the degrees of freedom (elements per output less ``correction``) are <= 0 it is inf or NaN, with
    PyTorch's warning naming the function ``name`` the user called (var, std, var_mean, std_mean). For var_mean and
    std_mean, the pair (spread, mean) of one node (``VarMean``)."""
    if keepdim.__class__ is not bool:
        keepdim = keepdim_flag(name, keepdim)
    if isinstance(dim, bool):  # var(x, False): the old positional `unbiased`
        dim, unbiased = None, dim
    # (the correction PyTorch's node shows: ``_moment_arguments``)
    given = correction if correction is not None else int(unbiased) if unbiased is not None else \
        None if dim is None else 1
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if np_kind(x._data.dtype) not in "fc":  # (PyTorch's message names var_mean and std_mean themselves)
        raise RuntimeError(f"{name if name.endswith('_mean') else 'std and var'} only support floating point and "
                           "complex dtypes")
    axes = _axes(dim, x._data.ndim)
    # (PyTorch's reduction factor is input numel over output numel: 0 for an empty input, whatever is reduced)
    if (_reduced_count(x._data.shape, axes) if x._data.size else 0) - correction <= 0:
        _warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                       "reduction factor (input numel divided by output numel).")
    # (PyTorch's var saves its input; the node keeps x - mean)
    if name in _MOMENT_NODES:
        spread, mean = _MOMENT_NODES[name].apply(x, axes=axes, correction=correction, keepdim=keepdim)
        return _moment_arguments(version_checked(spread, x), dim, given), mean
    out = (Std if root else Var).apply(x, axes=axes, correction=correction, keepdim=keepdim)
    return _moment_arguments(version_checked(out, x), dim, given)


def _moment_arguments(out: Tensor, dim, correction) -> Tensor:
    """``out``, whose node keeps ``dim`` (None, or the dims as given) and the correction as PyTorch's node shows them
    (its ``_saved_dim``, ``_saved_correction``): the correction given, 1 or 0 for ``unbiased`` given, 1 for a dim
    given without either (PyTorch's overload of a dim and ``unbiased=True``), else None. (A ``dim=None`` or
    ``correction=None`` given explicitly reads as not given here, where PyTorch's overload picked differs.)"""
    return keep_as_given(out, dim=None if dim is None else tuple(dim) if isinstance(dim, (tuple, list)) else (dim,),
                         correction=correction)


@torch_named("VarMeanBackward0")
class VarMean(MultiOutputNode, Var):
    """var_mean's one node of both results (``v.grad_fn is m.grad_fn``, as PyTorch's): the spread as ``Var`` (``Std``
    for ``StdMean``), the mean as PyTorch computes it with the spread (``_finite_mean``); the input's gradient is
    the sum of the spread's and the mean's, of those that got one."""

    def forward(self, x, axes, correction, keepdim):
        spread = super().forward(x, axes, correction, keepdim)
        if is_recorded(x):  # forward run again under create_graph: backward reads only the spread's intermediates
            return spread, None
        return spread, _row_major(_finite_mean(x, axes, keepdim))

    def backward(self, g_spread, g_mean):
        gx = None if g_spread is None else super().backward(g_spread)[0]
        if g_mean is not None:
            shape = self.saved[0].shape
            gm = xp.broadcast_to(_expand_back(g_mean, shape, self.axes, self.keepdim) / g_mean.dtype.type(self.count),
                                 shape)
            gx = gm if gx is None else gx + gm
        return (gx,)


@torch_named("StdMeanBackward0")
class StdMean(VarMean, Std):
    """std_mean's one node of both results (``VarMean`` with the spread as ``Std``), whose saved standard deviation
    PyTorch names ``_saved_result0`` (its first result)."""

    _saved_result0, _raw_saved_result0 = saved_tensor(1)
    _saved_result, _raw_saved_result = not_saved("result").values()


# name -> the node of both results
_MOMENT_NODES = {"var_mean": VarMean, "std_mean": StdMean}


def var(x: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None) -> Tensor:
    """The variance over ``dim`` (``variance``)."""
    return variance(x, dim, unbiased, keepdim, correction, "var")


def std(x: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None) -> Tensor:
    """The square root of the variance over ``dim`` (``variance``)."""
    return variance(x, dim, unbiased, keepdim, correction, "std", root=True)


def norm(x: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """Vector p-norm over ``dim`` (all elements by default); "fro" is the 2-norm (over at most two dims), "nuc"
    the nuclear norm of the matrix over ``dim`` (a 2-d input's two dims by default). One node,
    ``LinalgVectorNormBackward0`` as PyTorch's, for every ``p``."""
    if isinstance(p, str) and not (p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2)):
        from ..linalg import matrix_norm

        # as PyTorch's: "nuc", another name, or "fro" over more than two dims is a matrix norm (over every dim
        # when none is given), whose errors these are
        return matrix_norm(x, p, tuple(range(x._data.ndim)) if dim is None else dim, keepdim, dtype=dtype)
    dtype = check_norm_dtype(x, dtype, "linalg.vector_norm")
    if dtype is not None:
        x = promoted(x, dtype)
    order = 2.0 if p == "fro" or p is None else float(p)  # (None: PyTorch's 2-norm over ``dim``)
    axes = _axes(dim, x._data.ndim)
    if (order == xp.inf or order < 0) and x._data.size == 0:
        _refuse_empty_extreme(x, order, dim)
    out = LinalgVectorNorm.apply(x, order=order, axes=axes, keepdim=keepdim)
    # (PyTorch's node shows the order as given, "fro" as 2 and None as 2.0, and the dims as given)
    return keep_as_given(out, ord=2 if p == "fro" else order if p is None else p,
                         dim=None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim))


def _refuse_empty_extreme(x: Tensor, order: float, dim) -> None:
    """PyTorch's error for the inf norm or a negative order's (a max, a min or a sum of inverse powers: none has an
    identity) of an empty tensor over all dims, or over a dim of extent 0 (the first in ``dim``'s order, named as
    given); an empty tensor reduced only over dims of other extents is fine (an empty result)."""
    p = f"{order:g}"  # (as PyTorch prints the order: -1 for -1.0, inf, -0.5)
    if dim is None or not isinstance(dim, int) and len(dim) == 0:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on an empty tensor because the operation "
                           "does not have an identity")
    for d in (dim,) if isinstance(dim, int) else dim:
        if x._data.shape[d] == 0:  # ("1because": PyTorch's message has no space there)
            raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on the dimension {d}because this "
                               "dimension is empty and the operation does not have an identity")


def check_norm_dtype(x: Tensor, dtype, name: str):
    """PyTorch's checks of a norm's input and ``dtype=`` (checkFloatingOrComplex, check_linalg_norm_dtype): a
    floating or complex input; a floating or complex dtype, complex for a complex input only, to which the input's
    dtype promotes (no narrowing: float32 to float16 is refused, as complex to real). ``dtype`` as ember's dtype."""
    if np_kind(x._data.dtype) not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_TYPE_NAMES[x.dtype.name]}")
    if dtype is None:
        return None
    if dtype.__class__ is type:  # (a Python type, as PyTorch reads it)
        dtype = _dtype.from_python_type(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{SCALAR_TYPE_NAMES[dtype.name]}")
    if x.is_complex() != dtype.is_complex:
        kind = "complex" if x.is_complex() else "real"
        raise RuntimeError(f"{name}: dtype should be {kind} for {kind} inputs, but got {SCALAR_TYPE_NAMES[dtype.name]}")
    if _dtype.promote_types(x.dtype, dtype) != dtype:
        raise RuntimeError(f"{name}: the dtype of the input ({SCALAR_TYPE_NAMES[x.dtype.name]}) should be convertible "
                           f"without narrowing to the specified dtype ({SCALAR_TYPE_NAMES[dtype.name]})")
    return dtype


def _sgn(x):
    """x / |x| (0 at 0): the sign of a real or complex array."""
    if x.dtype.kind != "c":
        return sign_array(x)
    a = xp.abs(x)
    with xp.errstate(divide="ignore", invalid="ignore"):
        return xp.where(a == 0, 0, x / xp.where(a == 0, 1, a))


@torch_named("LinalgVectorNormBackward0")
class LinalgVectorNorm(Node):
    """The ``order``-norm over ``axes``: sqrt(sum |x|^2) (2), max / min |x| (inf / -inf), the count of non-zeros
    (0), sum(|x|^p)^(1/p); PyTorch's gradients (inf: split evenly among the elements at the extreme)."""
    float32_compute = True
    formula_reads = (0,)  # PyTorch's gradient formula reads the input: it requires grad (recorded._reading_inputs)
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_result, _raw_saved_result = saved_tensor(1)
    _saved_dim = given_argument("dim", lambda node: node.axes)
    _saved_keepdim = property(lambda node: node.keepdim)
    _saved_ord = given_argument("ord", lambda node: node.order, raw=True)

    def forward(self, x, order, axes, keepdim):
        out = vector_norm_array(x, order, axes, keepdim)
        self.saved = (x, out)
        self.order, self.axes, self.keepdim = order, axes, keepdim
        return out

    zero_count_gradient = False  # True: the 0-norm's gradient is zeros (pdist's own formula), not None

    def backward(self, g):
        if self.order == 0 and not self.zero_count_gradient:  # a count of non-zeros: PyTorch's formula gives no
            return (None,)                                    # gradient at all (None, not zeros)
        x, out = self.saved
        return (vector_norm_backward(g, x, out, self.order, self.axes, self.keepdim),)


def vector_norm_array(x, order, axes, keepdim):
    """The ``order``-norm of the array ``x`` over ``axes`` (LinalgVectorNorm's forward)."""
    if order == 2:
        out = xp.sqrt(xp.sum(_abs2(x), axis=axes, keepdims=keepdim))
    else:
        a = xp.abs(x)
        if order == xp.inf:
            out = xp.max(a, axis=axes, keepdims=keepdim)
        elif order == -xp.inf:
            out = xp.min(a, axis=axes, keepdims=keepdim)
        elif order == 0:
            out = xp.sum(a != 0, axis=axes, keepdims=keepdim).astype(a.dtype)
        elif order == 1:
            out = xp.sum(a, axis=axes, keepdims=keepdim)
        else:
            out = xp.sum(a ** order, axis=axes, keepdims=keepdim) ** (1 / order)
    return out if is_recorded(out) else _row_major(xp.asarray(out))  # (NumPy answers a full reduction with a
    # scalar)


def vector_norm_backward(g, x, out, p, axes, keepdim):
    """The gradient of the ``p``-norm ``out`` of ``x`` over ``axes`` for the output gradient ``g`` (LinalgVectorNorm's
    backward, also renorm's)."""
    g = _expand_back(g, x.shape, axes, keepdim)
    out = _expand_back(out, x.shape, axes, keepdim)
    if p == 0:
        return g * xp.zeros_like(xp.abs(x))
    if p == 1:
        return g * _sgn(x)
    # (the masks where the norm is 0 sit where PyTorch's do: differentiated again, the masked quotient's 0 / 0 makes
    # PyTorch's NaN with respect to x, while the gradient with respect to g stays finite)
    zero = out == 0
    with xp.errstate(divide="ignore", invalid="ignore"):
        if p == 2:  # d||x||/dx = x / ||x|| (0 where the norm is 0)
            return g * xp.where(zero, 0, x / out)
        a = xp.abs(x)
        if p in (xp.inf, -xp.inf):
            hit = (a == out) | (xp.isnan(a) & xp.isnan(out))
            count = xp.sum(hit, axis=axes, keepdims=True).astype(g.dtype)  # (int64 would make it float64)
            return g * _sgn(x) * hit / count
        if p < 1:
            scaled = _sgn(x) * xp.where(x == 0, 0, a ** (p - 1))
            return scaled * g * out ** (1 - p)
        scaled = _sgn(x) * a ** (p - 1) if p < 2 else x * a ** (p - 2)
        return scaled * xp.where(zero, 0, g / out ** (p - 1))


@torch_named("LogsumexpBackward0")
class LogSumExp(Node):
    float32_compute = True
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_result, _raw_saved_result = saved_tensor(1)
    _saved_dim = given_argument("dim", lambda node: node.axes)
    _saved_keepdim = property(lambda node: node.keepdim)

    def forward(self, x, axes, keepdim):
        # the shift: the largest (real part of an) element, -inf over an empty dim; a real shift of a complex x
        # keeps the result's imaginary part that of the principal log, in (-pi, pi], as PyTorch's
        m = xp.max(x.real if np_kind(x.dtype) == "c" else x, axis=axes, keepdims=True, initial=-xp.inf)
        m = xp.where(xp.isfinite(m), m, 0)
        out = xp.log(xp.sum(xp.exp(x - m), axis=axes, keepdims=True)) + m
        out = _row_major(out if keepdim else (out.reshape(()) if axes is None else out.squeeze(axes)))
        self.saved = (x, out)  # the output itself, so that create_graph differentiates through it
        self.axes, self.keepdim = axes, keepdim
        return out

    def backward(self, g):  # g * conj(softmax(x)) (conj: holomorphic in a complex x)
        x, out = self.saved
        g = _expand_back(g, x.shape, self.axes, self.keepdim)
        return (g * conj_if_complex(xp.exp(x - _expand_back(out, x.shape, self.axes, self.keepdim))),)


def logsumexp(x: Tensor, dim, keepdim: bool = False) -> Tensor:
    if isinstance(dim, (tuple, list)) and not dim and not keepdim and x._data.ndim and x._data.size:
        # PyTorch's: no dims reduces every one (its amax, kept as size-1 dims), whose sum into the 0-d result fails
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * x._data.ndim}")
    if np_kind(x._data.dtype) not in "fc":  # PyTorch computes integers and bools in the default float dtype
        x = cast(x, _dtype.get_default_dtype())
    out = LogSumExp.apply(x, axes=_axes(dim, x._data.ndim), keepdim=keepdim)
    return keep_as_given(out, dim=tuple(dim) if isinstance(dim, (tuple, list)) else (dim,))


def _truth(x: Tensor, out) -> Tensor:
    """all/any's result: bool, but uint8 for a uint8 input (PyTorch's kept legacy)."""
    out = _row_major(xp.asarray(out))
    return Tensor._make(meta_results((x._data,), out.astype(xp.uint8) if x._data.dtype == xp.uint8 else out))


def _truth_axes(dim, ndim: int):
    """``all``/``any``'s axes: an empty dim list reduces no dim (each element's truth, the shape kept), as
    PyTorch's, where the other reductions read it as every dim."""
    return () if isinstance(dim, (list, tuple)) and not dim else _axes(dim, ndim)


def all(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return _truth(x, xp.all(x._data, axis=_truth_axes(dim, x._data.ndim), keepdims=keepdim))


def any(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return _truth(x, xp.any(x._data, axis=_truth_axes(dim, x._data.ndim), keepdims=keepdim))


@torch_named("CumsumBackward0")
class CumSum(Node):
    linear = True
    float32_compute = True
    _saved_dim = given_argument("dim", lambda node: node.dim)

    def forward(self, x, dim):
        self.dim = dim
        return running(xp.cumsum, x, dim, self.half_dtype)

    def backward(self, g):  # reverse cumulative sum
        return (_reverse_cumsum(g, self.dim, self.half_dtype),)


def cumsum(x: Tensor, dim: int, *, dtype=None) -> Tensor:
    _wrap_dim(dim, builtins.max(x._data.ndim, 1))  # (PyTorch checks the dim before a refused dtype=)
    if dtype is not None and _dtype.to_np(dtype) == xp.bool_:  # (PyTorch has no bool running sum)
        raise _dtype.not_implemented_for("cumsum_out_cpu", _dtype.bool_)
    x, asked = _accumulated_as(x, dtype)
    if x._data.ndim == 0:  # (NumPy's cumsum has no axis 0 in a 0-d array)
        _wrap_dim(dim, 0)
        return _as_asked(CumSum.apply(x.reshape(1), dim=0).reshape(()), asked)
    return _as_asked(keep_as_given(CumSum.apply(x, dim=_wrap_dim(dim, x._data.ndim)), dim=dim), asked)

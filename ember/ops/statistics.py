"""Order statistics and paired moments: median, nanmedian, kthvalue, mode, quantile, nanquantile, std_mean/var_mean,
count_nonzero, aminmax."""

from __future__ import annotations

import functools

from .. import _warnings, return_types
from .._arg_aliases import is_int
from .._backend import quiet, xp
from .._dtype import SCALAR_TYPE_NAMES, not_implemented_for, np_kind
from .._kernels import mode as compiled_mode
from .._kernels.policy import policy
from .._meta import meta_results
from .._size import c_type_name, int_argument
from .._std_sort import std_sort
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import MultiOutputNode, Node, shown_as, torch_named
from ..autograd.saved_attributes import keep_dim_as_given
from .cumulative import Selected
from .elementwise import refuse_integer_history
from .reduction import _axes, _expand_back, _row_major, evenly_distributed_mask, variance
from .sorting import _order, _take, widened_rows
from .unary import sqrt

_Median, _Kth, _MinMax, _Mode = return_types.median, return_types.kthvalue, return_types.aminmax, return_types.mode


def _kth_along(x: Tensor, k, dim: int, keepdim: bool, result, node: type[Selected], nan_wins: bool = False,
               among_equals=None):
    """The k-th smallest (from 0) along ``dim`` and its index; the gradient goes to that element, through one
    ``node`` (PyTorch's KthvalueBackward0, MedianBackward1 ...). ``k``: an int, or an int array of the result's
    shape with ``dim`` kept (one rank per slice: nanmedian's).

    ``nan_wins``: a slice holding NaN answers its first NaN (PyTorch's median propagates NaN). ``among_equals(a,
    idx, dim)``: the index of another of the elements equal to the one found, where the kernel picks another.
    """
    a = x._data
    if a.ndim == 0:
        zero = xp.zeros((), dtype=xp.int64)
        return result._make((node.apply(x, index=zero, dim=0), Tensor._make(meta_results((x._data,), zero))))
    order = _order(a, dim, False)
    if isinstance(k, int):
        idx = xp.take(order, [k], axis=dim).astype(xp.int64)
    else:
        idx = xp.take_along_axis(order, k, axis=dim).astype(xp.int64)
    if among_equals is not None:
        idx = among_equals(a, idx, dim)
    if nan_wins:
        nans = xp.isnan(a) if np_kind(a.dtype) == "f" else xp.zeros(a.shape, dtype=bool)
        has = nans.any(axis=dim, keepdims=True)
        idx = xp.where(has, xp.argmax(nans, axis=dim, keepdims=True), idx)
    idx = _row_major(idx)  # (nanmedian's ranks follow a channels-last input's layout; PyTorch's result is row-major)
    values = node.apply(x, index=idx, dim=dim, keepdim=keepdim)
    if not keepdim:
        idx = idx.squeeze(dim)
    return result._make((values, Tensor._make(meta_results((x._data,), idx))))


class EvenlyDistributed(Node):
    """``median()``/``nanmedian()`` of all elements: the ``value`` found, its gradient split evenly among the
    elements equal to it (every NaN, for a NaN result), as PyTorch's ``evenly_distribute_backward``."""

    def forward(self, x, value):
        self.saved = (x, value)
        return value

    def backward(self, g):
        x, value = self.saved
        mask = evenly_distributed_mask(x, value)
        return (mask * (g / mask.sum().astype(g.dtype)),)


@torch_named("MedianBackward0")
class MedianBackward0(EvenlyDistributed):
    """``median()``."""


@torch_named("NanmedianBackward0")
class NanmedianBackward0(EvenlyDistributed):
    """``nanmedian()``."""


def _check_median_dtype(x: Tensor, dim) -> None:
    if x._data.dtype.kind in "bc":  # (PyTorch's CPU kernels, named median_cpu / median_out for nanmedian too)
        raise not_implemented_for("median_cpu" if dim is None else "median_out", x.dtype)


def _nan_in(dtype):
    """The NaN of an empty ``median()``, as PyTorch's CPU kernel stores it in ``dtype``: an integer dtype holds
    the C cast of NaN (the lowest int64 or int32, an 8- or 16-bit one the low bits of int32's: 0; bool True); a
    complex one NaN + 0j."""
    if np_kind(dtype) in "fc":
        return xp.array(xp.nan, dtype=dtype)
    with quiet():
        return xp.array(xp.nan).astype(xp.int64 if dtype.itemsize == 8 else xp.int32).astype(dtype)


def median(x: Tensor, dim: int | None = None, keepdim: bool = False):
    """The lower median (the ((n - 1) // 2)-th smallest, no averaging), as in PyTorch; NaN propagates.

    Without ``dim``: a 0-d tensor over all elements, whose gradient is split evenly among the elements equal to
    it. With ``dim``: (values, indices), the gradient going to the indexed element.
    """
    return _median(x, dim, keepdim, ignore_nan=False)


def nanmedian(x: Tensor, dim: int | None = None, keepdim: bool = False):
    """``median`` of the elements that are not NaN: the ((m - 1) // 2)-th smallest of a slice's m non-NaN
    elements; a slice of NaN only gives NaN (with dim: the index of its first element). Integer tensors have no
    NaN: ``median``'s result."""
    return _median(x, dim, keepdim, ignore_nan=True)


def _median(x: Tensor, dim, keepdim: bool, ignore_nan: bool):
    a = x._data
    if dim is not None or a.size:  # (an empty tensor's median() is its NaN before PyTorch's kernel checks the dtype)
        _check_median_dtype(x, dim)
    floating = np_kind(a.dtype) == "f"  # (bfloat16's NumPy kind is "V")
    nan_named, ignore_nan = ignore_nan, ignore_nan and floating
    if dim is None:
        flat = a.reshape(-1)
        if ignore_nan:
            flat = flat[~xp.isnan(flat)]
        if flat.size == 0:
            value = _nan_in(a.dtype)
        elif not ignore_nan and floating and xp.isnan(flat).any():
            value = xp.array(xp.nan, dtype=a.dtype)
        else:
            k = (flat.size - 1) // 2
            value = xp.partition(flat, k)[k].reshape(())
        node = NanmedianBackward0 if nan_named else MedianBackward0
        return node.apply(x, value=meta_results((a,), value.astype(a.dtype)))
    d = _wrap_dim(dim, a.ndim)
    n = a.shape[d] if a.ndim else 1
    if n == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    result = return_types.nanmedian if nan_named else _Median
    if ignore_nan and a.ndim:
        count = (~xp.isnan(a)).sum(axis=d, keepdims=True)
        # the ((m - 1) // 2)-th of m non-NaN elements (NaN sort last); a slice of NaN only answers the NaN
        # PyTorch's std::nth_element leaves first among n equal elements
        k = xp.where(count > 0, (count - 1) // 2, _nth_of_equals(n))
        return keep_dim_as_given(_kth_along(x, k, d, keepdim, result, NanmedianNode), dim)
    return keep_dim_as_given(_kth_along(x, (n - 1) // 2, d, keepdim, result, NanmedianNode if nan_named else
                                        MedianNode, nan_wins=not ignore_nan), dim)


@functools.lru_cache(maxsize=64)
def _nth_of_equals(n: int) -> int:
    """Which of ``n`` elements that all compare equal std::nth_element (libstdc++'s introselect, asked for the
    first) leaves first: the index PyTorch's nanmedian gives for a slice of NaN only. Each round puts the middle
    element first as the pivot, then swaps the others pairwise from both ends inwards; the range left is the
    part before where the two ends met, until 3 elements or fewer remain (insertion sort moves no equal ones)."""
    idx = list(range(n))
    last = n
    while last > 3:
        mid = last // 2
        idx[0], idx[mid] = idx[mid], idx[0]
        lo, hi = 1, last - 1
        while lo < hi:
            idx[lo], idx[hi] = idx[hi], idx[lo]
            lo, hi = lo + 1, hi - 1
        last = lo
    return idx[0]


def kthvalue(x: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """The k-th smallest element (k from 1) along ``dim`` (NaN above every number) and its index: among equal
    elements, the one PyTorch's quickselect picks (``_selected_among_equals``)."""
    k = int_argument(k, "kthvalue", "k")
    d = _wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d] if x._data.ndim else 1
    if n == 0:  # (PyTorch checks the extent before k)
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if x._data.dtype == xp.bool_ and x._data.ndim:  # (PyTorch's kernel has no bool version; the checks above
        # come first, and a 0-d tensor is its own k-th value before the kernel is chosen)
        raise not_implemented_for("kthvalue_cpu", x.dtype)
    return keep_dim_as_given(_kth_along(x, k - 1, d, keepdim, _Kth, KthvalueNode, among_equals=lambda a, idx, axis:
                                        _selected_among_equals(a, idx, axis, k - 1)), dim)


def _selected_among_equals(a, idx, dim: int, k: int):
    """``idx`` (the k-th smallest's index along ``dim``, the first of equal values: a stable sort's) where the
    slice holds other elements equal to it (NaN: other NaN) replaced by the one PyTorch's kernel leaves at
    ``k`` (``_quick_select``); one slice at a time, for those slices only."""
    rows = xp.moveaxis(a, dim, -1).reshape(-1, a.shape[dim])
    picked = xp.moveaxis(idx, dim, -1).reshape(-1).copy()
    kth = rows[xp.arange(rows.shape[0]), picked]
    equal = rows == kth[:, None]
    if np_kind(a.dtype) == "f":
        equal |= xp.isnan(rows) & xp.isnan(kth)[:, None]
    tied = xp.flatnonzero(equal.sum(axis=1) > 1)
    if not tied.size:
        return idx
    for r in tied:
        row = rows[r].astype(xp.float64) if np_kind(a.dtype) == "f" else rows[r]
        picked[r] = _quick_select(row.tolist(), k)
    shape = xp.moveaxis(idx, dim, -1).shape
    return xp.moveaxis(picked.reshape(shape), -1, dim)


def _quick_select(values: list, k: int) -> int:
    """The index PyTorch's kthvalue gives for the ``k``-th smallest (from 0) of ``values``: its quick_select_template
    step for step (median-of-three pivot, NaN above every number), the (value, index) pairs swapped together."""
    idx = list(range(len(values)))

    def above(p, q) -> bool:  # (PyTorch's gt_or_nan)
        return (p != p and q == q) or p > q

    def swap(i: int, j: int) -> None:
        values[i], values[j] = values[j], values[i]
        idx[i], idx[j] = idx[j], idx[i]

    lo, hi = 0, len(values) - 1
    while hi > lo:
        if hi == lo + 1:
            if above(values[lo], values[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)
        if above(values[lo + 1], values[hi]):
            swap(lo + 1, hi)
        if above(values[lo], values[hi]):
            swap(lo, hi)
        if above(values[lo + 1], values[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, values[lo]
        while True:
            i += 1
            while above(pivot, values[i]):
                i += 1
            j -= 1
            while above(values[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


@torch_named("KthvalueBackward0")
class KthvalueNode(Selected):
    scatter = "scatter"  # (one index per row)
    _saved_keepdim = property(lambda node: node.keepdim)
    _saved_self_sym_sizes = property(lambda node: tuple(node.shape))


@torch_named("MedianBackward1")
class MedianNode(KthvalueNode):
    pass


@torch_named("NanmedianBackward1")
class NanmedianNode(KthvalueNode):
    pass


def mode(x: Tensor, dim: int = -1, keepdim: bool = False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the index PyTorch's CPU
    kernel gives it; the gradient goes to that element. That kernel sorts each row's (value, index) pairs with
    libstdc++'s ``std::sort`` by value and takes the last pair of the value's run: for a row of up to 16 elements
    (an insertion sort, which keeps equal values in order) the value's last occurrence; for a longer one, where
    introsort's partitions reorder equal values, the same sort run here step for step (``_mode_indices``: compiled,
    ``ember._kernels.mode``, on every row where ``policy.compiles_or_loaded``; otherwise NumPy's sort, and the
    Python reference ``_mode_index``, which costs about a second for 1000 rows of 1000, on the rows that need it).
    A row holding NaN too (NaN breaks ``<``; each NaN counts apart). Complex tensors raise PyTorch's
    NotImplementedError."""
    a = x._data
    if a.ndim == 0:
        zero = xp.zeros((), dtype=xp.int64)
        return keep_dim_as_given(_Mode._make((ModeNode.apply(x, index=zero, dim=0),
                                              Tensor._make(meta_results((x._data,), zero)))), dim)
    d = _wrap_dim(dim, a.ndim)
    rows = xp.moveaxis(a, d, -1)
    n = rows.shape[-1]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    if np_kind(a.dtype) == "c" and a.size:  # (a 0-d tensor is its own mode, an empty result needs no kernel)
        raise not_implemented_for("mode_cpu", x.dtype)
    if a.size and policy.compiles_or_loaded(a.size):
        idx = _mode_indices(rows)  # (every row: PyTorch's own steps, in about its time)
    else:
        idx = _mode_indices_numpy(rows)
    idx = xp.expand_dims(idx, d)
    values = ModeNode.apply(x, index=idx, dim=d, keepdim=keepdim)  # (PyTorch's ModeBackward0 saves no input)
    if not keepdim:
        idx = idx.squeeze(d)
    return keep_dim_as_given(_Mode._make((values, Tensor._make(meta_results((x._data,), idx)))), dim)


_INSERTION_SORTED = 16  # (libstdc++'s std::sort insertion-sorts a range of up to this many elements: stable)


def _mode_indices(rows):
    """PyTorch's mode index of each of ``rows`` (the reduced dimension last), compiled (``ember._kernels.mode``):
    each row's pairs sorted by ``std::sort``, then its scan, on the values widened (``widened_rows``)."""
    wide = widened_rows(rows).reshape(-1, rows.shape[-1])
    out = xp.empty(len(wide), xp.int64)
    compiled_mode.mode_indices(wide, xp.arange(len(wide)), out)
    return out.reshape(rows.shape[:-1])


def _mode_indices_numpy(rows):
    """``_mode_indices`` without numba: the mode of each row from NumPy's sort (the smallest of the most frequent
    values), its last occurrence as the index, which is ``std::sort``'s for a row of up to 16 values (an insertion
    sort: equal values keep their order) without NaN; the Python reference (``_mode_index``) for the rest of the
    rows whose mode occurs more than once and for rows holding NaN."""
    n = rows.shape[-1]
    s = xp.sort(rows, axis=-1)
    pos = xp.broadcast_to(xp.arange(n), s.shape)
    starts = xp.ones(s.shape, dtype=bool)
    starts[..., 1:] = s[..., 1:] != s[..., :-1]
    ends = xp.ones(s.shape, dtype=bool)
    ends[..., :-1] = starts[..., 1:]
    # run length at each sorted position: (its run's last position) - (its run's first position) + 1
    first = xp.maximum.accumulate(xp.where(starts, pos, 0), axis=-1)
    last = xp.flip(xp.minimum.accumulate(xp.flip(xp.where(ends, pos, n), -1), axis=-1), -1)
    best = xp.take_along_axis(s, xp.argmax(last - first, axis=-1)[..., None], -1)  # first max: the smallest
    hits = rows == best
    idx = xp.asarray(n - 1 - xp.argmax(hits[..., ::-1], axis=-1), dtype=xp.int64)  # (an array: written below)
    if idx.size and (n > _INSERTION_SORTED or np_kind(rows.dtype) == "f"):
        flat_rows, flat_idx = rows.reshape(-1, n), idx.reshape(-1)
        # (rows of more than 16 elements whose value occurs more than once, and rows holding NaN: one at a time)
        redo = (hits.reshape(-1, n).sum(axis=1) > 1) if n > _INSERTION_SORTED else xp.zeros(len(flat_idx), bool)
        if np_kind(rows.dtype) == "f":
            redo |= xp.isnan(flat_rows).any(axis=1)
        which = xp.flatnonzero(redo)
        if which.size:
            wide = widened_rows(flat_rows[which])
            for r, row in zip(which.tolist(), wide.tolist()):
                flat_idx[r] = _mode_index(row)
    return idx


def _mode_index(row: list) -> int:
    """The index PyTorch's CPU mode gives for ``row``: (value, index) pairs sorted by value with libstdc++'s
    ``std::sort``, then the last pair of the first longest run of values that compare equal (a NaN equals nothing:
    a run of its own)."""
    pairs = [(v, k) for k, v in enumerate(row)]
    std_sort(pairs, _value_less)
    best, best_count, count = 0, 0, 0
    for i, (v, k) in enumerate(pairs):
        count += 1
        if i == len(pairs) - 1 or v != pairs[i + 1][0]:
            if count > best_count:
                best, best_count = k, count
            count = 0
    return best


def _value_less(p: tuple, q: tuple) -> bool:
    return p[0] < q[0]


@torch_named("ModeBackward0")
class ModeNode(KthvalueNode):  # (its saved attributes too)
    pass


_ROUNDINGS = ("linear", "lower", "higher", "midpoint", "nearest")
_SPLITTER = 134217729.0  # 2**27 + 1: Dekker's split of a float64 into two halves whose products are exact


def _fused_multiply_add(a, b, c):
    """``a * b + c`` rounded once, as the fused multiply-add of PyTorch's vectorised kernels (float32: the product
    is exact in float64; float64: Dekker's exact product and the sum's rounding error, added back)."""
    if a.dtype == xp.float32:
        return (a.astype(xp.float64) * b + c).astype(xp.float32)
    with xp.errstate(all="ignore"):
        p = a * b
        t = _SPLITTER * a
        a_hi = t - (t - a)
        t = _SPLITTER * b
        b_hi = t - (t - b)
        a_lo, b_lo = a - a_hi, b - b_hi
        p_err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo  # a * b == p + p_err exactly
        s = p + c
        v = s - p
        s_err = (p - (s - v)) + (c - v)  # p + c == s + s_err exactly
        out = s + (s_err + p_err)
    return xp.where(xp.isfinite(out), out, p + c)


class QuantileLerp(Node):
    """The interpolation between the ranks below and above (``weight``: an array of the result's dtype), as
    PyTorch's ``lerp_`` kernel computes it to the last bit: ``below + w * (above - below)`` for |w| < 0.5, else
    ``above + (w - 1) * (above - below)``, each a fused multiply-add. Gradients ``g * (1 - w)`` and ``g * w``."""

    diagonal_jacobian = True

    def forward(self, below, above, weight):
        self.weight = weight
        small = xp.abs(weight) < 0.5
        coeff = xp.where(small, weight, weight - weight.dtype.type(1))
        with xp.errstate(all="ignore"):
            diff = above - below
        return _fused_multiply_add(coeff, diff, xp.where(small, below, above))

    def backward(self, g):
        return g * (1 - self.weight), g * self.weight


def quantile(x: Tensor, q, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear"
             ) -> Tensor:
    """The ``q``-quantiles (a float or a 1-d tensor in [0, 1]) along ``dim`` (default: of all elements), as
    ``torch.quantile``: between the two nearest ranks of the sorted values by ``interpolation`` (linear,
    lower, higher, midpoint, nearest); a slice holding NaN gives NaN. For a 1-d ``q`` the quantiles are
    the first dimension of the result. The gradient flows to the ranks used."""
    return _quantile(x, q, dim, keepdim, interpolation, "quantile")


def nanquantile(x: Tensor, q, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear"
                ) -> Tensor:
    """``quantile`` of the elements that are not NaN: a slice's ranks run over its m non-NaN elements (q * (m - 1));
    a slice of NaN only gives NaN."""
    return _quantile(x, q, dim, keepdim, interpolation, "nanquantile")


def _quantile(x: Tensor, q, dim, keepdim: bool, interpolation: str, name: str) -> Tensor:
    """quantile (``name``) or nanquantile, PyTorch's checks in its order, its messages (all naming quantile())."""
    from .movement import movedim
    from .shape import reshape, squeeze

    if not isinstance(q, Tensor):
        value = float(q)
        if not 0 <= value <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {value:g}")
    if interpolation not in _ROUNDINGS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if not x._data.size:
        raise RuntimeError("quantile() input tensor must be non-empty")
    d = _wrap_dim(0 if dim is None else dim, x._data.ndim)
    qs = q._data if isinstance(q, Tensor) else xp.asarray(value, dtype=x._data.dtype)
    if qs.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if x._data.dtype.name not in ("float32", "float64"):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if qs.dtype != x._data.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if ((qs < 0) | (qs > 1)).any():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    src = reshape(x, -1) if dim is None else x
    d = 0 if dim is None else d
    ordered = _take(src, xp.argsort(src._data, axis=d, kind="stable"), d) if src._data.ndim else reshape(src, 1)
    nan = xp.isnan(ordered._data)
    shape = [1] * ordered._data.ndim
    shape[d] = qs.size
    # the ranks in the input's dtype, as PyTorch's. NaN sort last: nanquantile's ranks run over a slice's m
    # non-NaN elements (0 for a slice of NaN only: its NaN); quantile's are the last (a NaN) where a slice has one
    if name == "nanquantile":
        pos = xp.maximum(qs.reshape(shape) * ((~nan).sum(axis=d, keepdims=True) - 1).astype(qs.dtype), 0)
    else:
        last = nan.shape[d] - 1
        pos = xp.where(nan.any(axis=d, keepdims=True), qs.dtype.type(last), qs.reshape(shape) * qs.dtype.type(last))
    lo, hi = xp.floor(pos), xp.ceil(pos)
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    elif interpolation == "nearest":
        lo = hi = xp.round(pos)  # half to even, as PyTorch
    frac = xp.where(hi > lo, 0.5 if interpolation == "midpoint" else pos - lo, 0.0).astype(x._data.dtype)
    target = list(ordered._data.shape)
    target[d] = qs.size
    below = _take(ordered, xp.broadcast_to(lo.astype(xp.int64), target), d)
    above = _take(ordered, xp.broadcast_to(hi.astype(xp.int64), target), d)
    out = QuantileLerp.apply(below, above, weight=frac)
    out = movedim(out, d, 0)  # the quantiles first
    if dim is None and keepdim:
        out = reshape(out, (qs.size,) + (1,) * x._data.ndim)
    elif dim is not None and keepdim:
        out = reshape(out, (qs.size,) + tuple(1 if i == d else s for i, s in enumerate(x._data.shape)))
    elif dim is None:
        out = reshape(out, (qs.size,))
    # PyTorch's composite ends with a squeeze over a list of dims, whatever q is: its node SqueezeBackward4
    return shown_as(squeeze(out, 0) if qs.ndim == 0 else out, "SqueezeBackward4")


def std_mean(x: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None):
    """(std, mean) over ``dim``: two tensors of one node, as PyTorch's."""
    return variance(x, dim, unbiased, keepdim, correction, "std_mean", root=True)


def var_mean(x: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None):
    """(var, mean) over ``dim``: two tensors of one node, as PyTorch's."""
    return variance(x, dim, unbiased, keepdim, correction, "var_mean")


def count_nonzero(x: Tensor, dim=None) -> Tensor:
    """The number of non-zero elements (over ``dim``: an int or a tuple), int64."""
    count = _row_major(xp.asarray(xp.count_nonzero(x._data, axis=_axes(dim, x._data.ndim)), dtype=xp.int64))
    return Tensor._make(meta_results((x._data,), count))


@torch_named("AminmaxBackward0")
class Aminmax(MultiOutputNode):
    """aminmax's one node of both results (``mn.grad_fn is mx.grad_fn``, as PyTorch's): each result's gradient is
    split evenly among its tied extremes, as amin's and amax's; a result that got none adds nothing (its tensor
    hooks are called with None, as PyTorch calls them)."""

    def forward(self, x, axes, keepdim):
        lo, hi = xp.min(x, axis=axes, keepdims=True), xp.max(x, axis=axes, keepdims=True)
        if not keepdim:
            lo, hi = (lo.reshape(()), hi.reshape(())) if axes is None else (lo.squeeze(axes), hi.squeeze(axes))
        lo, hi = _row_major(lo), _row_major(hi)  # (PyTorch's results are row-major, whatever the input's layout)
        # the results as returned: PyTorch saves them, so changing one in place before backward is its error
        self.saved = (x, lo, hi)
        self.axes, self.keepdim = axes, keepdim
        return lo, hi

    def backward(self, g_min, g_max):
        x, lo, hi = self.saved
        total = None
        for g, out in ((g_min, lo), (g_max, hi)):
            if g is not None:
                mask = x == _expand_back(out, x.shape, self.axes, self.keepdim)
                # (the count in g's dtype: each share rounded there before the two are added, as PyTorch's)
                count = mask.sum(axis=self.axes, keepdims=True).astype(g.dtype)
                part = mask * (_expand_back(g, x.shape, self.axes, self.keepdim) / count)
                total = part if total is None else total + part
        return (total,)


def aminmax(x: Tensor, *, dim: int | None = None, keepdim: bool = False):
    """(min, max) over all elements or along the one dim ``dim`` (an int: a tuple is PyTorch's TypeError)."""
    if dim is not None and not is_int(dim):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {c_type_name(dim)}")
    a = x._data
    if a.dtype.kind == "c":
        raise not_implemented_for("aminmax_cpu", x.dtype)
    axes = _axes(dim, a.ndim)
    if a.size == 0:
        if dim is None:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        if axes is not None and a.shape[axes[0]] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {axes[0]} to have non-zero size.")
    return _MinMax._make(Aminmax.apply(x, axes=axes, keepdim=keepdim))


@torch_named("NansumBackward0")
class Nansum(Node):
    """The sum with NaN counted as zero, as one node saving its input (PyTorch's): the gradient is zero at the NaN
    elements. With ``dtype`` the input is summed in that dtype and the gradient comes back in the input's;
    half-precision elements are accumulated in float32 (PyTorch's CPU kernel)."""

    def forward(self, x, axes, keepdim, dtype=None):
        self.saved = (x,)
        self.axes, self.keepdim = axes, keepdim
        out_dtype = x.dtype if dtype is None else dtype
        total = out_dtype
        if total.itemsize == 2 and np_kind(total) == "f":
            total = xp.dtype(xp.float32)
        # (the elements are first converted to ``dtype``, rounded there, as PyTorch's ``to(dtype)`` before the sum)
        values = xp.where(xp.isnan(x), 0, x).astype(out_dtype, copy=False).astype(total, copy=False)
        return _row_major(values.sum(axis=axes, keepdims=keepdim).astype(out_dtype))

    def backward(self, g):
        (x,) = self.saved
        g = _expand_back(g.astype(x.dtype), x.shape, self.axes, self.keepdim)
        return (xp.where(xp.isnan(x), 0, xp.broadcast_to(g, x.shape)),)


def nansum(x: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The sum with NaN counted as zero (they get a zero gradient)."""
    from .reduction import sum

    if x.is_complex():
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if not x.is_floating_point():
        return sum(x, dim, keepdim, dtype=dtype)
    axes = _axes(dim, x._data.ndim)  # (PyTorch checks the dims before a refused dtype=)
    refuse_integer_history(x, dtype)
    if dtype is not None and dtype.is_complex:  # (a floating input's: PyTorch's kernel has no complex version)
        raise not_implemented_for("nansum_cpu", dtype)
    dtype = None if dtype is None else dtype.np
    return Nansum.apply(x, axes=axes, keepdim=keepdim, dtype=dtype)


def nanmean(x: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The mean of the non-NaN elements (NaN where all are NaN)."""
    from .elementwise import div

    if x.is_complex():  # (PyTorch's nanmean is nansum over a count, and its nansum refuses complex)
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if not x.is_floating_point():
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{SCALAR_TYPE_NAMES[x.dtype.name]}")
    total = nansum(x, dim, keepdim, dtype=dtype)  # (in ``dtype``: the mean is of that dtype, as PyTorch's)
    counts = Tensor._make(_row_major(xp.sum(~xp.isnan(x._data), axis=_axes(dim, x._data.ndim), keepdims=keepdim)
                                     .astype(total._data.dtype)))
    return div(total, counts)


def cov(x: Tensor, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in ``x``'s rows (a 1-D ``x``: one variable), observations in
    columns, as PyTorch's (and NumPy's ``cov``): ``correction`` 1 is the unbiased estimate, 0 the population one;
    integer ``fweights`` repeat observations, floating ``aweights`` weight them. A 0-d result for one variable.
    Composed of differentiable ops: gradients flow to ``x`` and to the weights."""
    from .elementwise import div, mul, sub
    from .linalg import mm
    from .reduction import sum
    from .shape import squeeze, unsqueeze

    if x.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {x.dim()} "
                           "dimensions")
    if x.dtype.name == "bool":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    obs = x.reshape(1, -1) if x.dim() < 2 else x
    n = obs.shape[1]
    w = None
    if fweights is not None:
        if fweights.dim() > 1:
            raise RuntimeError("cov(): expected fweights to have one or fewer dimensions but got fweights with "
                               f"{fweights.dim()} dimensions")
        if fweights.is_floating_point() or fweights.is_complex() or fweights.dtype.name == "bool":
            raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights with "
                               f"{_c10_name(fweights)} dtype")
        if fweights.numel() != n:
            raise RuntimeError("cov(): expected fweights to have the same numel as there are observations in the "
                               f"input but got {fweights.numel()} != {n}")
        if n and bool((fweights._data < 0).any()):
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.dim() > 1:
            raise RuntimeError("cov(): expected aweights to have one or fewer dimensions but got aweights with "
                               f"{aweights.dim()} dimensions")
        if not aweights.is_floating_point():
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{_c10_name(aweights)} dtype")
        if aweights.numel() != n:
            raise RuntimeError("cov(): expected aweights to have the same numel as there are observations in the "
                               f"input but got {aweights.numel()} != {n}")
        if n and bool((aweights._data < 0).any()):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else mul(w, aweights)
    w_sum = sum(w) if w is not None else Tensor._make(xp.asarray(n, dtype=xp.int64))
    if w is not None and not bool(w_sum._data != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = div(sum(mul(obs, w) if w is not None else obs, 1), w_sum)
    if w is not None and correction != 0 and aweights is not None:
        norm_factor = sub(w_sum, div(mul(sum(mul(w, aweights)), correction), w_sum))
    else:
        norm_factor = sub(w_sum, correction)
    if bool(norm_factor._data <= 0):
        _warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                       "observations.")
        norm_factor = Tensor._make(xp.zeros_like(norm_factor._data))
    centred = sub(obs, unsqueeze(avg, 1))
    weighted = mul(centred, w) if w is not None else centred
    return squeeze(div(mm(centred, weighted.t().conj()), norm_factor))


def corrcoef(x: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in ``x``'s rows (``cov`` normalised by the standard
    deviations, clipped to [-1, 1] as PyTorch's); one variable: ``cov / cov`` (1, or NaN for a constant)."""
    from .elementwise import div
    from .unary import clamp

    if x.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{x.dim()} dimensions")
    c = cov(x)
    if c.dim() == 0:
        return div(c, c)
    d = c.diagonal()
    stddev = sqrt(d.real if d.is_complex() else d)
    c = div(div(c, stddev.view(-1, 1)), stddev.view(1, -1))
    if c.is_complex():
        return c
    return clamp(c, -1, 1)


def _c10_name(t: Tensor) -> str:
    from .._dtype import SCALAR_TYPE_NAMES

    return SCALAR_TYPE_NAMES[t.dtype.name]

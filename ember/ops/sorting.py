"""Sorting and selection: sort, argsort, topk, and related helpers.

The order is computed on the raw array (no gradient); the values are then
picked by one node, as PyTorch records sort and topk (SortBackward0, TopkBackward0),
so the gradient flows back to the selected positions. NaN sorts as the largest value, as in PyTorch.
"""

from __future__ import annotations

import numbers
import operator

from .. import return_types
from .._backend import xp
from .._creation import laid_out_like
from .._dtype import np_kind
from .._kernels import mode as compiled_sort
from .._kernels.policy import policy
from .._meta import meta_results, strides_like
from .._not_given import NOT_GIVEN
from .._size import int_argument
from .._std_sort import std_sort
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import torch_named
from ..autograd.saved_attributes import keep_dim_as_given
from .cumulative import Selected
from .elementwise import refuse_complex
from .indexing import Gather

_Sort, _TopK = return_types.sort, return_types.topk


def _order(a, axis: int, descending: bool):
    """Indices that sort ``a`` along ``axis``; stable in both directions (equal values keep their order)."""
    if not descending:
        return xp.argsort(a, axis=axis, kind="stable")
    # Sorting the reversed array ascending and reversing the result puts NaN first and keeps ties in
    # their original order.
    n = a.shape[axis]
    rev = xp.argsort(xp.flip(a, axis), axis=axis, kind="stable")
    return xp.flip(n - 1 - rev, axis)


_INSERTION_SORTED = 16  # (std::sort insertion-sorts a row of up to this many elements: equal values keep their order)
_RADIX_SORTED = 32768  # (at::internal::GRAIN_SIZE: from this many, a 1-D integer row takes fbgemm's stable radix sort)


def _unstable_order(a, axis: int, descending: bool):
    """Indices that sort ``a`` along ``axis`` as PyTorch's CPU sort without ``stable=True`` leaves them: each row
    sorted by ``std::sort`` over (value, index) pairs comparing values only (NaN the largest), which reorders
    equal values in a row of more than 16. A row without equal values has one order; a 1-D integer tensor of
    32768 elements or more sorted ascending takes PyTorch's radix sort, which is stable, and a dimension of
    stride 0 (an expanded tensor) is left in order, as PyTorch's.

    Compiled (``policy.compiles_or_loaded``): that sort itself on every row, from the values
    (``ember._kernels.mode.std_sort_keyed``), in about PyTorch's time. Otherwise the stable order, and for each row
    holding equal values the Python reference (``ember._std_sort``, about a second a million elements) replayed on
    the values' ranks: the same comparisons, so the same order.
    """
    n = a.shape[axis]
    if n <= _INSERTION_SORTED or a.strides[axis] == 0 or (
            a.ndim == 1 and not descending and a.dtype.kind in "iu" and n >= _RADIX_SORTED):
        return _order(a, axis, descending)
    if policy.compiles_or_loaded(a.size):
        return xp.moveaxis(_std_sort_values(xp.moveaxis(a, axis, -1), descending), -1, axis)
    order = _order(a, axis, descending)
    s = xp.moveaxis(xp.take_along_axis(a, order, axis), axis, -1)
    tied = s[..., 1:] == s[..., :-1]
    if np_kind(s.dtype) in "fc":  # (bfloat16 too)
        tied |= xp.isnan(s[..., 1:]) & xp.isnan(s[..., :-1])  # (NaN compares equal to NaN in PyTorch's comparator)
    rows = xp.nonzero(tied.any(axis=-1).reshape(-1))[0]
    if not rows.size:
        return order
    order = xp.moveaxis(order, axis, -1).copy()
    flat = order.reshape(-1, n)  # (a view: written in place)
    # each value's rank among its row's distinct values (the stable order's runs), compared as ints; the ranks follow
    # the sort's direction, so std::sort by rank is its comparator's order
    sorted_ranks = xp.zeros((rows.size, n), dtype=xp.int64)
    xp.cumsum(~tied.reshape(-1, n - 1)[rows], axis=-1, out=sorted_ranks[:, 1:])
    ranks = xp.empty_like(sorted_ranks)
    xp.put_along_axis(ranks, flat[rows], sorted_ranks, axis=-1)
    for rank, r in zip(ranks.tolist(), rows.tolist()):
        items = list(range(n))
        std_sort(items, lambda i, j, rank=rank: rank[i] < rank[j])
        flat[r] = items
    return xp.moveaxis(order, -1, axis)


def widened_rows(rows):
    """``rows`` as float64 (every floating dtype) or int64 (the rest: every integer and bool dtype ember has fits),
    contiguous, which order the values as their own dtype does: what the compiled sorts and the Python reference
    compare (``sort``'s and ``mode``'s)."""
    return xp.ascontiguousarray(rows, dtype=xp.float64 if np_kind(rows.dtype) == "f" else xp.int64)


def _std_sort_values(rows, descending: bool):
    """The indices ``std::sort`` leaves each of ``rows`` (the sorted dimension last) in, compiled: the values
    widened (``widened_rows``), then sorted by keys that ``<`` orders as PyTorch's comparator."""
    wide = widened_rows(rows)
    floating = wide.dtype == xp.float64
    bits = wide.reshape(-1, rows.shape[-1]).view(xp.int64)
    out = xp.empty(bits.shape, xp.int64)
    compiled_sort.std_sort_keyed(bits, floating, descending, out)
    return out.reshape(rows.shape)


def _take(x: Tensor, idx, dim: int) -> Tensor:
    return Gather.apply(x, index=idx, dim=dim)


@torch_named("SortBackward0")
class SortNode(Selected):
    scatter = "scatter"  # (one index per element: PyTorch's value_selecting_reduction_backward)
    _saved_self_sym_sizes = property(lambda node: tuple(node.shape))

    def forward(self, x, index, dim, keepdim=True):
        # the values laid out as their indices (the input's layout, as PyTorch's), a size-1 dimension's stride too
        out = super().forward(x, index, dim, keepdim)
        if out.shape != index.shape:
            return out
        return strides_like(out, index)


@torch_named("SortBackward1")
class StableSortNode(SortNode):  # (PyTorch's sort.stable overload, which any ``stable=`` call takes)
    pass


@torch_named("TopkBackward0")
class TopKNode(SortNode):
    pass


def _scalar(x: Tensor, result, node: type[Selected]):
    """A 0-d input is its own sort/top-1: a copy of it (one node) and index 0."""
    zero = xp.zeros((), dtype=xp.int64)
    return result._make((node.apply(x, index=zero, dim=0), Tensor._make(meta_results((x._data,), zero))))


def sort(x: Tensor, *args, dim: int = NOT_GIVEN, descending: bool = NOT_GIVEN, stable: bool | None = NOT_GIVEN):
    """Sorted values and their indices along ``dim`` (ascending by default): ``sort(x, dim=-1, descending=False)``
    or, given ``stable``, ``sort(x, *, stable, dim=-1, descending=False)``, PyTorch's two overloads
    (``sort_arguments``).

    With ``stable=True`` equal values keep their order. Without it, equal values in a row of more than 16 come
    in the order PyTorch's CPU sort (``std::sort``) leaves them, which ember reproduces.
    """
    dim, descending = sort_arguments("sort", False, args, dim, descending, stable)
    return _sort(x, dim, descending, stable)


def _sort(x: Tensor, dim: int, descending: bool, stable):
    refuse_complex(x, "sort", RuntimeError)
    a = x._data
    d = _wrap_dim(dim, a.ndim)  # (a scalar takes dim 0 and -1 only, as PyTorch)
    node = SortNode if stable is NOT_GIVEN else StableSortNode  # (any stable=, None too: PyTorch's overload)
    if a.ndim == 0:
        return keep_dim_as_given(_scalar(x, _Sort, node), dim)
    unstable = stable is NOT_GIVEN or not stable  # (None and False too: PyTorch's std::sort; True: a stable sort)
    order = _unstable_order(a, d, descending) if unstable else _order(a, d, descending)
    # (values and indices laid out as the input: a row-major one's row-major, though the order of a dimension other
    # than the last was computed with that dimension last)
    idx = laid_out_like(a, order.astype(xp.int64, order="C"))
    return keep_dim_as_given(_Sort._make((node.apply(x, index=idx, dim=d), Tensor._make(meta_results((a,), idx)))),
                             dim)


def argsort(x: Tensor, *args, dim: int = NOT_GIVEN, descending: bool = NOT_GIVEN, stable: bool = NOT_GIVEN) -> Tensor:
    """Indices that sort ``x`` along ``dim``; see :func:`sort` (``stable`` a bool, not None, as PyTorch's)."""
    dim, descending = sort_arguments("argsort", False, args, dim, descending, stable)
    return _sort(x, dim, descending, stable).indices


def msort(x: Tensor) -> Tensor:
    """``sort(x, dim=0).values``."""
    return _sort(x, 0, False, NOT_GIVEN).values


def sort_arguments(name: str, method: bool, args: tuple, dim, descending, stable) -> tuple[int, bool]:
    """``dim`` and ``descending`` of ``sort``/``argsort`` (``method``: ``x.sort``), read as PyTorch's argument parser
    matches their overloads: ``(dim=-1, descending=False)`` by position or keyword, or ``(*, stable, dim=-1,
    descending=False)``, where a ``stable`` makes ``dim`` and ``descending`` keyword-only (``sort(x, 1,
    stable=True)`` matches neither). ``dim`` is an int (not a bool), ``descending`` and ``stable`` are bools (not
    ints, not NumPy's bool_; ``sort``'s ``stable`` may be None). Anything else is PyTorch's TypeError."""
    n, given = len(args), (dim, descending)  # (the keywords as given, for the error)
    if n:
        if n > 2 and (method or name != "sort"):  # (PyTorch's words and counts: a function's count has the tensor)
            raise TypeError(f"{name}() takes from {1 + (not method)} to {int(not method)} positional arguments but "
                            f"{n + (not method)} were given")
        if n > 2 or stable is not NOT_GIVEN or dim is not NOT_GIVEN or (n == 2 and descending is not NOT_GIVEN):
            raise _no_sort_overload(name, method, args, *given, stable)
        dim = args[0]
        if n == 2:
            descending = args[1]
    if dim is NOT_GIVEN:
        dim = -1
    elif dim.__class__ is not int:
        if isinstance(dim, Tensor) and not dim._data.ndim and dim._data.dtype.kind in "iu":
            dim = int(dim.item())  # (a 0-d integer tensor is an int to PyTorch's parser)
        elif isinstance(dim, numbers.Integral) and not isinstance(dim, (bool, xp.bool_)):
            dim = operator.index(dim)
        else:
            raise _no_sort_overload(name, method, args, *given, stable)
    if descending is NOT_GIVEN:
        descending = False
    elif descending.__class__ is not bool:
        raise _no_sort_overload(name, method, args, *given, stable)
    if stable is not NOT_GIVEN and stable.__class__ is not bool and not (stable is None and name == "sort"):
        raise _no_sort_overload(name, method, args, *given, stable)
    return dim, descending


_SORT_OVERLOADS = {
    "sort": " * (Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors out = None)\n"
            " * (Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)\n",
    "argsort": " * (Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)\n"
               " * (Tensor input, int dim = -1, bool descending = False)\n",
    "method": " * (*, bool stable, int dim = -1, bool descending = False)\n"
              " * (int dim = -1, bool descending = False)\n",
}


def _no_sort_overload(name: str, method: bool, args: tuple, dim, descending, stable) -> TypeError:
    """PyTorch's TypeError for ``sort``/``argsort`` arguments that match none of its overloads: what was given
    (positional arguments, then the keywords given: ``dim``, ``descending``, ``stable``), and the overloads."""
    kind = lambda v: "Tensor" if isinstance(v, Tensor) else \
        f"numpy.{type(v).__name__}" if isinstance(v, xp.generic) else type(v).__name__  # noqa: E731
    keywords = [f"{k}={kind(v)}" for k, v in (("dim", dim), ("descending", descending), ("stable", stable))
                if v is not NOT_GIVEN]
    got = ", ".join(["Tensor"] * (not method) + [kind(a) for a in args] + keywords)
    if method and not args:
        got += ", "  # (PyTorch's words for a method given keywords only: "got (stable=NoneType, )")
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + _SORT_OVERLOADS["method" if method else name])


def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """The ``k`` largest (or smallest, ``largest=False``) elements along ``dim`` and their indices.

    Values come in sorted order (largest first when ``largest``); ember also sorts them when
    ``sorted=False``, where PyTorch leaves the order unspecified. Among equal values the earlier
    index comes first.
    """
    refuse_complex(x, "topk", RuntimeError)
    a = x._data
    d = _wrap_dim(dim, a.ndim)  # (a scalar takes dim 0 and -1 only, as PyTorch)
    n = a.shape[d] if a.ndim else 1
    k = int_argument(k, "topk", "k")
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")  # (PyTorch's words)
    if a.dtype == xp.bool_:  # (PyTorch checks k first)
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if a.ndim == 0:
        return keep_dim_as_given(_scalar(x, _TopK, TopKNode), dim)
    idx = _order(a, d, largest)
    idx = xp.take(idx, xp.arange(k), axis=d).astype(xp.int64)
    return keep_dim_as_given(_TopK._make((TopKNode.apply(x, index=idx, dim=d), Tensor._make(meta_results((a,), idx)))),
                             dim)

"""Sorting and selection: sort, argsort, topk, and related helpers.

The order is computed on the raw array (no gradient); the values are then
picked by one node, as PyTorch records sort and topk (SortBackward0, TopkBackward0),
so the gradient flows back to the selected positions. NaN sorts as the largest value, as in PyTorch.
"""

from __future__ import annotations

import operator

from .. import return_types
from .._backend import xp
from .._creation import laid_out_like
from .._meta import meta_results
from .._not_given import NOT_GIVEN
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import torch_named
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


def _take(x: Tensor, idx, dim: int) -> Tensor:
    return Gather.apply(x, index=idx, dim=dim)


@torch_named("SortBackward0")
class SortNode(Selected):
    scatter = "scatter"  # (one index per element: PyTorch's value_selecting_reduction_backward)


@torch_named("SortBackward1")
class StableSortNode(SortNode):  # (PyTorch's sort.stable overload, which any ``stable=`` call takes)
    pass


@torch_named("TopkBackward0")
class TopKNode(SortNode):
    pass


def _scalar(x: Tensor, result, node: type[Selected]):
    """A 0-d input is its own sort/top-1: a copy of it (one node) and index 0."""
    zero = xp.zeros((), dtype=xp.int64)
    return result(node.apply(x, index=zero, dim=0), Tensor._make(meta_results((x._data,), zero)))


def sort(x: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = NOT_GIVEN):
    """Sorted values and their indices along ``dim`` (ascending by default).

    ember's sort is always stable (equal values keep their order), which PyTorch only promises
    with ``stable=True``.
    """
    refuse_complex(x, "sort", RuntimeError)
    a = x._data
    d = _wrap_dim(dim, a.ndim)  # (a scalar takes dim 0 and -1 only, as PyTorch)
    node = SortNode if stable is NOT_GIVEN else StableSortNode  # (any stable=, None too: PyTorch's overload)
    if a.ndim == 0:
        return _scalar(x, _Sort, node)
    idx = laid_out_like(a, _order(a, d, descending).astype(xp.int64))  # (values and indices laid out as the input)
    return _Sort(node.apply(x, index=idx, dim=d), Tensor._make(meta_results((a,), idx)))


def argsort(x: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """Indices that sort ``x`` along ``dim``; see :func:`sort`."""
    return sort(x, dim, descending, stable=stable).indices


def msort(x: Tensor) -> Tensor:
    """``sort(x, dim=0).values``."""
    return sort(x, 0).values


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
    try:
        k = operator.index(k.item() if isinstance(k, Tensor) else k)
    except TypeError:
        raise TypeError(f"topk(): argument 'k' must be int, not {type(k).__name__}") from None
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range (k={k}, size of dimension {dim} is {n})")
    if a.ndim == 0:
        return _scalar(x, _TopK, TopKNode)
    idx = _order(a, d, largest)
    idx = xp.take(idx, xp.arange(k), axis=d).astype(xp.int64)
    return _TopK(TopKNode.apply(x, index=idx, dim=d), Tensor._make(meta_results((a,), idx)))

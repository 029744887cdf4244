"""The memory layout of an advanced-indexing result, as PyTorch's.

NumPy lays ``x[:, idx]`` out with the indexed dimension outermost and transposes it into place, so the result of a
contiguous ``x`` is not contiguous; PyTorch computes it with a TensorIterator, whose output follows the inputs'
stride order: a contiguous ``x`` indexed by contiguous index tensors gives a contiguous result, on which
``.view(...)`` works (neural-processes' ``x[:, locations, :]`` then ``.view(batch * points, dim)``). ``laid_out``
copies NumPy's result into PyTorch's layout where they differ.

PyTorch's steps (``AdvancedIndex`` in ATen's TensorAdvancedIndexing): ints, slices, None and Ellipsis index first
(a view ``v``); each index tensor (a boolean mask: its ``nonzero()`` columns) stands for one dimension of ``v``;
the index tensors broadcast together; if the indexed dimensions are not adjacent they move to the front; the
result's shape is the dimensions before, the index shape, the dimensions after. The TensorIterator's operands are
``v`` restrided to that shape (stride 0 across the index shape) and each index tensor (stride 0 outside it); its
output dimensions are ordered fastest first by an insertion sort on those operands' strides
(``TensorIteratorBase::reorder_dimensions``), and the output is allocated densely in that order.
"""

from __future__ import annotations

import operator

from .._backend import xp
from .._meta import is_meta, reorder_dimensions


def _is_int_array(p) -> bool:
    return p.__class__ is xp.ndarray and p.dtype.kind in "iu"


def _is_mask(p) -> bool:
    return p.__class__ is xp.ndarray and p.dtype == xp.bool_


def laid_out(x, idx, out):
    """``out = x[idx]`` (NumPy's advanced indexing) in the layout PyTorch gives ``x[idx]``."""
    if out.__class__ is not xp.ndarray or out.ndim < 2:
        return out
    if is_meta(out):
        return out
    # the common cases, decided without the sort: a contiguous x and contiguous index tensors give PyTorch a
    # contiguous result (every operand orders the dimensions it does not broadcast as the result's order), and
    # so does one index tensor into x whose other dimensions are at most one: NumPy's result, made C-contiguous
    if idx.__class__ is xp.ndarray:
        if idx.flags.c_contiguous and (
                x.flags.c_contiguous or x.ndim - (idx.ndim if idx.dtype == xp.bool_ else 1) <= 1):
            return out if out.flags.c_contiguous else xp.ascontiguousarray(out)
    elif idx.__class__ is tuple and x.flags.c_contiguous and all(
            p.flags.c_contiguous for p in idx if p.__class__ is xp.ndarray):
        return out if out.flags.c_contiguous else xp.ascontiguousarray(out)
    parts = idx if idx.__class__ is tuple else (idx,)
    order = _pytorch_order(x, parts)
    if order is None:
        return out
    shape = out.shape
    dense = xp.empty([shape[d] for d in reversed(order)], dtype=out.dtype)
    target = dense.transpose(_inverse(list(reversed(order))))
    if all(shape[d] <= 1 or out.strides[d] == target.strides[d] for d in range(out.ndim)):
        return out
    target[...] = out
    return target


def _inverse(perm: list) -> list:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _pytorch_order(x, parts) -> list | None:
    """The result's dimensions, fastest first, as PyTorch's TensorIterator orders them; None where the index
    has a form this does not model (a 0-d mask), NumPy's layout then kept."""
    from .indexing import _pytorch_view

    consumed = 0
    for p in parts:
        if _is_mask(p):
            if p.ndim == 0:
                return None
            consumed += p.ndim
        elif p is not None and p is not Ellipsis:
            consumed += 1
    basic, slots, d = [], {}, 0  # slots: dimension of the view v -> its index array
    for p in parts:
        if p is Ellipsis:
            n = x.ndim - consumed
            basic += [slice(None)] * n
            d += n
        elif p is None or p.__class__ is slice:
            basic.append(p)
            d += 1
        elif _is_mask(p):
            for column in p.nonzero():
                basic.append(slice(None))
                slots[d] = column
                d += 1
        elif _is_int_array(p) and p.ndim:
            basic.append(slice(None))
            slots[d] = p
            d += 1
        else:  # an int, or a 0-d integer array: PyTorch selects with it
            basic.append(operator.index(p))
    if not slots:
        return None
    sizes, strides, _ = _pytorch_view(x, tuple(basic))
    dims = sorted(slots)
    index_shape = xp.broadcast_shapes(*(slots[k].shape for k in dims))
    if dims != list(range(dims[0], dims[-1] + 1)):  # not adjacent: the indexed dimensions go first
        rest = [k for k in range(len(sizes)) if k not in slots]
        sizes, strides = [sizes[k] for k in dims + rest], [strides[k] for k in dims + rest]
        first, after = 0, len(dims)
    else:
        first, after = dims[0], dims[-1] + 1
    n_index = len(index_shape)
    shape = [*sizes[:first], *index_shape, *sizes[after:]]
    operands = [[*strides[:first], *[0] * n_index, *strides[after:]]]
    for k in dims:
        b = xp.broadcast_to(slots[k], index_shape)
        operands.append([0] * first + [s // b.itemsize for s in b.strides] + [0] * (len(sizes) - after))
    return reorder_dimensions(shape, operands)

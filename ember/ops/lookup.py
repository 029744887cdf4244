"""Lookups and counts over values: unique, bincount, searchsorted/bucketize, isin, take, take_along_dim.

Only ``take``/``take_along_dim`` carry a gradient (they gather); the others return indices or counts.
"""

from __future__ import annotations

import math

from .._backend import xp
from .._dtype import SCALAR_TYPE_NAMES, not_implemented_for, np_kind
from .._meta import meta_results, refuse_meta
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import Node, torch_named, version_checked
from ..autograd.saved_attributes import checked_argument, held_tensor
from .elementwise import require_tensor
from .indexing import Gather


def _int64(a) -> Tensor:
    return Tensor._make(xp.asarray(a, dtype=xp.int64))


def unique(x: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None):
    """The distinct values (ember always returns them sorted), optionally with, for each input element, the
    index of its value (``return_inverse``) and how often each value occurs (``return_counts``). Each NaN is a
    value of its own, sorted last in the order of the input, as PyTorch's.
    With ``dim``: the distinct slices along ``dim``."""
    a = x._data
    refuse_meta("_unique2" if dim is None else "unique_dim", a)
    axis = None if dim is None else _wrap_dim(dim, a.ndim)
    if axis is None:  # (each NaN a value of its own, as PyTorch's: NaN equals nothing)
        values, inverse, counts = xp.unique(a, return_inverse=True, return_counts=True, equal_nan=False)
        inverse = inverse.reshape(a.shape)
    else:
        values, inverse, counts = xp.unique(a, return_inverse=True, return_counts=True, axis=axis)
    out = [Tensor._make(values)]
    if return_inverse:
        out.append(_int64(inverse.reshape(-1) if axis is not None else inverse))
    if return_counts:
        out.append(_int64(counts))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(x: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """The values (or slices along ``dim``) with each run of equal consecutive ones collapsed to one, optionally
    with, for each input element (slice), the index of its run (``return_inverse``) and each run's length
    (``return_counts``), as PyTorch's."""
    a = x._data
    refuse_meta("unique_consecutive", a)
    axis = None if dim is None else _wrap_dim(dim, a.ndim)
    rows = a.reshape(-1) if axis is None else xp.moveaxis(a, axis, 0).reshape(a.shape[axis], -1)
    changed = xp.ones(len(rows), dtype=bool)
    if len(rows) > 1:
        step = rows[1:] != rows[:-1]
        changed[1:] = step if axis is None else step.any(axis=1)
    starts = xp.flatnonzero(changed)
    values = a.reshape(-1)[starts] if axis is None else xp.take(a, starts, axis=axis)
    out = [Tensor._make(values)]
    if return_inverse:
        inverse = xp.cumsum(changed) - 1
        out.append(_int64(inverse.reshape(a.shape) if axis is None else inverse))
    if return_counts:
        out.append(_int64(xp.diff(xp.append(starts, len(rows)))))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(x: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Occurrences of each value 0..max(x) in a 1-D non-negative integer tensor (summed ``weights`` when given)."""
    a = x._data
    refuse_meta("bincount", a, *(() if weights is None else (weights._data,)))
    if a.dtype.kind not in "iu":  # PyTorch's kernel is compiled for integer types only: bool and floats are refused
        raise not_implemented_for("bincount_cpu", x.dtype)
    if a.ndim != 1:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (got shape {list(x.shape)}, "
                           f"dtype {x.dtype})")
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _int64(xp.bincount(a, minlength=minlength))
    w = weights._data
    if w.shape != a.shape:
        raise RuntimeError(f"weights should be 1-d and have the same length as input (got weights of shape "
                           f"{list(weights.shape)} for input of shape {list(x.shape)})")
    out = xp.bincount(a, weights=w, minlength=minlength)  # computed in float64
    return Tensor._make(out.astype(w.dtype if np_kind(w.dtype) == "f" and w.dtype != xp.float16 else xp.float64))


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """For each value of ``input``, the index at which it would be inserted to keep ``sorted_sequence``
    (sorted along its last dimension; one row per leading index) sorted: before equal values, or after
    them with ``right=True``."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter._data, axis=-1)
    scalar = not isinstance(input, Tensor)
    vals = xp.asarray(input) if scalar else input._data
    how = "right" if right else "left"
    if seq.ndim == 1:
        out = xp.searchsorted(seq, vals, side=how)
    else:
        if vals.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(
                f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                f"boundaries tensor and input value tensor must match, but we got boundaries tensor "
                f"{list(seq.shape)} and input value tensor {list(vals.shape)}")
        flat_s, flat_v = seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])
        out = xp.stack([xp.searchsorted(s, v, side=how) for s, v in zip(flat_s, flat_v)]).reshape(vals.shape)
    return Tensor._make(meta_results((seq, vals), xp.asarray(out, dtype=xp.int32 if out_int32 else xp.int64)))


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each value given 1-D sorted ``boundaries``: ``searchsorted(boundaries, input)``."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """True where an element of ``elements`` occurs in ``test_elements`` (either may be a number)."""
    e = elements._data if isinstance(elements, Tensor) else xp.asarray(elements)
    t = test_elements._data if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
    return Tensor._make(meta_results((e, t), xp.asarray(xp.isin(e, t, invert=invert))))


@torch_named("TakeBackward0")
class Take(Node):
    """x's elements, x seen as 1-D, at ``index`` (already in range, any shape); the gradient scatter-adds.
    PyTorch's node saves the input (``_saved_self``: held here to check its version, ``take``) and the index given."""

    linear = True
    _saved_self = property(lambda node: checked_argument(node, 0, 0))
    _saved_index = property(lambda node: held_tensor(node, node.index_given))

    def forward(self, x, index):
        self.shape, self.index = x.shape, index
        return x.reshape(-1)[index]

    def backward(self, g):
        out = xp.zeros_like(g, shape=(math.prod(self.shape),))
        xp.add.at(out, self.index, g)
        return (out.reshape(self.shape),)


def take(x: Tensor, index: Tensor) -> Tensor:
    """Elements of ``x`` seen as 1-D, at ``index`` (int64, as PyTorch requires; the result has index's shape)."""
    if not isinstance(index, Tensor):  # (a NumPy array, a list: PyTorch's parser refuses it)
        require_tensor("take", index, 1, "index")
    idx = index._data
    if idx.dtype != xp.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {SCALAR_TYPE_NAMES[index.dtype.name]}")
    n = x._data.size
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"out of range: tried to access index {int(idx.max() if idx.max() >= n else idx.min())} "
                         f"on a tensor of {n} elements.")
    out = Take.apply(x, index=idx % max(n, 1))
    if out.grad_fn is not None:
        out.grad_fn.index_given = idx
    return version_checked(out, x, index)  # (both saved by PyTorch's node)


def take_along_dim(x: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` with broadcasting: values of ``x`` at ``indices`` along ``dim`` (flattened when None)."""
    from .shape import expand, reshape

    if indices._data.dtype.kind not in "iu":
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {indices.dtype}")
    if dim is None:
        return version_checked(Gather.apply(reshape(x, -1), index=indices._data.reshape(-1).astype(xp.int64), dim=0),
                               indices)
    d = _wrap_dim(dim, x._data.ndim)
    if x._data.ndim != indices._data.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {x._data.ndim} dimensions for input, and {indices._data.ndim} for indices")
    xs, ids = list(x._data.shape), list(indices._data.shape)
    shape = [max(a, b) for a, b in zip(xs, ids)]
    xs_target = [xs[i] if i == d else shape[i] for i in range(len(shape))]
    ids_target = [ids[i] if i == d else shape[i] for i in range(len(shape))]
    src = expand(x, xs_target) if xs_target != xs else x
    idx = xp.broadcast_to(indices._data, ids_target).astype(xp.int64)
    # (a broadcast copy of the indices: PyTorch saves that, so a second backward without retain_graph is its error
    # for a freed graph; no one else can change the copy in place)
    return version_checked(Gather.apply(src, index=idx, dim=d), Tensor._make(idx))

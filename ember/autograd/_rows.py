"""The standard basis that Jacobians are assembled from, for ``torch.autograd.functional`` and ``torch.func``.

``basis`` gives the whole basis at once (what a backward or forward pass batched over it takes,
``func/_batched_vjp.py``, ``func/_basis.py``); where that cannot apply, rows (or columns) come one at a time:
``basis_row`` gives the ``k``-th basis vector split across several tensors, ``stack_rows`` puts the results
together.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._backend import xp
from .._dtype import to_np
from .._tensor import Tensor


def basis(tensors: Sequence[Tensor]) -> list[Tensor]:
    """The identity over the ``n`` concatenated elements of ``tensors``, split as ``tensors``: tensor ``i``'s part
    has shape ``(n, *tensors[i].shape)``, its row ``k`` that part of the ``k``-th basis vector."""
    n = sum(t.nelement() for t in tensors)
    parts, offset = [], 0
    for t in tensors:  # rows offset .. offset + t.nelement() are t's: ones where row - column == offset
        parts.append(Tensor._make(xp.eye(n, t.nelement(), k=-offset, dtype=to_np(t.dtype)).reshape(n, *t.shape)))
        offset += t.nelement()
    return parts


def basis_row(tensors: Sequence[Tensor], k: int) -> list[Tensor]:
    """Row ``k`` of the identity over the concatenated elements of ``tensors``, split and shaped as ``tensors``."""
    rows, offset = [], 0
    for t in tensors:
        row = t.new_zeros(t.nelement())
        if offset <= k < offset + t.nelement():
            row[k - offset] = 1
        rows.append(row.view(t.shape))
        offset += t.nelement()
    return rows


def stack_rows(rows: Sequence[Tensor], ref: Tensor) -> Tensor:
    """``rows`` (each shaped as ``ref``) stacked along a new first dimension; ``[0, *ref.shape]`` for none.

    Written row by row into zeros rather than with ``stack``: the result stays differentiable to any order through
    the in-place copies (Jacobians of Jacobians), whatever ``stack``'s own derivative supports.
    """
    out = ref.new_zeros((len(rows), *ref.shape))
    for k, row in enumerate(rows):
        out[k] = row
    return out

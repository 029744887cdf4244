"""Jacobians assembled one row (or column) at a time, for ``torch.autograd.functional`` and ``torch.func``.

PyTorch batches the rows with vmap over the standard basis; ember computes them one after another: ``basis_row``
gives the ``k``-th basis vector split across several tensors, ``stack_rows`` puts the results together.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._tensor import Tensor


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

"""``torch.sparse``: the functions graph code calls on sparse matrices (ember's sparse COO tensors and CSR/CSC
matrices, see ``ember/_sparse.py`` and ``ember/_sparse_compressed.py``).

``mm(sparse, dense)`` is the matrix product, differentiable with respect to the dense operand (the sparse one
never requires grad in ember); ``sum(sparse, dim)`` sums a COO tensor over all or some dimensions, as PyTorch:
a dense 0-d tensor for all, else a coalesced sparse tensor over the sparse dimensions left (dense once none is).
"""

from __future__ import annotations

import builtins

from ._backend import xp
from ._missing import module_getattr
from ._sparse import SparseCOO, SparseTensor
from ._tensor import Tensor, _wrap_dim

__all__ = ["mm", "sum"]


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """``mat1 @ mat2`` for a sparse (COO, CSR or CSC) 2-d ``mat1`` and a dense ``mat2``.

    Difference from PyTorch: only ``reduce="sum"`` (PyTorch's CSR matrices also take "mean", "amax", "amin").
    """
    if reduce != "sum":
        raise NotImplementedError(f"torch.sparse.mm(reduce={reduce!r}): ember computes only the sum")
    return mat1 @ mat2  # matmul multiplies a sparse operand entry by entry (two dense: the ordinary product)


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:
    """The sum of a sparse COO tensor's entries over ``dim`` (an int or a sequence; default: every dim)."""
    if not isinstance(input, SparseTensor):
        return input.sum(dim, dtype=dtype) if dim is not None else input.sum(dtype=dtype)
    c = input._data
    values = c.values if dtype is None else c.values.astype(dtype.np)
    ndim, sparse_dim = len(c.shape), c.indices.shape[0]
    if dim is None:
        return Tensor._make(xp.asarray(values.sum()))
    dims = {_wrap_dim(d, ndim) for d in ((dim,) if isinstance(dim, builtins.int) else dim)}
    dense_axes = tuple(d - sparse_dim + 1 for d in sorted(dims) if d >= sparse_dim)
    if dense_axes:
        values = values.sum(axis=dense_axes)
    keep = [d for d in range(sparse_dim) if d not in dims]
    shape = tuple(n for d, n in enumerate(c.shape) if d not in dims)
    if not keep:  # no sparse dimension left: a dense tensor
        return Tensor._make(values.sum(axis=0))
    return SparseTensor.wrap(SparseCOO(c.indices[keep], values, shape).coalesce())




__getattr__ = module_getattr(__name__)

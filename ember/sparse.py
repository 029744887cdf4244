"""``torch.sparse``: the functions graph code calls on sparse matrices (ember's sparse COO tensors and CSR/CSC
matrices, see ``ember/_sparse.py`` and ``ember/_sparse_compressed.py``).

``mm(sparse, dense)`` is the matrix product, differentiable with respect to the dense operand (the sparse one
never requires grad in ember); ``sum(sparse, dim)`` sums a COO tensor over all or some dimensions, as PyTorch:
a dense 0-d tensor for all, else a coalesced sparse tensor over the sparse dimensions left (dense once none is).
``FloatTensor`` and the other legacy sparse types build COO tensors as PyTorch's (old GCN code calls
``torch.sparse.FloatTensor(indices, values, size)``), with PyTorch's deprecation warning.
"""

from __future__ import annotations

import builtins

from . import _dtype
from ._backend import xp
from ._layout import strided
from ._legacy import _TYPES, _sizes
from ._missing import module_getattr
from ._sparse import SparseCOO, SparseTensor, sparse_coo_tensor
from ._tensor import Tensor, _wrap_dim
from ._warnings import warn_once
from .autograd.graph import shown_as

__all__ = ["mm", "addmm", "sum", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
           "CharTensor", "ShortTensor", "IntTensor", "LongTensor"]


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """``mat1 @ mat2`` for a sparse (COO, CSR or CSC) 2-d ``mat1`` and a dense ``mat2``.

    Difference from PyTorch: only ``reduce="sum"`` (PyTorch's CSR matrices also take "mean", "amax", "amin").
    """
    if reduce != "sum":
        raise NotImplementedError(f"torch.sparse.mm(reduce={reduce!r}): ember computes only the sum")
    sparse_first = mat1.layout is not strided
    if sparse_first != (mat2.layout is not strided) and (mat2 if sparse_first else mat1).ndim == 1:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{1 if sparse_first else -2})")  # (PyTorch's: it reads a matrix's dims)
    out = mat1 @ mat2  # matmul multiplies a sparse operand entry by entry (two dense: the ordinary product)
    if sparse_first != (mat2.layout is not strided):  # PyTorch's nodes: its sparse addmm, or that of the transposes
        shown_as(out, "SparseAddmmBackward0" if sparse_first else "TransposeBackward0")
    return out


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` for a sparse (COO, CSR or CSC) or dense ``mat1``: ``torch.addmm``
    itself, which takes a sparse operand (differentiable in ``mat`` and the dense ``mat2``)."""
    from .ops.linalg import addmm as dense_or_sparse_addmm

    return shown_as(dense_or_sparse_addmm(mat, mat1, mat2, beta=beta, alpha=alpha), "SparseAddmmBackward0")


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




class _LegacySparseType(type):
    """The metaclass of ``torch.sparse.FloatTensor`` and friends: construction and ``isinstance`` by dtype."""

    dtype: _dtype.dtype

    def __instancecheck__(cls, obj) -> builtins.bool:
        return isinstance(obj, SparseTensor) and obj._data.dtype == cls.dtype.np

    def __subclasscheck__(cls, sub) -> builtins.bool:
        return sub is cls

    def __call__(cls, *args, device=None) -> SparseTensor:
        """``(indices, values[, size])``: as ``torch.sparse_coo_tensor`` (the dtype is the values', as PyTorch
        keeps it); ``(*sizes)`` or ``()``: an empty sparse tensor of the type's dtype."""
        made = legacy_sparse(args, cls.dtype, device, warn=True)
        if made is None:
            kinds = ", ".join(type(a).__name__ for a in args)
            raise TypeError(f"torch.sparse.{cls.__name__}() received an invalid combination of arguments - got "
                            f"({kinds}); expected (indices, values), (indices, values, size) or sizes (ints)")
        return made

    def __repr__(cls) -> str:
        return f"<class 'torch.sparse.{cls.__name__}'>"


def legacy_sparse(args: tuple, dtype: _dtype.dtype, device=None, warn: builtins.bool = False) -> SparseTensor | None:
    """What PyTorch's legacy sparse constructors (``torch.sparse.FloatTensor(...)``, which ``warn`` that they are
    deprecated, and ``sparse.new(...)``) make of ``args``: ``(indices, values[, size])`` a COO tensor of the
    values' dtype; ``(*sizes)`` or ``()`` an empty one of ``dtype``; None for any other arguments."""
    size = _sizes(args) if args else (0,)
    if size is not None:
        if warn:
            _deprecated("shape, " if args else "", "shape, " if args else "(0,), ")
        return SparseTensor.wrap(SparseCOO(xp.zeros((len(size), 0), xp.int64), xp.zeros((0,), dtype.np),
                                           tuple(size), True))
    if len(args) in (2, 3) and all(isinstance(a, Tensor) for a in args[:2]):
        if warn:
            given = "shape, " if len(args) == 3 else ""
            _deprecated(f"indices, values, {given}", f"indices, values, {given}")
        return sparse_coo_tensor(*args, device=device)
    return None


def _deprecated(given: str, instead: str) -> None:
    """PyTorch's deprecation warning for a legacy sparse constructor, once per process for each form (as its
    C++ warns once)."""
    message = (f"torch.sparse.SparseTensor({given}*, device=) is deprecated.  Please use "
               f"torch.sparse_coo_tensor({instead}dtype=, device=).")
    if not given:
        message = "torch.sparse.SparseTensor() is deprecated.  Please use torch.sparse_coo_tensor((0,), dtype=)."
    warn_once(message)


def _legacy_sparse_type(name: str, dtype: _dtype.dtype) -> _LegacySparseType:
    doc = (f"``torch.sparse.{name}``: ``{name}(indices, values, size)`` is a sparse COO tensor, ``{name}(*sizes)`` "
           f"an empty one of {dtype.name}; ``isinstance(x, torch.sparse.{name})`` is True for sparse "
           f"{dtype.name} tensors.")
    return _LegacySparseType(name, (), {"dtype": dtype, "__doc__": doc, "__module__": "ember.sparse"})


# The dense legacy types' names and dtypes, in their order (BoolTensor has no sparse counterpart in PyTorch).
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor, IntTensor,
 LongTensor) = (_legacy_sparse_type(t.__name__, t.dtype) for t in _TYPES if t.__name__ != "BoolTensor")


__getattr__ = module_getattr(__name__)

"""Compressed sparse matrices: ``torch.sparse_csr`` / ``torch.sparse_csc`` (graph libraries keep adjacency
matrices so).

A 2-d matrix stored as compressed indices (``crow_indices``: where each row's entries start, one more than the
rows; CSC: ``ccol_indices`` per column), plain indices (``col_indices`` / ``row_indices``) and ``values``, as
PyTorch stores it. ``to_dense()`` gives an ordinary tensor, ``csr @ dense`` (``csr.matmul``/``csr.mm``) the
product (and ``dense @ csr``), differentiable with respect to the dense operand, summed entry by entry (never
densified).

Differences from PyTorch: 2-d matrices only (no batch or dense dims, no block layouts); the sparse tensor itself
never requires grad; other ops on one raise NotImplementedError, as for ember's sparse COO tensors.
"""

from __future__ import annotations

from ._backend import xp
from ._dtype import SCALAR_TYPE_NAMES
from ._layout import Layout, sparse_coo, sparse_csc, sparse_csr, strided
from ._sparse import refuse_values_requiring_grad, scatter_rows
from ._tensor import Tensor, _fill
from .autograd.graph import Node, shown_as, torch_named

_NAMES = {sparse_csr: ("crow_indices", "col_indices"), sparse_csc: ("ccol_indices", "row_indices")}
_SUPPORTED = "crow_indices/col_indices (CSR), ccol_indices/row_indices (CSC), values, to_dense, @ a dense matrix"


class Compressed:
    """The arrays of a compressed sparse matrix of ``shape`` in ``layout`` (what the Tensor holds)."""

    __slots__ = ("compressed", "plain", "values", "shape", "layout")

    def __init__(self, compressed, plain, values, shape: tuple, layout: Layout) -> None:
        self.compressed, self.plain, self.values = compressed, plain, values
        self.shape, self.layout = tuple(shape), layout

    def __getattr__(self, name: str):  # an array method an op tried to call on a compressed sparse tensor
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedError(f"'{name}' is not supported on a {self.layout.name} tensor (ember supports "
                                  f"{_SUPPORTED}); call .to_dense() first")

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self) -> int:
        return 2

    def coo(self):
        """(rows, cols) of every stored entry, in storage order."""
        counts = xp.diff(self.compressed)
        outer = xp.repeat(xp.arange(len(counts)), counts)
        return (outer, self.plain) if self.layout is sparse_csr else (self.plain, outer)

    def to_dense(self):
        out = xp.zeros(self.shape, self.values.dtype)
        xp.add.at(out, self.coo(), self.values)
        return out


class SparseCompressedTensor(Tensor):
    """A sparse CSR or CSC matrix (``layout=torch.sparse_csr`` / ``torch.sparse_csc``)."""

    __slots__ = ()
    is_sparse = False  # as PyTorch's: is_sparse answers for the COO layout only

    @classmethod
    def wrap(cls, arrays: Compressed) -> SparseCompressedTensor:
        t = cls.__new__(cls)
        _fill(t, arrays, None, 0)
        return t

    @property
    def layout(self) -> Layout:
        return self._data.layout

    @property
    def is_sparse_csr(self) -> bool:
        return self._data.layout is sparse_csr

    def __repr__(self) -> str:
        c = self._data
        first, second = _NAMES[c.layout]
        return (f"tensor({first}={Tensor._make(c.compressed)!r},\n       {second}={Tensor._make(c.plain)!r},\n"
                f"       values={Tensor._make(c.values)!r}, size={c.shape}, nnz={len(c.values)},\n"
                f"       layout={c.layout!r})")

    def numpy(self, *, force: bool = False):
        name = "SparseCsr" if self._data.layout is sparse_csr else "SparseCsc"
        raise TypeError(f"can't convert {name} layout tensor to numpy. Use Tensor.to_dense() first.")

    def _part(self, name: str, array) -> Tensor:
        if name not in _NAMES[self._data.layout]:
            kind = "row" if name in _NAMES[sparse_csr] else "column"
            raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got "
                               f"{'SparseCsr' if self._data.layout is sparse_csr else 'SparseCsc'}")
        return Tensor._make(array)

    def crow_indices(self) -> Tensor:
        return self._part("crow_indices", self._data.compressed)

    def col_indices(self) -> Tensor:
        return self._part("col_indices", self._data.plain)

    def ccol_indices(self) -> Tensor:
        return self._part("ccol_indices", self._data.compressed)

    def row_indices(self) -> Tensor:
        return self._part("row_indices", self._data.plain)

    def values(self) -> Tensor:
        return Tensor._make(self._data.values)

    def _nnz(self) -> int:
        return len(self._data.values)

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        out = self._data.to_dense()
        return Tensor._make(out if dtype is None else out.astype(dtype.np))



def entries(m: Tensor) -> tuple:
    """(rows, cols, values, shape) of the stored entries of a sparse 2-d COO, CSR or CSC matrix."""
    c = m._data
    if isinstance(m, SparseCompressedTensor):
        return (*c.coo(), c.values, c.shape)
    if len(c.shape) != 2 or c.values.ndim != 1:
        raise NotImplementedError(f"a sparse COO tensor of shape {list(c.shape)} in a matrix product: ember "
                                  "multiplies 2-d sparse matrices without dense dims")
    return c.indices[0], c.indices[1], c.values, c.shape


def sparse_product(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` where one operand is a sparse (COO, CSR or CSC) matrix and the other a dense matrix or vector,
    as PyTorch computes it: a dense result, differentiable with respect to the dense operand (one node, PyTorch's
    ``MmBackward0`` or ``MvBackward0``). The sparse one is never densified: each stored entry scales one row
    (``sparse @ dense``) or column (``dense @ sparse``). Both operands must have one dtype, as for dense
    products."""
    if a.dtype != b.dtype:
        sparse, dense = (a, b) if b.layout is strided else (b, a)
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[sparse.dtype.name]} but found "
                           f"{SCALAR_TYPE_NAMES[dense.dtype.name]}")
    if b.layout is strided:  # sparse @ dense (n x m @ m x k, or an m-vector)
        rows, cols, values, shape = entries(a)
        if a.layout is sparse_coo and b.ndim in (1, 2) and b.shape[0] != shape[1]:  # (PyTorch's COO kernels' words)
            raise RuntimeError("mv: expected self.size(-1) == vec.size(-1)" if b.ndim == 1 else
                               f"addmm: Argument #3 (dense): Expected dim 0 size {shape[1]}, got {b.shape[0]}")
        _check_product(shape, b.shape, b.ndim in (1, 2) and b.shape[0] == shape[1])
        return _product(b, rows, cols, values, shape, True)
    if a.layout is not strided:
        raise NotImplementedError(f"{a.layout.name} @ {b.layout.name}: ember multiplies a sparse matrix by a "
                                  "dense one only; call .to_dense() on one of them")
    rows, cols, values, shape = entries(b)
    if b.layout is sparse_coo and a.ndim == 2 and a.shape[-1] != shape[0]:  # (PyTorch: the transposes' product)
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {shape[0]}, got {a.shape[-1]}")
    _check_product(a.shape, shape, a.ndim >= 1 and a.shape[-1] == shape[0])
    if a.ndim > 2:  # a batch of matrices times one sparse matrix (``@``, as PyTorch's): their rows stacked
        return _product(a.reshape(-1, shape[0]), rows, cols, values, shape, False).reshape(*a.shape[:-1], shape[1])
    return _product(a, rows, cols, values, shape, False)


def _check_product(shape1: tuple, shape2: tuple, fits: bool) -> None:
    if not fits:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(str(n) for n in shape1)} and "
                           f"{'x'.join(str(n) for n in shape2)})")


def _product(dense: Tensor, rows, cols, values, shape: tuple, sparse_first: bool) -> Tensor:
    node = SparseProduct.apply(dense, rows=rows, cols=cols, values=values.astype(dense._data.dtype, copy=False),
                               shape=shape, sparse_first=sparse_first)
    return shown_as(node, "MvBackward0") if sparse_first and dense.ndim == 1 else node


@torch_named("MmBackward0")
class SparseProduct(Node):
    """``sparse @ dense`` (``sparse_first``) or ``dense @ sparse`` for the sparse matrix of ``shape`` with entries
    ``values`` at (``rows``, ``cols``), repeats adding up. Each entry's row of the dense operand, scaled, is summed
    into its row of the result (``dense @ sparse``: the same on the transposes): a gather, a scale and a
    scatter-add (``_sparse.scatter_rows``: compiled, or NumPy's segment sums). The gradient of the dense operand
    is the same product with the transposed matrix."""

    linear = True

    def forward(self, dense, rows, cols, values, shape, sparse_first):
        self.entries, self.sparse_first = (rows, cols, values, shape), sparse_first
        if sparse_first:
            return entries_product(rows, cols, values, shape[0], dense)
        return entries_product(cols, rows, values, shape[1], dense.T).T

    def backward(self, g):
        rows, cols, values, shape = self.entries
        if self.sparse_first:  # d(S @ D) = S^T @ g
            return (entries_product(cols, rows, values, shape[1], g),)
        return (entries_product(rows, cols, values, shape[0], g.T).T,)  # d(D @ S) = g @ S^T


def entries_product(rows, cols, values, n_rows: int, dense):
    """The n_rows x m matrix with entries ``values`` at (``rows``, ``cols``) (repeats add up) times the array
    ``dense`` (m x k, or an m-vector)."""
    vector = dense.ndim == 1
    d = dense[:, None] if vector else dense
    parts = xp.take(d, cols, axis=0)
    if type(parts) is xp.ndarray:  # (its own array: scaled in place)
        xp.multiply(parts, values[:, None], out=parts)
    else:  # (a recorded array, under create_graph)
        parts = parts * values[:, None]
    out = scatter_rows(None, n_rows, rows, parts)
    return out[:, 0] if vector else out


def _compress(outer, inner, values, n_outer: int):
    order = xp.lexsort((inner, outer))
    compressed = xp.concatenate([[0], xp.cumsum(xp.bincount(outer, minlength=n_outer))]).astype(xp.int64)
    return compressed, inner[order].astype(xp.int64), values[order]


def to_sparse_compressed(x: Tensor, layout: Layout) -> SparseCompressedTensor:
    """A 2-d dense tensor as CSR or CSC (its nonzeros, in row- or column-major order)."""
    if isinstance(x, SparseCompressedTensor):
        if x.layout is layout:
            return x
        x = x.to_dense()
    elif x.is_sparse:
        x = x.to_dense()
    if x.ndim != 2:
        raise NotImplementedError(f"to_{layout.name}: ember converts 2-d matrices only, got {x.ndim} dimensions")
    data = x._data
    rows, cols = xp.nonzero(data)
    outer, inner, n = (rows, cols, data.shape[0]) if layout is sparse_csr else (cols, rows, data.shape[1])
    compressed, plain, values = _compress(outer, inner, data[rows, cols], n)
    return SparseCompressedTensor.wrap(Compressed(compressed, plain, values.copy(), data.shape, layout))


def _compressed_tensor(layout: Layout, compressed, plain, values, size, dtype) -> SparseCompressedTensor:
    from ._creation import tensor as _tensor

    refuse_values_requiring_grad(f"sparse_{layout.name[7:]}_tensor", values)
    arrays = [a._data if isinstance(a, Tensor) else _tensor(a)._data for a in (compressed, plain)]
    vals = values._data if isinstance(values, Tensor) else _tensor(values, dtype=dtype)._data
    if dtype is not None:
        vals = vals.astype(dtype.np)
    comp, plain_idx = (a.astype(xp.int64) for a in arrays)
    if comp.ndim != 1 or plain_idx.ndim != 1 or vals.ndim != 1:
        raise NotImplementedError(f"sparse_{layout.name[7:]}_tensor: ember holds 2-d matrices only (1-d index "
                                  "and value tensors)")
    if len(plain_idx) != len(vals):
        raise RuntimeError(f"{_NAMES[layout][1]} and values must have the same number of elements, but got "
                           f"{len(plain_idx)} and {len(vals)}")
    if size is None:  # the compressed dim from the index pointers, the other from the largest index
        n_plain = int(plain_idx.max()) + 1 if len(plain_idx) else 0
        size = (len(comp) - 1, n_plain) if layout is sparse_csr else (n_plain, len(comp) - 1)
    return SparseCompressedTensor.wrap(Compressed(comp, plain_idx, vals.copy(), tuple(int(n) for n in size), layout))


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory: bool = False, requires_grad: bool = False, check_invariants=None
                      ) -> SparseCompressedTensor:
    """A CSR matrix from its row pointers, column indices and values (size inferred when omitted), as
    ``torch.sparse_csr_tensor``. ``requires_grad=True`` is not supported (see the module docstring)."""
    if requires_grad:
        raise NotImplementedError("sparse_csr_tensor(requires_grad=True) is not supported by ember")
    return _compressed_tensor(sparse_csr, crow_indices, col_indices, values, size, dtype)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory: bool = False, requires_grad: bool = False, check_invariants=None
                      ) -> SparseCompressedTensor:
    """A CSC matrix from its column pointers, row indices and values, as ``torch.sparse_csc_tensor``."""
    if requires_grad:
        raise NotImplementedError("sparse_csc_tensor(requires_grad=True) is not supported by ember")
    return _compressed_tensor(sparse_csc, ccol_indices, row_indices, values, size, dtype)

"""Sparse COO gradients: what ``Embedding(sparse=True)`` gives its weight, as PyTorch does.

Not a sparse tensor library: a sparse COO tensor here is what optimizers and training loops do with
a gradient — read its indices and values, coalesce it, make it dense, scale it, accumulate into it,
zero it. ``SparseCOO`` is the raw form that travels through backward (where dense gradients are
NumPy arrays); ``SparseTensor`` is the ``Tensor`` around it (``.grad``, ``torch.sparse_coo_tensor``).
Any other op on one raises ``NotImplementedError`` naming it (PyTorch raises the same type for the
many ops its sparse backend lacks); ``to_dense()`` gives an ordinary tensor.

As in PyTorch, a gradient is *uncoalesced* (one entry per lookup, indices repeated, in lookup order)
until ``coalesce()`` sums the repeats and sorts the indices; accumulating one gradient into another
concatenates their entries.
"""

from __future__ import annotations

import math

from . import _dtype
from ._backend import xp
from ._kernels import embedding as compiled
from ._kernels.policy import policy
from ._layout import Layout, sparse_coo, strided
from ._not_given import NOT_GIVEN
from ._parallel import parallel_for
from ._size import c_type_name
from ._tensor import Tensor, _fill

_SUPPORTED = ("coalesce, is_coalesced, indices, values, _indices, _values, _nnz, sparse_dim, dense_dim, to_dense, "
              "clone, detach, zero_, copy_, mul(_), div(_), neg, add(_) of two sparse tensors, sparse_mask, t(_), "
              "transpose(_), permute, T, mT")


class SparseCOO:
    """``indices`` (int64, sparse_dim x nnz) and ``values`` (nnz x dense dims) of a tensor of ``shape``."""

    __slots__ = ("indices", "values", "shape", "coalesced")
    __array_ufunc__ = None  # ndarray + SparseCOO: NumPy defers to __radd__ (the dense sum)

    def __init__(self, indices, values, shape: tuple, coalesced: bool = False) -> None:
        self.indices, self.values, self.shape = indices, values, tuple(shape)
        self.coalesced = coalesced or indices.shape[1] <= 1  # (as PyTorch marks a tensor of 0 or 1 entries)

    def __getattr__(self, name: str):  # an array method an op tried to call on a sparse tensor
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedError(
            f"'{name}' is not supported on a sparse COO tensor (ember supports {_SUPPORTED}); "
            "call .to_dense() first")

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def itemsize(self) -> int:
        return self.values.itemsize

    @property
    def nnz(self) -> int:
        return self.indices.shape[1]

    def with_values(self, values, coalesced: bool | None = None) -> SparseCOO:
        """The same indices with other values."""
        return SparseCOO(self.indices, values, self.shape, self.coalesced if coalesced is None else coalesced)

    def copy(self) -> SparseCOO:
        return SparseCOO(self.indices.copy(), self.values.copy(), self.shape, self.coalesced)

    def cast(self, dtype, copy: bool = True) -> SparseCOO:
        """The values in ``dtype``. (Not ``astype``: generic tensor code calling it on a sparse tensor must
        fail, not wrap the result as a dense tensor.)"""
        return SparseCOO(self.indices.copy() if copy else self.indices, self.values.astype(dtype, copy=copy),
                         self.shape, self.coalesced)

    def coalesce(self) -> SparseCOO:
        """Repeated indices summed (in the order they occur), indices sorted (row-major): PyTorch's coalesce."""
        if self.coalesced:
            return self
        sparse = self.indices.shape[0]
        keys = xp.ravel_multi_index(tuple(self.indices), self.shape[:sparse]) if sparse > 1 else self.indices[0]
        # (the row length spelled out: -1 cannot be inferred in an empty array's shape)
        flat = self.values.reshape(self.nnz, math.prod(self.shape[sparse:]))
        rows, sums = coalesce_rows(keys, flat, int(xp.prod(self.shape[:sparse])))
        indices = xp.stack(xp.unravel_index(rows, self.shape[:sparse])) if sparse > 1 else rows[None, :]
        return SparseCOO(indices.astype(xp.int64), sums.reshape((rows.size, *self.shape[sparse:])), self.shape, True)

    def to_dense(self):
        out = xp.zeros(self.shape, self.dtype)
        self.add_into(out)
        return out

    def add_into(self, dense) -> None:
        """``dense += self``, in place (repeated indices add up)."""
        c = self.coalesce()
        if not c.indices.shape[0]:  # sparse_dim 0: the one entry is the whole tensor
            dense += c.values.sum(0)
            return
        dense[tuple(c.indices)] += c.values

    def __add__(self, other):
        if isinstance(other, SparseCOO):  # concatenated entries, as PyTorch accumulates sparse gradients
            if other.shape != self.shape:
                raise RuntimeError(f"add: sparse tensors of different sizes {list(self.shape)} and "
                                   f"{list(other.shape)}")
            return SparseCOO(xp.concatenate([self.indices, other.indices], axis=1),
                             xp.concatenate([self.values, other.values.astype(self.dtype, copy=False)]), self.shape)
        out = xp.array(other, dtype=xp.result_type(other, self.values), copy=True)  # dense + sparse: dense
        self.add_into(out)
        return out

    __radd__ = __add__

    def __rsub__(self, other):  # dense - sparse: dense
        return self.with_values(-self.values) + other


def accumulate_sparse(t: Tensor, grad: SparseCOO) -> None:
    """``t.grad += grad`` for a sparse gradient (autograd's ``add_to_grad`` finds this by the gradient's type), as
    PyTorch accumulates: a first one is taken as it is (backward made it for this leaf), sparse into sparse
    concatenates the entries (in place), sparse into dense adds the rows."""
    current = t._grad
    if current is None:
        t._grad = SparseTensor.wrap(grad if grad.dtype == t._data.dtype else grad.cast(t._data.dtype))
    elif not current.is_sparse:
        grad.add_into(current._data)
        current._bump_version()
    else:
        current._data = current._data + grad
        current._bump_version()


def compiled_rows(values) -> bool:
    """Whether the compiled row kernels take ``values``: float32/64 rows (2-d) of a plain array, kernels on."""
    return (type(values) is xp.ndarray and values.dtype in (xp.float32, xp.float64) and values.ndim == 2
            and policy.use_compiled())


def coalesce_rows(keys, values, num: int):
    """``segment_sum(keys, values)`` for keys in [0, num): the compiled kernels (the same bits; the sums split among
    the intra-op threads by rows) when the table is small enough to mark (``policy.coalesce_table_ratio`` rows
    per key), else the reference's sort."""
    if not (compiled_rows(values) and 1 < keys.size and num <= policy.coalesce_table_ratio * keys.size):
        return segment_sum(keys, values)
    rows, where = compiled.distinct_rows(keys, num)
    sums = xp.empty((rows.size, values.shape[1]), values.dtype)
    parallel_for(lambda lo, hi: compiled.sum_rows(keys, values, where, sums, lo, hi), rows.size, values.size)
    return rows, sums


def update_rows(p, g: SparseCOO, values, alpha: float) -> None:
    """``p[rows] += alpha * values`` on the rows of the coalesced (distinct indices) ``g``: only those rows are
    read and written (a gather, the update, a scatter; compiled: one pass, the same bits, split among the
    intra-op threads by rows)."""
    if (g.indices.shape[0] == 1 and p.ndim == 2 and type(p) is xp.ndarray and p.dtype == values.dtype
            and p.flags.c_contiguous and compiled_rows(values)):
        rows, alpha = g.indices[0], p.dtype.type(alpha)
        parallel_for(lambda lo, hi: compiled.add_rows_scaled(p, rows, values, alpha, lo, hi), rows.size, values.size)
        return
    if g.indices.shape[0] == 1:
        rows = g.indices[0]
        part = xp.take(p, rows, axis=0)  # (faster than p[rows] for whole rows)
    else:
        rows = tuple(g.indices)
        part = p[rows]
    part += values * p.dtype.type(alpha)
    p[rows] = part


def segment_sum(flat, rows_of, scale_by_freq: bool = False):
    """(rows, sums): the distinct indices in ``flat`` (sorted) and, for each, the sum of the rows of ``rows_of``
    where it occurs (divided by that count when ``scale_by_freq``) — the gradient of a lookup table, and
    ``coalesce``.

    Few distinct indices, many repeats (a small vocabulary): one GEMM with the (distinct x lookups) one-hot
    matrix. Otherwise each distinct index's first occurrence is gathered in one step, then its second
    occurrences are added in one step (their targets are distinct), then its third, ...: the same sums, to
    the bit, as ``add.at`` over all rows (which adds in the order they occur), without its per-row cost.
    """
    n = flat.size
    order = xp.argsort(flat, kind="stable")  # equal indices keep the order they occur in
    ordered = flat[order]
    new = xp.empty(n, dtype=bool)
    new[:1] = True
    xp.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    starts = xp.flatnonzero(new)
    rows = ordered[starts]
    group = xp.cumsum(new) - 1  # per sorted position: which distinct index
    if 2 * rows.size <= n and rows.size * n <= _ONE_HOT_MAX:
        one_hot = xp.zeros((rows.size, n), dtype=rows_of.dtype)
        one_hot[group, order] = 1
        sums = one_hot @ rows_of
    else:
        sums = xp.take(rows_of, order[starts], axis=0)
        if rows.size != n:
            rank = xp.arange(n) - starts[group]  # 0 for a first occurrence, 1 for a second, ...
            for k in range(1, int(rank.max()) + 1):
                kth = rank == k
                sums[group[kth]] += xp.take(rows_of, order[kth], axis=0)
    if scale_by_freq:  # divide each row's gradient by how often its index occurs in the batch
        sums /= xp.diff(starts, append=n)[:, None].astype(sums.dtype)
    return rows, sums


def scatter_rows(out, num: int, flat, rows_of, scale_by_freq: bool = False):
    """The (num, D) gradient of a lookup, and a sparse matrix's product: zeros, then out[flat[i]] += rows_of[i] for
    every i (divided by each index's count when ``scale_by_freq``), in ``out`` when given (whatever it holds) else
    in a new array. A compiled zero-and-scatter-add split among the intra-op threads by table rows, or the
    reference's segment sums (the same bits)."""
    if not scale_by_freq and compiled_rows(rows_of):
        if out is None:
            out = xp.empty((num, rows_of.shape[1]), rows_of.dtype)
        parallel_for(lambda lo, hi: compiled.zero_scatter_add_rows(out, flat, rows_of, lo, hi), num, out.size)
        return out
    if out is None:  # (zeros_like: under create_graph, a recorded buffer)
        out = xp.zeros_like(rows_of, shape=(num, rows_of.shape[1]), order="C")
    else:
        out.fill(0)
    rows, sums = segment_sum(flat, rows_of, scale_by_freq)
    out[rows] = sums
    return out


# Up to this many one-hot entries (distinct indices x lookups), repeated indices are summed by one GEMM.
_ONE_HOT_MAX = 1 << 20


_RESIZE_ADVICE = """You could try the following options:
1. If you need an empty sparse tensor of this size, call `x = torch.sparse_coo_tensor(size)`.
2. If you need to resize this tensor, you have the following options:
    1. For both sparse and dense dimensions, keep the number of them constant and the size of them non-shrinking, \
and then try the same call again.
    2. Or, create a new sparse tensor with the correct indices and values from this sparse tensor."""


class SparseTensor(Tensor):
    """A sparse COO tensor (``layout=torch.sparse_coo``): a sparse gradient, or ``torch.sparse_coo_tensor``.

    Differences from PyTorch: only the methods listed in the module docstring; it is never a leaf that
    requires grad, and never part of a recorded graph.
    """

    __slots__ = ()
    is_sparse = True

    @classmethod
    def wrap(cls, coo: SparseCOO) -> SparseTensor:
        t = cls.__new__(cls)
        _fill(t, coo, None, 0)
        return t

    @property
    def layout(self) -> Layout:
        return sparse_coo

    def __repr__(self) -> str:
        # PyTorch's layout: the indices' and values' elements aligned under their first, no dtype of their own
        from ._tensor_str import array_text, dtype_is_shown

        c = self._data
        parts = []
        for name, a in (("indices", c.indices), ("values", c.values)):
            text = array_text(a, len(f"tensor({name}=tensor("))
            parts.append(f"{name}=tensor({text}{f', size={tuple(a.shape)}' if a.size == 0 else ''})")
        dtype = f"dtype={self.dtype}, " if dtype_is_shown(self.dtype) else ""
        return (f"tensor({parts[0]},\n       {parts[1]},\n"
                f"       size={tuple(c.shape)}, nnz={c.nnz}, {dtype}layout=torch.sparse_coo)")

    def new(self, *args, device=None) -> SparseTensor:
        """PyTorch's legacy ``sparse.new(indices, values[, size])`` (a COO tensor of the values' dtype) or
        ``sparse.new(*sizes)`` (an empty one of this tensor's dtype)."""
        from .sparse import legacy_sparse

        made = legacy_sparse(args, self.dtype, device)
        if made is None:
            kinds = ", ".join(type(a).__name__ for a in args)
            raise TypeError(f"new() received an invalid combination of arguments - got ({kinds}); expected "
                            "(indices, values), (indices, values, size) or sizes (ints)")
        return made

    def numpy(self, *, force: bool = False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def is_contiguous(self) -> bool:
        raise RuntimeError("is_contiguous: sparse tensors do not have is_contiguous")

    @property
    def nbytes(self) -> int:
        raise RuntimeError("nbytes is not defined for sparse tensors.  If you want the size of the constituent "
                           "tensors, add the nbytes of the indices and values.  If you want the size of the  "
                           "equivalent dense tensor, multiply numel() by element_size()")

    # ----------------------------------------------------------------- the COO view
    def is_coalesced(self) -> bool:
        return self._data.coalesced

    def coalesce(self) -> SparseTensor:
        """Repeated indices summed, indices sorted; ``self`` when already coalesced (as in PyTorch)."""
        c = self._data
        return self if c.coalesced else SparseTensor.wrap(c.coalesce())

    def _indices(self) -> Tensor:
        return Tensor._make(self._data.indices)

    def _values(self) -> Tensor:
        return Tensor._make(self._data.values)

    def indices(self) -> Tensor:
        self._need_coalesced("indices")
        return self._indices()

    def values(self) -> Tensor:
        self._need_coalesced("values")
        return self._values()

    def _need_coalesced(self, what: str) -> None:
        if not self._data.coalesced:
            raise RuntimeError(f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first")

    def _nnz(self) -> int:
        return self._data.nnz

    def sparse_dim(self) -> int:
        return self._data.indices.shape[0]

    def dense_dim(self) -> int:
        return self._data.values.ndim - 1

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        out = self._data.to_dense()
        return Tensor._make(out if dtype is None else out.astype(dtype.np))

    # ----------------------------------------------------------------- what is done to gradients
    @property
    def data(self) -> SparseTensor:
        return SparseTensor.wrap(self._data)

    def detach(self) -> SparseTensor:
        out = SparseTensor.wrap(self._data)
        out._vc = self._vc
        return out

    def clone(self, *, memory_format=None) -> SparseTensor:
        return SparseTensor.wrap(self._data.copy())

    def zero_(self) -> SparseTensor:
        """No entries left (nnz 0), as PyTorch zeroes a sparse tensor."""
        c = self._data
        self._data = SparseCOO(c.indices[:, :0].copy(), c.values[:0].copy(), c.shape, True)
        self._bump_version()
        return self

    def copy_(self, other=NOT_GIVEN, non_blocking: bool = False, **unexpected) -> SparseTensor:
        """``src``'s entries, size and coalesced flag, its values cast to this tensor's dtype: PyTorch's copy
        between sparse tensors (what ``load_state_dict`` does to a sparse buffer). A dense ``src`` is PyTorch's
        RuntimeError."""
        src = copy_arguments(other, non_blocking, unexpected)
        if self._requires_grad:  # (PyTorch's in-place check comes before its dense/sparse one)
            from .autograd import is_grad_enabled
            from .ops.indexing import _leaf_in_place

            if is_grad_enabled():  # (a sparse tensor is always a leaf: ember's never join a graph)
                raise RuntimeError(f"a {_leaf_in_place()}")
        if not isinstance(src, SparseTensor):
            raise dense_sparse_copy_error(self, src)
        refuse_values_requiring_grad("copy_ from a sparse tensor", src)
        c = src._data
        self._data = SparseCOO(c.indices.copy(), c.values.astype(self._data.dtype), c.shape, c.coalesced)
        self._bump_version()
        return self

    def sparse_resize_(self, size, sparse_dim: int, dense_dim: int) -> SparseTensor:
        """A new size with ``sparse_dim`` sparse and ``dense_dim`` dense dimensions, as PyTorch's: anything for a
        tensor without entries; with entries, the same numbers of dimensions and no size shrinking (the values grow
        as PyTorch's resize_ grows them: the old ones first, in memory order)."""
        for name, position, n in (("sparse_dim", 2, sparse_dim), ("dense_dim", 3, dense_dim)):
            if n.__class__ is not int:
                raise TypeError(f"sparse_resize_(): argument '{name}' (position {position}) must be int, not "
                                f"{type(n).__name__}")
        size = tuple(int(n) for n in size)
        if len(size) != sparse_dim + dense_dim:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                               f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
        c = self._data
        if not c.nnz:
            self._data = SparseCOO(xp.zeros((sparse_dim, 0), xp.int64), xp.zeros((0, *size[sparse_dim:]),
                                                                               c.values.dtype), size, True)
        else:
            old_sparse, new_sparse = list(c.shape[:self.sparse_dim()]), list(size[:sparse_dim])
            old_dense, new_dense = list(c.shape[self.sparse_dim():]), list(size[sparse_dim:])
            for what, old, new in (("changing the number of sparse dimensions", self.sparse_dim(), sparse_dim),
                                   ("changing the number of dense dimensions", self.dense_dim(), dense_dim),
                                   ("shrinking the size of sparse dimensions", old_sparse, new_sparse),
                                   ("shrinking the size of dense dimensions", old_dense, new_dense)):
                if old != new if isinstance(old, int) else any(b < a for a, b in zip(old, new)):
                    raise RuntimeError(f"{what} (from {old} to {new}) on a non-empty sparse tensor is not supported."
                                       f"\n{_RESIZE_ADVICE}")
            values = c.values
            if new_dense != old_dense:
                flat = xp.zeros(c.nnz * math.prod(new_dense), values.dtype)
                flat[:values.size] = values.reshape(-1)
                values = flat.reshape((c.nnz, *new_dense))
            self._data = SparseCOO(c.indices, values, size, c.coalesced)
        self._bump_version()
        return self

    def sparse_resize_and_clear_(self, size, sparse_dim: int, dense_dim: int) -> SparseTensor:
        """``sparse_resize_`` after removing every entry (any size and numbers of dimensions)."""
        self.zero_()
        return self.sparse_resize_(size, sparse_dim, dense_dim)

    def mul_(self, other) -> SparseTensor:
        self._data.values *= self._scalar(other, "mul_")
        self._bump_version()
        return self

    def div_(self, other) -> SparseTensor:
        self._data.values /= self._scalar(other, "div_")
        self._bump_version()
        return self

    def mul(self, other) -> SparseTensor:
        c = self._data
        return SparseTensor.wrap(c.with_values(c.values * self._scalar(other, "mul")))

    def div(self, other) -> SparseTensor:
        c = self._data
        return SparseTensor.wrap(c.with_values(c.values / self._scalar(other, "div")))

    def neg(self) -> SparseTensor:
        c = self._data
        return SparseTensor.wrap(c.with_values(-c.values))

    __mul__ = __rmul__ = mul
    __truediv__ = div
    __neg__ = neg

    def add_(self, other, *, alpha: float = 1) -> SparseTensor:
        """``self += alpha * other`` for a sparse ``other``, as in PyTorch: entries concatenated (uncoalesced),
        or merged when both are coalesced."""
        self._data = self._sum(other, "add", alpha)
        self._bump_version()
        return self

    def sub_(self, other, *, alpha: float = 1) -> SparseTensor:
        """``self -= alpha * other`` for a sparse ``other`` (add_'s, with -alpha; a dense one add's error)."""
        return self.add_(other, alpha=-alpha)

    def add(self, other, *, alpha: float = 1) -> SparseTensor:
        return SparseTensor.wrap(self._sum(other, "add", alpha))

    def _sum(self, other, op: str, alpha: float) -> SparseCOO:
        other = self._sparse(other, op, alpha)
        both = self._data.coalesced and other.coalesced
        out = self._data + other
        return out.coalesce() if both else out

    __add__ = add

    def sub(self, other, *, alpha: float = 1) -> SparseTensor:
        """``self - alpha * other`` for a sparse ``other`` (PyTorch refuses a dense one with add's message)."""
        return SparseTensor.wrap(self._sum(other, "add", -alpha))

    __sub__ = sub

    def _sparse(self, other, op: str, alpha: float) -> SparseCOO:
        if not isinstance(other, SparseTensor):
            raise RuntimeError(f"{op}(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        c = other._data
        return c if alpha == 1 else c.with_values(c.values * alpha)

    @staticmethod
    def _scalar(other, op: str):
        if isinstance(other, Tensor):
            if other.is_sparse or other._data.ndim:
                raise NotImplementedError(f"{op}: a sparse COO tensor is multiplied by scalars only in ember")
            other = other._data
        return other


def dense_sparse_copy_error(x: Tensor, src: Tensor) -> RuntimeError:
    """PyTorch's error for ``copy_`` from a dense tensor into a sparse one, or the other way round."""
    return RuntimeError(f"copy_() between dense and sparse Tensors is not implemented! Found self type = "
                        f"{_type_string(x)} and src type = {_type_string(src)}")


_LEGACY_TYPED = frozenset({"uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"})


def _type_string(x: Tensor) -> str:
    """PyTorch's name of ``x``'s type in its messages (``DeprecatedTypeProperties::toString``): the legacy tensor
    type where its dtype has one (``torch.sparse.FloatTensor``), else ``[Sparse]CPU<ScalarType>Type``
    (``CPUBoolType``, ``SparseCPUComplexFloatType``)."""
    from ._legacy import type_

    name = x.dtype.name
    if name in _LEGACY_TYPED:
        return type_(x)
    return f"{'Sparse' if x.is_sparse else ''}CPU{_dtype.SCALAR_TYPE_NAMES[name]}Type"


def copy_arguments(src, non_blocking, unexpected: dict | None = None) -> Tensor:
    """``copy_``'s arguments as PyTorch's parser reads them: ``src`` (PyTorch's ``other``, the one name it takes
    it by) a tensor, or a number, which it wraps as a 0-d tensor (a bool as bool, an int as int64, any other
    number as float64 or complex128); anything else (a list, None, a NumPy array), a ``non_blocking`` that is no
    bool, no ``other`` and a keyword of another name (``unexpected``) are its TypeError."""
    if src is NOT_GIVEN:
        if unexpected:
            raise TypeError('copy_() missing 1 required positional arguments: "other"')
        raise TypeError("copy_() received an invalid combination of arguments - got (), but expected (Tensor other, "
                        "bool non_blocking = False)")
    if unexpected:
        raise TypeError(f"copy_() got an unexpected keyword argument '{next(iter(unexpected))}'")
    if non_blocking.__class__ is not bool:
        raise TypeError(f"copy_(): argument 'non_blocking' must be bool, not {c_type_name(non_blocking)}")
    if isinstance(src, Tensor):
        return src
    if isinstance(src, (bool, int, float, complex, xp.number, xp.bool_)) and not isinstance(src, xp.ndarray):
        dtype = (xp.bool_ if src.__class__ is bool else xp.int64 if isinstance(src, (int, xp.integer))
                 else xp.complex128 if isinstance(src, (complex, xp.complexfloating)) else xp.float64)
        return Tensor._make(xp.asarray(src, dtype=dtype))
    raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {c_type_name(src)}")


def _check_coo(indices, values, size) -> tuple:
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.ndim < 1 or indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0] if values.ndim else 0}")
    sparse = indices.shape[0]
    if size is None:
        top = indices.max(axis=1) + 1 if indices.shape[1] else xp.zeros(sparse, xp.int64)
        size = (*(int(n) for n in top), *values.shape[1:])
    size = tuple(int(n) for n in size)
    if len(size) != sparse + values.ndim - 1 or tuple(size[sparse:]) != values.shape[1:]:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse}) + dense_dim ({values.ndim - 1}), "
                           f"but got {len(size)} (size {list(size)}, values {list(values.shape)})")
    if indices.shape[1]:
        low, high = indices.min(axis=1), indices.max(axis=1)
        for d in range(sparse):
            if low[d] < 0 or high[d] >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {int(high[d] if high[d] >= size[d] else low[d])}")
    return size


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory: bool = False,
                      requires_grad: bool = False, check_invariants=None, is_coalesced=None) -> SparseTensor:
    """A sparse COO tensor from ``indices`` (sparse_dim x nnz) and ``values`` (nnz x dense dims), as
    ``torch.sparse_coo_tensor``: ``size`` inferred from the largest index when omitted; uncoalesced unless
    ``is_coalesced=True`` (then the caller vouches for it). Indices are always checked against ``size``.
    Difference from PyTorch: ``requires_grad=True``, and ``values`` that require grad in grad mode, are a
    NotImplementedError (sparse tensors never join a graph).
    """
    from ._creation import tensor as _tensor

    if requires_grad:
        raise NotImplementedError("sparse_coo_tensor(requires_grad=True): ember's sparse tensors are gradients "
                                  "and never require grad; build a dense tensor instead")
    refuse_values_requiring_grad("sparse_coo_tensor", values)
    idx = indices._data if isinstance(indices, Tensor) else _tensor(indices)._data
    vals = values._data if isinstance(values, Tensor) else _tensor(values, dtype=dtype)._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"indices must be an int64 tensor, got {idx.dtype}")
    if dtype is not None:
        vals = vals.astype(dtype.np)
    size = _check_coo(idx, vals, size)
    return SparseTensor.wrap(SparseCOO(idx.astype(xp.int64), vals.copy(), size, bool(is_coalesced)))


def refuse_values_requiring_grad(name: str, values) -> None:
    """The error for ``values`` that require grad in grad mode: PyTorch's sparse tensor would pass its gradient
    back to them (a graph convolution learning its edge weights); ember's sparse tensors never join a graph, and
    building one of their detached values would silently leave them without a gradient."""
    from .autograd import is_grad_enabled

    if isinstance(values, Tensor) and values._requires_grad and is_grad_enabled():
        raise NotImplementedError(f"{name} of values that require grad: ember's sparse tensors are never part of "
                                  "a recorded graph, so the values would get no gradient (PyTorch's would); "
                                  "pass values.detach(), or multiply by a dense matrix (torch.zeros(size)"
                                  ".index_put((row, col), values, accumulate=True)) to learn them")


def to_sparse(x: Tensor, sparse_dim: int | None = None, *, layout=None, blocksize=None,
              dense_dim=None) -> SparseTensor:
    """``x`` as a coalesced sparse COO tensor: an entry for each index over the first ``sparse_dim``
    dimensions (default: all) whose slice has a nonzero, as ``Tensor.to_sparse``. Only the COO layout;
    difference from PyTorch: not recorded by autograd (ember's sparse tensors never join a graph).
    """
    from .autograd import is_grad_enabled

    if layout not in (None, sparse_coo) or blocksize is not None or dense_dim is not None:
        raise NotImplementedError(f"to_sparse(layout={layout}): ember has only the sparse COO layout")
    if x.is_sparse:
        return x
    if x._requires_grad and is_grad_enabled():
        raise NotImplementedError("to_sparse of a tensor that requires grad: ember's sparse tensors are never "
                                  "part of a recorded graph; call it on x.detach()")
    data = x._data
    sd = data.ndim if sparse_dim is None else sparse_dim
    if not 0 <= sd <= data.ndim:
        raise RuntimeError(f"sparse_dim must be in [0, {data.ndim}] for a tensor of {data.ndim} dimensions, "
                           f"got {sd}")
    # a slice over the dense dims counts once (spelled out: -1 cannot be inferred in an empty array's shape)
    nonzero = (data != 0).reshape(data.shape[:sd] + (math.prod(data.shape[sd:]),)).any(-1)
    indices = xp.stack(xp.nonzero(nonzero)).astype(xp.int64) if sd else xp.zeros((0, 1), xp.int64)
    values = data[nonzero] if sd else data[None]
    return SparseTensor.wrap(SparseCOO(indices, values.copy(), data.shape, True))


def sparse_mask(x: Tensor, mask) -> SparseTensor:
    """``x``'s entries at ``mask``'s indices, a sparse COO tensor with those indices (repeats and order kept,
    coalesced when ``mask`` is) and ``x``'s dtype; ``mask``'s values are ignored, as ``Tensor.sparse_mask``.
    Difference from PyTorch: not recorded by autograd (ember's sparse tensors never join a graph).
    """
    from .autograd import is_grad_enabled

    if not isinstance(mask, SparseTensor):
        raise NotImplementedError(f"sparse_mask: mask must be a sparse COO tensor, got the {mask.layout} layout")
    c = mask._data
    if tuple(x.shape) != tuple(c.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(x.shape)} "
                           f"but mask has size {list(c.shape)}")
    if x._requires_grad and is_grad_enabled():
        raise NotImplementedError("sparse_mask of a tensor that requires grad: ember's sparse tensors are never "
                                  "part of a recorded graph; call it on x.detach()")
    dense = x._data.to_dense() if x.is_sparse else x._data
    values = dense[tuple(c.indices)]  # (nnz, *dense dims): one row per index of mask, repeats included
    return SparseTensor.wrap(SparseCOO(c.indices.copy(), values, c.shape, c.coalesced))


def transpose(x: SparseTensor, dim0: int, dim1: int) -> SparseTensor:
    """``x`` with sparse dimensions ``dim0`` and ``dim1`` swapped, as PyTorch's sparse ``transpose``: a copy whose
    index rows are swapped, marked uncoalesced (the order of its entries is no longer sorted) unless it has no
    entries; the same dimension twice gives a plain copy. Transposing a dense dimension is a RuntimeError.
    Difference from PyTorch: not recorded by autograd (ember's sparse tensors never join a graph)."""
    from ._tensor import _wrap_dim

    c = x._data
    d0, d1 = _wrap_dim(dim0, c.ndim), _wrap_dim(dim1, c.ndim)
    if d0 == d1:
        return SparseTensor.wrap(c.copy())
    sparse = c.indices.shape[0]
    if d0 >= sparse or d1 >= sparse:
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: {sparse}, "
                           f"d0: {d0}, d1: {d1}")
    order = list(range(c.ndim))
    order[d0], order[d1] = d1, d0
    return SparseTensor.wrap(_reordered(c, order, c.values.copy(), c.coalesced and not c.nnz))


def t(x: SparseTensor, name: str = "t") -> SparseTensor:
    """``x.t()`` of a sparse COO tensor: ``transpose(x, 0, 1)``, for at most 2 sparse and no dense dimensions
    (``name``: the method the error names)."""
    sparse, dense = x.sparse_dim(), x.dense_dim()
    if sparse > 2 or dense:
        raise RuntimeError(f"{name}() expects a tensor with <= 2 sparse and 0 dense dimensions, but got {sparse} "
                           f"sparse and {dense} dense dimensions")
    return transpose(x, 0, 0 if x._data.ndim < 2 else 1)


def permute(x: SparseTensor, dims: tuple) -> SparseTensor:
    """``x`` with its dimensions in the (checked, non-negative) order ``dims``, as PyTorch's sparse ``permute``
    (and so ``.T``): index rows reordered, the values shared (their dense dimensions permuted), coalesced if ``x``
    is and the first dimension stays first. Sparse and dense dimensions cannot trade places."""
    c = x._data
    sparse = c.indices.shape[0]
    if any((d < sparse) != (i < sparse) for i, d in enumerate(dims)):
        raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense dimensions are not "
                           "allowed.Only transpositions within sparse and dense dimensions are supported.")
    values = c.values.transpose(0, *(d - sparse + 1 for d in dims[sparse:]))
    return SparseTensor.wrap(_reordered(c, dims, values, c.coalesced and (not dims or dims[0] == 0)))


def _reordered(c: SparseCOO, order, values, coalesced: bool) -> SparseCOO:
    """``c``'s entries with dimension ``order[i]`` as dimension ``i`` (``order`` permutes the sparse dimensions
    among themselves first), ``values`` and the coalesced flag as given (even for fewer than two entries)."""
    sparse = c.indices.shape[0]
    out = SparseCOO(c.indices[list(order[:sparse])], values, tuple(c.shape[d] for d in order))
    out.coalesced = coalesced
    return out


def save_error() -> NotImplementedError:
    """What ``ember.save`` raises for a sparse tensor."""
    return NotImplementedError("ember.save cannot store a sparse COO tensor (a sparse .grad, or SGD's "
                               "momentum_buffer for sparse gradients); PyTorch can. Save t.to_dense() instead")


def as_tensor(grad) -> Tensor:
    """A gradient array from backward as a tensor: a ``SparseTensor`` for a ``SparseCOO``."""
    return SparseTensor.wrap(grad) if type(grad) is SparseCOO else Tensor._make(grad)


__all__ = ["Layout", "SparseCOO", "SparseTensor", "as_tensor", "refuse_values_requiring_grad", "sparse_coo",
           "sparse_coo_tensor", "strided", "segment_sum", "sparse_mask", "to_sparse"]

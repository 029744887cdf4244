"""Matrix structure: triangular parts (tril/triu), diagonals (diagonal/diag), block diagonals (block_diag).

``tril``/``triu`` act on the last two dimensions, so a batch of matrices works
as one matrix does; their gradient is the same triangle of the upstream gradient.
"""

from __future__ import annotations

from .._backend import xp
from .._dtype import not_implemented_for
from .._meta import follow_view, is_meta, meta_layout
from .._meta import made as _meta_made
from .._size import c_type_name, int_argument
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import Node, shown_as, torch_named
from ..autograd.saved_attributes import as_unsigned, given_argument, keep_as_given


class Triangle(Node):
    linear = True
    _saved_diagonal = property(lambda node: as_unsigned(node.diagonal))

    def forward(self, x, diagonal, upper):
        self.diagonal, self.upper = diagonal, upper
        return _triangle(x, diagonal, upper)

    def backward(self, g):  # the zeroed part did not reach the output
        return (_triangle(g, self.diagonal, self.upper),)


@torch_named("TrilBackward0")
class _Lower(Triangle):
    __slots__ = ()


@torch_named("TriuBackward0")
class _Upper(Triangle):
    __slots__ = ()


def _triangle(a, diagonal: int, upper: bool):
    """The triangle of ``a``, row-major whatever ``a``'s layout (as PyTorch's tril/triu give it)."""
    out = xp.triu(a, diagonal) if upper else xp.tril(a, diagonal)
    if out.__class__ is xp.ndarray and not out.flags.c_contiguous and not is_meta(out):
        out = xp.ascontiguousarray(out)
    return out


def _check_matrix(x: Tensor, name: str) -> None:
    if x._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims: elements with ``col - row <= diagonal`` kept, the rest 0."""
    diagonal = int_argument(diagonal, "tril", "diagonal")
    _check_matrix(x, "tril")
    return _Lower.apply(x, diagonal=diagonal, upper=False)


def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims: elements with ``col - row >= diagonal`` kept, the rest 0."""
    diagonal = int_argument(diagonal, "triu", "diagonal")
    _check_matrix(x, "triu")
    return _Upper.apply(x, diagonal=diagonal, upper=True)


def tril_(x: Tensor, diagonal: int = 0) -> Tensor:
    from .inplace import _unary_inplace

    diagonal = int_argument(diagonal, "tril_", "diagonal")
    _check_matrix(x, "tril_")
    return _unary_inplace(x, lambda t: tril(t, diagonal), lambda a: a.__setitem__(..., xp.tril(a, diagonal)))


def triu_(x: Tensor, diagonal: int = 0) -> Tensor:
    from .inplace import _unary_inplace

    diagonal = int_argument(diagonal, "triu_", "diagonal")
    _check_matrix(x, "triu_")
    return _unary_inplace(x, lambda t: triu(t, diagonal), lambda a: a.__setitem__(..., xp.triu(a, diagonal)))


def _diagonal_positions(shape, offset: int, dim1: int, dim2: int):
    """Row and column indices (within dims dim1, dim2) of the ``offset`` diagonal."""
    n = max(0, min(shape[dim1] - max(-offset, 0), shape[dim2] - max(offset, 0)))
    i = xp.arange(n)
    return i + max(-offset, 0), i + max(offset, 0)


class Diagonal(Node):
    is_view = True
    _saved_self_sym_sizes = property(lambda node: tuple(node.shape))
    _saved_offset = property(lambda node: as_unsigned(node.offset))
    _saved_dim1 = given_argument("dim1", lambda node: node.dims[0])
    _saved_dim2 = given_argument("dim2", lambda node: node.dims[1])

    def forward(self, x, offset, dim1, dim2):
        self.shape, self.offset, self.dims = x.shape, offset, (dim1, dim2)
        out = xp.diagonal(x, offset, dim1, dim2)
        if x.flags.writeable:  # NumPy's diagonal view is read-only; PyTorch's is written through like any view
            out.flags.writeable = True
        if _meta_made[0] and is_meta(x):  # (PyTorch's layout: the diagonal steps both strides, starts at offset)
            s = meta_layout(x)[0]
            start = 0 if not out.shape[-1] else offset * s[dim2] if offset >= 0 else -offset * s[dim1]
            follow_view(x, out, [n for k, n in enumerate(s) if k not in (dim1, dim2)] + [s[dim1] + s[dim2]], start)
        return out

    def backward(self, g):  # g goes back onto the diagonal, zeros elsewhere
        d1, d2 = self.dims
        rest = [n for k, n in enumerate(self.shape) if k not in self.dims]
        out = xp.zeros_like(g, shape=(*rest, self.shape[d1], self.shape[d2]))  # the two dims last
        rows, cols = _diagonal_positions(self.shape, self.offset, d1, d2)
        out[..., rows, cols] = g
        return (xp.moveaxis(out, (-2, -1), self.dims),)


@torch_named("DiagonalBackward0_copy")
class DiagonalCopy(Diagonal):
    """``torch.diag`` of a matrix: its diagonal copied, not a view (PyTorch's ``diagonal_copy``: writing into the
    result leaves the matrix as it was, and the reverse)."""
    is_view = False

    def name(self) -> str:
        return "DiagonalBackward0_copy"  # (PyTorch's name for the copying variant of a view op)

    def forward(self, x, offset, dim1, dim2):
        return super().forward(x, offset, dim1, dim2).copy()


def diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The ``offset`` diagonal of dims ``dim1``/``dim2``, as a new last dimension: a view of ``x``, as PyTorch's
    (writes to it reach ``x``)."""
    nd = x._data.ndim
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = Diagonal.apply(x, offset=int_argument(offset, "diagonal", "offset"), dim1=d1, dim2=d2)
    return keep_as_given(out, dim1=dim1, dim2=dim2)


class DiagEmbed(Node):
    def forward(self, v, offset):
        self.offset = offset
        n = v.shape[0] + abs(offset)
        out = xp.zeros((n, n), dtype=v.dtype)
        rows, cols = _diagonal_positions(out.shape, offset, 0, 1)
        out[rows, cols] = v
        return out

    def backward(self, g):
        return (xp.diagonal(g, self.offset).copy(),)


@torch_named("DiagEmbedBackward0")
class DiagEmbedDims(Node):
    def forward(self, v, offset, dim1, dim2):
        self.offset, self.dims = offset, (dim1, dim2)
        n = v.shape[-1] + abs(offset)
        out = xp.zeros(v.shape[:-1] + (n, n), dtype=v.dtype)
        rows, cols = _diagonal_positions(out.shape, offset, -2, -1)
        out[..., rows, cols] = v
        return xp.moveaxis(out, (-2, -1), (dim1, dim2))

    def backward(self, g):  # the diagonal of the gradient
        return (xp.diagonal(g, self.offset, *self.dims).copy(),)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose ``offset`` diagonal (in dims ``dim1``, ``dim2`` of the result) is the last dimension of
    ``input``; zeros elsewhere."""
    nd = input._data.ndim + 1
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return DiagEmbedDims.apply(input, offset=int(offset), dim1=d1, dim2=d2)


def diag(x: Tensor, diagonal: int = 0) -> Tensor:
    """1-D input: a square matrix with ``x`` on the ``diagonal`` diagonal. 2-D input: that diagonal."""
    if x._data.ndim == 1:
        return DiagEmbed.apply(x, offset=int(diagonal))
    if x._data.ndim == 2:
        return DiagonalCopy.apply(x, offset=int(diagonal), dim1=0, dim2=1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x._data.ndim}D")


def trace(x: Tensor) -> Tensor:
    """The sum of the main diagonal of a 2-D tensor (integers sum as int64, as ``sum`` does)."""
    from .reduction import sum

    if x._data.dtype == xp.bool_:  # (PyTorch's kernel has no bool version, checked first; sum would count them)
        raise not_implemented_for("trace", x.dtype)
    if x._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x._data.ndim}")
    out = shown_as(sum(Diagonal.apply(x, offset=0, dim1=0, dim2=1)), "TraceBackward0")  # (PyTorch's one node)
    return keep_as_given(out, self_sym_sizes=x._data.shape)  # (the matrix's sizes, as PyTorch's node keeps)


@torch_named("BlockDiagBackward0")
class BlockDiag(Node):
    """``block_diag``: the inputs along the diagonal of one zero matrix (a 0-d input a 1 x 1 block, a 1-d one a row);
    each input's gradient is its block of the output's, in the input's shape."""

    linear = True

    def forward(self, *arrays):
        self.shapes = [a.shape for a in arrays]
        blocks = [a.reshape(1, -1) if a.ndim < 2 else a for a in arrays]
        out = xp.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), arrays[0].dtype)
        row = col = 0
        for b in blocks:
            out[row:row + b.shape[0], col:col + b.shape[1]] = b
            row, col = row + b.shape[0], col + b.shape[1]
        return out

    def backward(self, g):
        grads, row, col = [], 0, 0
        for shape in self.shapes:
            rows, cols = shape if len(shape) == 2 else (1, int(xp.prod(shape)))
            grads.append(g[row:row + rows, col:col + cols].reshape(shape))
            row, col = row + rows, col + cols
        return tuple(grads)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors as the blocks of a block-diagonal matrix, as PyTorch's: a 0-d tensor is a 1 x 1 block, a 1-d one
    of n elements a 1 x n row; the result's dtype is their promoted one; no tensors give a (1, 0) matrix."""
    from .. import _creation
    from .._meta import check_operand_devices
    from .elementwise import promoted, result_dtype

    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {c_type_name(t)}")
        if t._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t._data.ndim} dimensions")
    if not tensors:
        return _creation.zeros((1, 0))
    if _meta_made[0]:  # (meta tensors with CPU ones: PyTorch's error)
        check_operand_devices(*(t._data for t in tensors))
    target = result_dtype(*tensors)  # (PyTorch's result_type: a 0-d block promotes by its category only)
    return BlockDiag.apply(*(promoted(t, target) for t in tensors))


def _tri_indices(row: int, col: int, offset: int, upper: bool, dtype) -> Tensor:
    from .. import _dtype

    mask = xp.ones((row, col), dtype=bool)
    rows, cols = xp.nonzero(xp.triu(mask, offset) if upper else xp.tril(mask, offset))
    dt = _dtype.int64.np if dtype is None else _dtype.to_np(dtype)
    return Tensor._make(xp.stack([rows, cols]).astype(dt).reshape(2, -1))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The (row, column) indices of the lower triangle of a ``row`` x ``col`` matrix, as a 2 x N tensor."""
    return _tri_indices(row, col, offset, False, dtype)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The (row, column) indices of the upper triangle of a ``row`` x ``col`` matrix, as a 2 x N tensor."""
    return _tri_indices(row, col, offset, True, dtype)

"""Matrix products: matmul (``@``), mm, bmm, mv, dot, outer."""

from __future__ import annotations

from .. import _deprecated_overloads as _deprecated
from .._autocast import lower_precision
from .._backend import xp
from .._dtype import (
    C_INTEGER_NAMES,
    CPP_TYPE_NAMES,
    SCALAR_TYPE_NAMES,
    checked_fill,
    dtype,
    integer_scalar,
    not_implemented_for,
    promote_types,
    scalar_ints,
)
from .._layout import strided
from .._parallel import stack_matmul
from .._size import broadcast_mismatch
from .._tensor import Tensor
from .._warnings import warn_once
from ..autograd.graph import Node, Unread, cast_gradient, shown_as, torch_named
from ..autograd.recorded import RecordedArray, formula_tensor
from ..autograd.saved_attributes import given_argument, keep_as_given, saved_tensor
from .elementwise import require_tensor


class MatMul(Node):
    float32_compute = True
    multilinear = True
    saved_for = ((1,), (0,))  # a for b's gradient, b for a's (an unread one still gives its ndim)

    def forward(self, a, b):
        self.saved = (a, b)
        return stack_matmul(a, b)

    def backward(self, g):
        a, b = self.saved
        if g.__class__ is RecordedArray and a.ndim == 2 and b.ndim == 2:  # (create_graph: PyTorch's recorded ops)
            return _mm_backward_recorded(g, a, b, self.needs_input_grad)
        na, nb = self.needs_input_grad
        # 1-D operands act as a row (left) or a column (right) vector; restore them after.
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1 and b.ndim == 1:  # a dot product: g is 0-d
            g2 = xp.reshape(g, (1, 1))
        elif a.ndim == 1:
            g2 = xp.expand_dims(g2, -2)
        elif b.ndim == 1:
            g2 = xp.expand_dims(g2, -1)
        ga = gb = None
        if a.dtype.kind == "c":  # complex: dL/dA = G B^H, dL/dB = A^H G
            a2, b2 = a2.conj(), b2.conj()
        if na:  # dL/dA = G B^T
            ga = stack_matmul(g2, xp.swapaxes(b2, -1, -2))
            if a.ndim == 1:
                ga = ga.reshape(ga.shape[:-2] + ga.shape[-1:])
        if nb:  # dL/dB = A^T G
            gb = stack_matmul(xp.swapaxes(a2, -1, -2), g2)
            if b.ndim == 1:
                gb = gb.reshape(gb.shape[:-1])
        return ga, gb


def _mm_backward_recorded(g, a, b, needs) -> tuple:
    """A matrix product's gradients under create_graph as PyTorch's ``mm_mat1_backward`` / ``mm_mat2_backward``
    record them (their nodes: ``t()`` is TBackward0, not a transpose's or permute's): ``grad.mm(b.t().conj())`` and
    ``a.t().conj().mm(grad)``, or, for an operand laid out column-major (``w.t()`` of a layer's weight), the product
    of the transposes transposed back: ``b.conj().mm(grad.t()).t()``, ``grad.t().mm(a.conj()).t()``. (An operand
    whose gradient is not computed is not kept, ``saved_for``: its layout then reads as not column-major.)"""
    gt, at, bt = (formula_tensor(v) for v in (g, a, b))
    ga = gb = None
    if needs[0]:
        ga = mm_mat1_backward(gt, bt, _column_major(a))
    if needs[1]:
        gb = mm_mat2_backward(gt, at, _column_major(b))
    return (None if ga is None else RecordedArray(ga)), (None if gb is None else RecordedArray(gb))


def mm_mat1_backward(grad: Tensor, mat2: Tensor, mat1_column_major: bool) -> Tensor:
    """The first operand's gradient of ``mat1.mm(mat2)``, recorded as PyTorch's ``mm_mat1_backward``."""
    return mat2.conj().mm(grad.t()).t() if mat1_column_major else grad.mm(mat2.t().conj())


def mm_mat2_backward(grad: Tensor, mat1: Tensor, mat2_column_major: bool) -> Tensor:
    """The second operand's gradient of ``mat1.mm(mat2)``, recorded as PyTorch's ``mm_mat2_backward``."""
    return grad.t().mm(mat1.conj()).t() if mat2_column_major else mat1.t().conj().mm(grad)


def _column_major(value) -> bool:
    """PyTorch's test in mm's backward: strides (1, rows), as ``w.t()`` of a contiguous (out, in) weight."""
    return column_major(*strides_of(value), value.shape[0])


def column_major(stride0: int, stride1: int, rows: int) -> bool:
    """Strides (1, rows): a matrix laid out column-major, as PyTorch tests it (size-1 dimensions included)."""
    return stride0 == 1 and stride1 == rows


def strides_of(value) -> tuple:
    """A formula operand's strides in elements, as its tensor's ``stride()``."""
    if value.__class__ is RecordedArray:
        return value.t.stride()
    if value.__class__ is Unread:  # (an operand not kept: the layout it had)
        return tuple(n // value.itemsize for n in value.held_strides)
    return tuple(n // value.itemsize for n in value.strides)


# matmul's node under PyTorch's name for each form of the product (names only: one node, one formula)
@torch_named("MmBackward0")
class _MatrixTimesMatrix(MatMul):
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_mat2, _raw_saved_mat2 = saved_tensor(1)


@torch_named("DotBackward0")
class _VectorDotVector(MatMul):
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_tensor, _raw_saved_tensor = saved_tensor(1)


@torch_named("MvBackward0")
class _MatrixTimesVector(MatMul):
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_vec, _raw_saved_vec = saved_tensor(1)


@torch_named("BmmBackward0")
class _BatchTimesBatch(MatMul):
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_mat2, _raw_saved_mat2 = saved_tensor(1)

    def backward(self, g):
        if g.__class__ is not RecordedArray:
            return MatMul.backward(self, g)
        # create_graph: PyTorch's formulas, grad.bmm(mat2.transpose(1, 2).conj()) and
        # self.transpose(1, 2).conj().bmm(grad) (BmmBackward0 again, not a matmul's view of a stacked product)
        a, b = self.saved
        na, nb = self.needs_input_grad
        gt = formula_tensor(g)
        ga = RecordedArray(gt.bmm(formula_tensor(b).transpose(1, 2).conj())) if na else None
        gb = RecordedArray(formula_tensor(a).transpose(1, 2).conj().bmm(gt)) if nb else None
        return ga, gb


@torch_named("SqueezeBackward4")
class _VectorTimesMatrix(MatMul):
    pass


@torch_named("CloneBackward0")
class _MatrixTimesBatch(MatMul):
    pass


@torch_named("UnsafeViewBackward0")
class _Batched(MatMul):  # (PyTorch folds the batches into one matrix product and views the result)
    def backward(self, g):
        a, b = self.saved
        if g.__class__ is RecordedArray and b.ndim <= 2 and a.ndim > 2:
            return _folded_backward_recorded(g, a, b, self.needs_input_grad)
        return MatMul.backward(self, g)


def _folded_backward_recorded(g, a, b, needs) -> tuple:
    """Under create_graph, the gradients of a stack of matrices ``a`` times one matrix or vector ``b`` as PyTorch
    records them: its matmul folds ``a`` into one matrix (``a.view(-1, k)``), multiplies (``mm`` / ``mv``) and
    views the product back, so its gradients are mm's (``mm_mat1_backward`` / ``mm_mat2_backward``) or mv's
    (``grad.ger(vec)``, ``self.t().mv(grad)``) of the output gradient folded the same way, ``a``'s viewed back to
    ``a``'s shape. (``a`` itself is not kept where only its gradient is computed: its shape is the output's with
    ``b``'s rows last.)"""
    gt, bt = formula_tensor(g), formula_tensor(b)
    rows = bt.shape[0]
    vector = bt.ndim == 1
    g2 = gt.reshape(-1) if vector else gt.reshape(-1, gt.shape[-1])
    a_shape = (*gt.shape, rows) if vector else (*gt.shape[:-1], rows)
    if not needs[1] and not vector and not _folds_as_view(a):
        # PyTorch folds only where ``b`` requires grad or ``a`` views as one matrix: else its matmul expands ``b``
        # to a batch and multiplies with ``bmm``, whose formula records a's gradient
        g3 = gt.reshape(-1, *gt.shape[-2:])
        ga = g3.bmm(bt.expand(g3.shape[0], *bt.shape).transpose(1, 2).conj()).view(a_shape)
        return RecordedArray(ga), None
    # the folded ``a`` (read where b's gradient is computed; else not kept, and then not column-major, as in
    # ``_mm_backward_recorded``)
    a2 = formula_tensor(a).reshape(-1, rows) if needs[1] else None
    ga = gb = None
    if needs[0]:
        a2_column_major = a2 is not None and column_major(*a2.stride(), a2.shape[0])
        ga = (g2.view(-1, 1) * bt.conj()) if vector else mm_mat1_backward(g2, bt, a2_column_major)
        ga = ga.view(a_shape)
    if needs[1]:
        gb = a2.t().conj().mv(g2) if vector else mm_mat2_backward(g2, a2, _column_major(b))
    return (None if ga is None else RecordedArray(ga)), (None if gb is None else RecordedArray(gb))


_NODE_BY_NDIMS = {(2, 2): _MatrixTimesMatrix, (1, 1): _VectorDotVector, (2, 1): _MatrixTimesVector,
                  (1, 2): _VectorTimesMatrix}


@lower_precision
def matmul(a: Tensor, b: Tensor) -> Tensor:
    require_tensor("matmul", a, 1, "input")
    require_tensor("matmul", b)
    return _matmul(a, b)


def _matmul(a: Tensor, b: Tensor, node: type[MatMul] | None = None) -> Tensor:
    """``matmul``; ``node``: the node class (its PyTorch name) where the caller knows it (``bmm``), else the one
    of the operands' dimensions."""
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError("matmul expects two tensors")
    if a.layout is not strided or b.layout is not strided:  # a sparse COO/CSR/CSC matrix times a dense one
        from .._sparse_compressed import sparse_product

        return sparse_product(a, b)
    sa, sb = a._data.shape, b._data.shape
    if len(sa) > 2 and len(sb) > 2:  # (PyTorch broadcasts the batch dims first: its error before any other check)
        problem = broadcast_mismatch((sa[:-2], sb[:-2]))
        if problem:
            raise RuntimeError(problem)
    check_product(a, b)
    if b._data.ndim >= 3:
        # PyTorch treats a 3-D a whose batch is 1 against a 3-D stack as the matrix a[0]
        as_matrix = a._data.ndim == 3 and b._data.ndim == 3 and sa[0] == 1 and sb[0] != 1
        if a._data.ndim <= 2 or as_matrix:
            if a._requires_grad:
                # PyTorch's kernel folds b's batches into one matrix (b transposed, then viewed as (-1, k)), which
                # a's gradient reads: a copy of b unless that view exists (a batch of 1), so changing b in place
                # before backward is then allowed and a's gradient reads the values b had: the same; for a matrix
                # a its last node is then the transposed product's clone
                if _folding_copies(b):
                    b = b.clone()
                if node is None and a._data.ndim >= 2:
                    node = _MatrixTimesBatch
        elif (a._requires_grad or b._requires_grad) and (
                sa[:-2] != sb[:-2] or not (_batch_viewed(a._data) and _batch_viewed(b._data))):
            # (batches that broadcast, or several batch dims that an operand's memory may not view as one)
            a, b = _batches_copied(a, b)
    if node is None:
        node = _NODE_BY_NDIMS.get((a._data.ndim, b._data.ndim), _Batched)
    return node.apply(a, b)


def check_product(a: Tensor, b: Tensor, kernel: str | None = None) -> None:
    """matmul's checks of its operands (the family's too): at least 1-D each, the inner sizes, one dtype, not bool
    (``kernel``: the PyTorch kernel that the bool error names, where the caller's is not matmul's)."""
    sa, sb = a._data.shape, b._data.shape
    if a._data.ndim == 0 or b._data.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(sa)}D and {len(sb)}D")
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, sa))} and "
            f"{'x'.join(map(str, sb))}): inner dimensions {k_a} and {k_b} differ"
        )
    if a.dtype != b.dtype:  # PyTorch's matrix products do not promote
        da, db = a.dtype.name, b.dtype.name
        if len(sa) == 1 and len(sb) == 1:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {SCALAR_TYPE_NAMES[da]} "
                               f"and {SCALAR_TYPE_NAMES[db]}")
        # the kernel PyTorch's matmul reaches names them: addmv (a matrix, or a stack folded into one, times a
        # vector: into a result of the vector's dtype), mm (a matrix, or a folded stack, times a matrix), else
        # the batched kernel
        if len(sa) > 2 or len(sb) > 2:
            if not _matmul_folds(a, b):
                raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[da]} but found {SCALAR_TYPE_NAMES[db]}")
            if len(sa) < len(sb):  # (times a stack: the stack's transpose, folded, times the left operand's)
                da, db = db, da
                sa, sb = sb, sa
        if len(sb) == 1:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {SCALAR_TYPE_NAMES[db]}, "
                               f"{SCALAR_TYPE_NAMES[da]}, and {SCALAR_TYPE_NAMES[db]}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {CPP_TYPE_NAMES[da]} != "
                           f"{CPP_TYPE_NAMES[db]}")
    if a._data.dtype == xp.bool_:
        if kernel is None:  # the kernel PyTorch's matmul dispatches to for these dimensions
            kernel = ("dot" if len(sa) == 1 else "addmv_impl_cpu") if len(sb) == 1 else \
                "bmm" if len(sb) > 2 else "addmm_impl_cpu_"
        _check_not_bool(a, b, kernel)


def _matmul_folds(a: Tensor, b: Tensor) -> bool:
    """Whether PyTorch's matmul of a stack by a vector or matrix (or a vector by a stack) folds the stack into one
    matrix and calls mv/mm rather than its batched kernel (its should_fold): the stack (transposed, where it is
    the right operand) must view as one matrix without a copy, or the other operand require grad (its gradient is
    then one product, not a sum over the batch); else a matrix times a stack never folds."""
    stack, other = (a._data, b._data) if a._data.ndim >= b._data.ndim else (xp.swapaxes(b._data, -1, -2), a._data)
    if stack.ndim < 3 or other.ndim > 2:
        return False
    if (b if other is b._data else a)._requires_grad:
        return True
    return a._data.ndim != 2 and (stack.size == 0 or _folds_as_view(stack))


def _check_not_bool(a: Tensor, b: Tensor, kernel: str) -> None:
    """PyTorch's matrix products have no bool kernel: its error, except where an operand is empty (the kernel is
    never reached then; dot's dtype check comes first)."""
    if a._data.dtype == xp.bool_ and (kernel == "dot" or (a._data.size and b._data.size)):
        raise not_implemented_for(kernel, a.dtype)


def _folding_copies(b: Tensor) -> bool:
    """Whether PyTorch's matmul of a vector or matrix by the stack ``b`` copies it: it folds ``b.mT`` into one
    matrix of ``b``'s last dim as columns, a view only where the strides allow it."""
    try:
        # (the rows counted, not -1: NumPy infers no size of an empty array, which PyTorch views in any shape)
        rows = int(xp.prod(b._data.shape[:-2], dtype=xp.int64)) * b._data.shape[-1]
        xp.reshape(xp.swapaxes(b._data, -1, -2), (rows, b._data.shape[-2]), copy=False)
    except ValueError:
        return True
    return False


def _folds_as_view(a) -> bool:
    """Whether a formula operand's dims but the last view as one (PyTorch's matmul folds a stack into one matrix
    without a copy): each stride its successor's times that dim's size (of the layout it had, where not kept)."""
    strides, shape = strides_of(a), a.shape
    for i in range(len(shape) - 2):
        if strides[i] != strides[i + 1] * shape[i + 1]:
            return False
    return True


def _batch_viewed(a) -> bool:
    """Whether ``a``'s batch dims (all but the last two) surely view as one: each stride its successor's times that
    dim's size (a quick check for the common layouts; False only sends the product to ``_batches_copied``)."""
    shape, strides = a.shape, a.strides
    for i in range(a.ndim - 3):
        if strides[i] != strides[i + 1] * shape[i + 1]:
            return False
    return True


def _copied_by_batching(t: Tensor, batch: tuple) -> bool:
    """Whether PyTorch's batched product copies ``t`` (it expands each operand to the common batch and views it as
    one stack of matrices: a broadcast batch dimension that cannot be viewed so is a copy, which it saves)."""
    expanded = xp.broadcast_to(t._data, batch + t._data.shape[-2:])
    try:
        # (the stack's size, not -1: NumPy infers no size of an empty array, which PyTorch views in any shape)
        xp.reshape(expanded, (int(xp.prod(batch, dtype=xp.int64)), *t._data.shape[-2:]), copy=False)
    except ValueError:
        return True
    return False


def _batches_copied(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """a and b of a product whose batches broadcast, each cloned where PyTorch saves a copy of it for the other's
    gradient (a changed in place before backward is then no error, and b's gradient reads the values a had)."""
    batch = xp.broadcast_shapes(a._data.shape[:-2], b._data.shape[:-2])  # (they broadcast: _matmul checked)
    if b._requires_grad and _copied_by_batching(a, batch):
        a = a.clone()
    if a._requires_grad and _copied_by_batching(b, batch):
        b = b.clone()
    return a, b


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of 2-D matrices (PyTorch's deprecated form of ``linalg.multi_dot``; it warns once per process,
    as PyTorch)."""
    from ..linalg import multi_dot

    warn_once("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
              "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
              "parameters.", module="torch.functional")  # from PyTorch's Python wrapper
    for t in matrices:
        if t._data.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t._data.ndim}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    return matrices[0].contiguous().clone() if len(matrices) == 1 else multi_dot(matrices)


def require_tensors(name: str, first_position: int, **operands) -> None:
    """PyTorch's TypeError for a product's operand that is not a tensor (``mm(): argument 'mat2' (position 2) must
    be Tensor, not list``): ``operands`` by PyTorch's names, in its order, the first at ``first_position`` (a
    method's first operand after ``self`` is its position 1, the function's 2)."""
    for position, (argument, value) in enumerate(operands.items(), first_position):
        require_tensor(name, value, position, argument)


def _check_dims(name: str, t: Tensor, nd: int) -> None:
    if t._data.ndim != nd:
        raise RuntimeError(
            f"{name}: expected a {nd}D tensor, but got a {t._data.ndim}D tensor of shape {list(t.shape)}"
        )


@lower_precision
def refuse_out_dtype(name: str, out_dtype) -> None:
    """PyTorch's overload of the product ``name`` taking an ``out_dtype`` (``torch.mm(a, b, torch.float32)``) has no
    CPU kernel: its NotImplementedError for a dtype; a value that is no dtype matches neither overload (the argument
    parser's TypeError, worded from the call by the function's wrapper). Nothing when none was given."""
    if out_dtype is None:
        return
    if not isinstance(out_dtype, dtype):
        error = TypeError(f"{name}(): argument 'out_dtype' must be torch.dtype, not {type(out_dtype).__name__}")
        error.operand = out_dtype  # type: ignore[attr-defined]
        raise error
    raise NotImplementedError(f"Could not run 'aten::{name}.dtype' with arguments from the 'CPU' backend. This could "
                              "be because the operator doesn't exist for this backend, or was omitted during the "
                              "selective/custom build process (if using custom build).")


def _out_dtype_given(number_first: tuple, out_dtype) -> tuple:
    """The deprecated number-first arguments and the ``out_dtype`` of a call of the addmm family: a dtype after the
    operands is PyTorch's ``out_dtype`` overload (``torch.addmm(x, a, b, torch.float32)``), not a number."""
    if len(number_first) == 1 and isinstance(number_first[0], dtype):
        return (), number_first[0]
    return number_first, out_dtype


def mm(a: Tensor, b: Tensor, out_dtype: dtype | None = None) -> Tensor:
    """The product of two matrices (``out_dtype``: PyTorch's overload without a CPU kernel, ``refuse_out_dtype``)."""
    require_tensors("mm", 2, mat2=b)
    refuse_out_dtype("mm", out_dtype)
    _check_dims("mm", a, 2)
    _check_dims("mm", b, 2)
    return matmul(a, b)


@lower_precision
def bmm(a: Tensor, b: Tensor, out_dtype: dtype | None = None) -> Tensor:
    """The products of two batches of matrices (``out_dtype``: as mm's)."""
    require_tensors("bmm", 2, mat2=b)
    refuse_out_dtype("bmm", out_dtype)
    _check_bmm(a, b)
    return _matmul(a, b, _BatchTimesBatch)


def _check_bmm(a: Tensor, b: Tensor, addbmm: bool = False) -> None:
    """PyTorch's checks of two batches of matrices, in its words: bmm's and baddbmm's name the batch and inner
    sizes ``b`` should have in one message, addbmm's kernel each in its own."""
    for name, t in (("batch1", a), ("batch2", b)):
        if t._data.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    (batches, rows, inner), (batches2, inner2, columns) = a._data.shape, b._data.shape
    if not addbmm:
        if (batches2, inner2) != (batches, inner):
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batches}, {inner}] "
                               f"but got: [{batches2}, {inner2}].")
    elif batches2 != batches:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batches} and {batches2}")
    elif inner2 != inner:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({rows}x{inner} and {inner2}x{columns})")


def mv(a: Tensor, v: Tensor) -> Tensor:
    """Matrix times vector, with PyTorch's checks (its mv is addmv into a result of v's dtype: the dims, the sizes,
    then the dtypes, each with addmv's words)."""
    require_tensors("mv", 2, vec=v)
    _check_mv(a, v, v)
    return matmul(a, v)


def _check_mv(a: Tensor, v: Tensor, added: Tensor) -> None:
    """addmv's checks of ``added + a @ v`` (mv's ``added`` is a result of v's dtype): the dims, the sizes, then the
    three dtypes, named in that order."""
    if a._data.ndim != 2 or v._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a._data.ndim}, {v._data.ndim}")
    (rows, cols), n = a._data.shape, v._data.shape[0]
    if cols != n:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{cols}), vec ({n})")
    if not added.dtype == a.dtype == v.dtype:
        names = [SCALAR_TYPE_NAMES[t.dtype.name] for t in (added, a, v)]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {names[0]}, {names[1]}, and "
                           f"{names[2]}")
    _check_not_bool(a, v, "addmv_impl_cpu")


def dot(a: Tensor, b: Tensor) -> Tensor:
    require_tensors("dot", 2, tensor=b)
    if a._data.ndim != 1 or b._data.ndim != 1:  # (older PyTorch flattened; old attention code calls it on rows)
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._data.shape != b._data.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a._data.shape[0]}] and src [{b._data.shape[0]}] "
            "to have the same number of elements, but got different numbers"
        )
    return matmul(a, b)


def outer(a: Tensor, b: Tensor) -> Tensor:
    """The outer product of two 1-D tensors."""
    from .elementwise import mul
    from .shape import unsqueeze

    require_tensors("outer", 2, vec2=b)
    for name, t in (("self", a), ("vec2", b)):
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t._data.ndim}-D")

    return mul(unsqueeze(a, 1), unsqueeze(b, 0))


ger = outer  # PyTorch's older name of outer


def _check_added(input: Tensor, shape: tuple, name: str) -> None:
    """The added input of the addmm family broadcasts to the product's ``shape`` (PyTorch's error otherwise)."""
    try:
        xp.broadcast_shapes(input._data.shape, shape)
    except ValueError:
        raise RuntimeError(f"{name}: the input of shape {list(input.shape)} cannot be broadcast to the product's "
                           f"shape {list(shape)}") from None


def _check_same_dtype(input: Tensor, a: Tensor, b: Tensor, name: str) -> None:
    """PyTorch's addmm family does not promote: the added input has the operands' dtype, in its words (addmm and
    addbmm compare it with the second operand first; baddbmm with the first, the operands' own mismatch left to
    the product's check)."""
    di, da, db = input.dtype, a.dtype, b.dtype
    if name == "baddbmm":
        if di != da:
            raise RuntimeError(f"Input dtypes must be the same, got: input {CPP_TYPE_NAMES[di.name]}, batch1: "
                               f"{CPP_TYPE_NAMES[da.name]}, batch2: {CPP_TYPE_NAMES[db.name]}")
    elif di != db or da != db:
        first, x, y = ("self", di, db) if di != db else ("mat1", da, db)
        raise RuntimeError(f"{first} and mat2 must have the same dtype, but got {SCALAR_TYPE_NAMES[x.name]} and "
                           f"{SCALAR_TYPE_NAMES[y.name]}")


def _product_scalars(d: dtype, beta, alpha, half_as: str | None = "float32") -> tuple:
    """beta and alpha as PyTorch's kernels for a result of dtype ``d`` take them. For a dtype that is not complex, a
    complex one is read as its real part, refused where it has an imaginary part (the error names the C type it
    would be converted to: for half precision ``half_as``, the type the kernel converts it to: ``float`` where it
    computes in float, ``double`` for a ``scalar_tensor`` fill, its own where None); for an integer dtype then
    converted to it as PyTorch's checked conversion does (a float inside the type's range truncated toward zero,
    outside it an error: -0.5 and 255.9 for uint8; a negative int wraps into an unsigned type while its magnitude
    fits, -1 -> 255; any other int outside the range an error, naming the type as c10 does: ``int`` for int32); an
    int past uint64 PyTorch's OverflowError (its argument parser's) for any dtype. For a bool result (the products
    PyTorch computes in bool: those with nothing to sum) each is read as a bool, a complex one too (1+2j True)."""
    beta, alpha = _python_numbers(beta, alpha)
    scalar_ints((beta, alpha))
    boolean = d.np == xp.bool_
    if d.is_complex or d.name not in C_INTEGER_NAMES and not boolean and not (_is_complex(beta) or
                                                                             _is_complex(alpha)):
        return beta, alpha  # (the common case: a floating result, real scalars)
    c_name = C_INTEGER_NAMES.get(d.name) or CPP_TYPE_NAMES[half_as if half_as and d.itemsize == 2 else d.name]
    scalars = []
    for value in (beta, alpha):
        if boolean:  # (a bool result stays bool: its kernels take a scalar as a bool, 2, 0.5 and 1+2j True)
            scalars.append(bool(value))
            continue
        if _is_complex(value):
            if value.imag:
                raise RuntimeError(f"value cannot be converted to type {c_name} without overflow")
            value = value.real
        if d.name in C_INTEGER_NAMES:
            if value.__class__ is float:  # (c10 checks a double against the range before truncating: -0.5 and
                checked_fill(value, d.np)  # 255.9 overflow a uint8, where an int -1 wraps to 255)
            value = int(integer_scalar(int(value), d.np))
        scalars.append(value)
    return tuple(scalars)


def _scalars_read(input: Tensor, d: dtype, beta, alpha, result_size: int, inner: int,
                  batches: int | None = None) -> tuple:
    """beta and alpha as PyTorch's CPU kernels of addmm, baddbmm and addbmm read them, for a result of dtype ``d``.
    An empty result is returned before either is read (except by addbmm with no batch): any scalar is taken, none
    used. With nothing to sum (an inner dimension of 0; addbmm's batch of 0) the kernel scales the input in place,
    ``result.mul_(beta)`` (``zero_()`` for a beta of 0), alpha not read; that cast check refuses a beta whose type
    the result cannot hold: a float into an integer or bool result, a complex into a real one, an int into a bool
    one (``result type Long can't be cast to the desired output type Bool``). ``batches``: addbmm's count, whose
    kernel runs one ``addmm_`` per batch entry, each after the first with beta 1 (an int: a bool result refused
    even with a bool beta). Otherwise both are converted for the product (``_product_scalars``)."""
    from .inplace import _refuse_complex_number, check_result_cast

    if batches != 0 and not result_size:
        return 1, 1  # (values never read: nothing is computed)
    if batches == 0 or not inner:
        alpha = 1  # (not read: there is no product to scale)
        beta = _python_numbers(beta)[0]
        if beta != 0:
            if _is_complex(beta) and not input.is_complex():  # (named as PyTorch's: ComplexHalf beside float16)
                _refuse_complex_number(input)
            check_result_cast(input, beta)
            if d.name in C_INTEGER_NAMES:  # (mul_ casts an int beta into the result's type: 300 wraps to 44 in uint8)
                beta = int(xp.asarray(beta).astype(d.np))
        if batches is not None and batches > 1:
            check_result_cast(input, 1)
    return _product_scalars(d, beta, alpha)


def _python_numbers(*scales) -> tuple:
    """The scales as the Python numbers PyTorch's argument parser reads a Scalar as: a NumPy scalar's (an np.float64
    beta must not promote a float32 result to float64) and a 0-d tensor's value (a tensor of dimensions, or one that
    requires grad, is no Number: refused where it meets the product)."""
    return tuple(v.item() if isinstance(v, xp.generic) or isinstance(v, Tensor) and not v._data.ndim
                 and not v.requires_grad else v for v in scales)


def _is_complex(value) -> bool:
    return isinstance(value, complex) or isinstance(value, xp.generic) and value.dtype.kind == "c"


class _AddedProduct(Node):
    """``beta * input + alpha * product(a, b)`` as one node, PyTorch's (addmm, addmv, addr, baddbmm, addbmm): it
    saves the two operands, each for the other's gradient, never the added input. With beta 0 the input's values
    are ignored (nan/inf do not propagate) and its gradient is ``grad * 0``, as PyTorch's. Half-precision operands
    are computed in float32 and rounded once (PyTorch's CPU kernels)."""
    float32_compute = True
    saved_for = ((2,), (1,))  # b for a's gradient, a for b's
    beta = alpha = 1  # (as Add's alpha: a node's own only when not 1)
    # PyTorch's node shows beta and alpha as the caller gave them (``keep_as_given``: an int stays one, True stays
    # True), where ember's node keeps them as the kernel reads them; each subclass names its two operands
    _saved_alpha = given_argument("alpha", lambda node: 1, raw=True)
    _saved_beta = given_argument("beta", lambda node: 1, raw=True)

    def forward(self, input, a, b, beta=1, alpha=1):
        self.saved = (a, b)
        if beta != 1 or alpha != 1:
            self.beta, self.alpha = beta, alpha
        out = self.product(a, b)
        if alpha != 1:
            out = out * alpha
        if beta == 0:
            return xp.broadcast_to(out, xp.broadcast_shapes(input.shape, out.shape)).copy()
        return out + (input if beta == 1 else input * self.input_scale(beta, a))

    def input_scale(self, beta, a):
        """``beta`` as the forward multiplies the added input by: in bfloat16/float16 with nothing to sum (an inner
        dimension of 0, or addbmm's batch of 0: ``a`` empty), PyTorch's CPU kernels scale the input alone
        (``result.mul_(beta)``), beta taken in the half type; otherwise beta as given."""
        low = self.half_dtype
        return beta if low is None or a.size else xp.float32(xp.asarray(beta, low))

    def backward(self, g):
        a, b = self.saved
        ni, na, nb = self.needs_input_grad
        beta, alpha = self.beta, self.alpha
        if g.dtype.kind == "c":  # complex: the conjugates, as PyTorch's formula
            a, b, beta, alpha = a.conj(), b.conj(), complex(beta).conjugate(), complex(alpha).conjugate()
        gi = (g if beta == 1 else g * beta) if ni else None
        ga, gb = self.product_grads(g, a, b, na, nb)
        if alpha != 1:
            ga = None if ga is None else ga * alpha
            gb = None if gb is None else gb * alpha
        return gi, ga, gb

    @staticmethod
    def product(a, b):
        raise NotImplementedError

    @staticmethod
    def product_grads(g, a, b, na: bool, nb: bool) -> tuple:
        """The gradients of ``product(a, b)`` (the operands conjugated already for a complex one) given ``g``."""
        raise NotImplementedError


@torch_named("AddmmBackward0")
class Addmm(_AddedProduct):
    _saved_mat1, _raw_saved_mat1 = saved_tensor(0)
    _saved_mat2, _raw_saved_mat2 = saved_tensor(1)
    product = staticmethod(xp.matmul)

    @staticmethod
    def product_grads(g, a, b, na, nb):
        return (xp.matmul(g, b.T) if na else None), (xp.matmul(a.T, g) if nb else None)


@torch_named("BaddbmmBackward0")
class Baddbmm(_AddedProduct):
    _saved_batch1, _raw_saved_batch1 = saved_tensor(0)
    _saved_batch2, _raw_saved_batch2 = saved_tensor(1)
    product = staticmethod(stack_matmul)

    @staticmethod
    def product_grads(g, a, b, na, nb):
        return ((stack_matmul(g, xp.swapaxes(b, -1, -2)) if na else None),
                (stack_matmul(xp.swapaxes(a, -1, -2), g) if nb else None))


@torch_named("AddbmmBackward0")
class Addbmm(_AddedProduct):
    """The sum over the batch of ``a[i] @ b[i]``; in bfloat16/float16, as PyTorch's CPU kernel, ``beta * input``
    rounded, then one addmm per batch entry, each rounded once."""

    _saved_batch1, _raw_saved_batch1 = Baddbmm._saved_batch1, Baddbmm._raw_saved_batch1
    _saved_batch2, _raw_saved_batch2 = Baddbmm._saved_batch2, Baddbmm._raw_saved_batch2
    # (the sizes PyTorch's formula reads besides: the batch and the result's)
    _saved_batch1_sym_argsize_0 = property(lambda node: node.input_shapes[1][0])
    _saved_batch1_sym_argsize_1 = property(lambda node: node.input_shapes[1][1])
    _saved_batch2_sym_argsize_2 = property(lambda node: node.input_shapes[2][2])

    def forward(self, input, a, b, beta=1, alpha=1):
        low = self.half_dtype
        if low is None or not a.shape[0]:
            return super().forward(input, a, b, beta=beta, alpha=alpha)
        self.saved = (a, b)
        if beta != 1 or alpha != 1:
            self.beta, self.alpha = beta, alpha
        out = None
        for i in range(a.shape[0]):
            part = xp.matmul(a[i], b[i])
            part = part if alpha == 1 else part * alpha
            if out is None:
                out = part if beta == 0 else part + (input if beta == 1 else input * self.input_scale(beta, a))
            else:
                out = out + part
            if i + 1 < a.shape[0]:  # (the last one is rounded by the node)
                out = out.astype(low).astype(xp.float32)
        return out

    @staticmethod
    def product(a, b):
        # (the sum in the operands' dtype: NumPy's would widen a small integer type; an empty batch sums to zeros)
        return xp.matmul(a, b).sum(0, dtype=a.dtype)

    @staticmethod
    def product_grads(g, a, b, na, nb):
        stacked = xp.broadcast_to(g, (a.shape[0], *g.shape))
        return ((stack_matmul(stacked, xp.swapaxes(b, -1, -2)) if na else None),
                (stack_matmul(xp.swapaxes(a, -1, -2), stacked) if nb else None))


@torch_named("AddmvBackward0")
class Addmv(_AddedProduct):
    """In bfloat16/float16, as PyTorch's CPU gemv: beta and alpha taken in the half type, ``beta * input`` rounded
    to it, then ``+ alpha * (mat @ vec)`` (summed in float32), rounded once; float16 with alpha 1 and a row-major
    matrix takes PyTorch's fast path instead, ``beta * input + mat @ vec`` rounded once."""

    _saved_mat, _raw_saved_mat = saved_tensor(0)
    _saved_vec, _raw_saved_vec = saved_tensor(1)

    def forward(self, input, a, b, beta=1, alpha=1):
        low = self.half_dtype
        if low is None or alpha == 1 and beta in (0, 1):
            return super().forward(input, a, b, beta=beta, alpha=alpha)
        self.saved = (a, b)
        self.beta, self.alpha = beta, alpha
        total = self.product(a, b)
        beta_low, alpha_low = (xp.float32(xp.asarray(v, low)) for v in (beta, alpha))
        if alpha == 1 and low == xp.float16 and a.flags.c_contiguous and b.strides[0] == b.itemsize:
            return total + input * beta_low
        out = total * alpha_low
        if beta == 0:
            return xp.broadcast_to(out, xp.broadcast_shapes(input.shape, out.shape)).copy()
        return out + (input * beta_low).astype(low).astype(xp.float32)

    product = staticmethod(stack_matmul)

    @staticmethod
    def product_grads(g, a, b, na, nb):
        return (xp.outer(g, b) if na else None), (stack_matmul(xp.swapaxes(a, -1, -2), g) if nb else None)


@torch_named("AddrBackward0")
class Addr(_AddedProduct):
    """addr promotes (PyTorch's does, unlike the rest of the family): the operands arrive in the result's dtype and
    each gradient is returned in its input's."""
    float32_compute = False  # (elementwise products: one rounding each in any dtype)
    dtypes = None  # the inputs' dtypes where they are not all the result's
    _saved_vec1, _raw_saved_vec1 = saved_tensor(0)
    _saved_vec2, _raw_saved_vec2 = saved_tensor(1)

    def forward(self, input, a, b, beta=1, alpha=1, dtype=None):
        dtype = xp.result_type(input, a, b) if dtype is None else dtype  # (``addr``'s: PyTorch's promotion)
        if not input.dtype == a.dtype == b.dtype == dtype:
            self.dtypes = (input.dtype, a.dtype, b.dtype)
            input, a, b = input.astype(dtype), a.astype(dtype), b.astype(dtype)
        return super().forward(input, a, b, beta=beta, alpha=alpha)

    def backward(self, g):
        grads = super().backward(g)
        if self.dtypes is None:
            return grads
        # (each in its input's dtype as PyTorch's engine passes it down the edge: a real input's the real part)
        return tuple(None if r is None else cast_gradient(r, d) for r, d in zip(grads, self.dtypes))

    product = staticmethod(xp.outer)

    @staticmethod
    def product_grads(g, a, b, na, nb):
        return (xp.matmul(g, b) if na else None), (xp.matmul(g.T, a) if nb else None)


@lower_precision
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *number_first, beta=1, alpha=1,
          out_dtype: dtype | None = None) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), mat1 and mat2 2-D; input broadcasts to the result. (``number_first``:
    PyTorch's deprecated ``torch.addmm(beta, input, [alpha,] mat1, mat2)``, ember/_deprecated_overloads.py;
    ``out_dtype``, by keyword or after the operands: as mm's.)"""
    number_first, out_dtype = _out_dtype_given(number_first, out_dtype)
    if number_first:
        input, mat1, mat2, beta, alpha = _deprecated.beta_first_function(
            "addmm", ("mat1", "mat2"), (input, mat1, mat2, *number_first), beta, alpha)
    require_tensors("addmm", 2, mat1=mat1, mat2=mat2)
    refuse_out_dtype("addmm", out_dtype)
    if mat1.layout is not strided or mat2.layout is not strided:  # a sparse operand: its product, then the sum
        from .elementwise import add, mul
        from .indexing import where

        product = mm(mat1, mat2)
        product = product if alpha == 1 else mul(product, alpha)
        if beta == 0:  # PyTorch's rule: input is not read (its NaN and inf stay out), its gradient is zero
            nowhere = Tensor._make(xp.zeros(input._data.shape, bool))
            return shown_as(add(where(nowhere, input, 0), product), "AddmmBackward0")
        return shown_as(add(mul(input, beta), product), "AddmmBackward0")  # (PyTorch's one node)
    _check_dims("mm", mat1, 2)
    _check_dims("mm", mat2, 2)
    _check_same_dtype(input, mat1, mat2, "addmm")
    check_product(mat1, mat2)
    (rows, inner), columns = mat1._data.shape, mat2._data.shape[1]
    _check_added(input, (rows, columns), "addmm")
    read = _scalars_read(input, mat1.dtype, beta, alpha, rows * columns, inner)
    return keep_as_given(Addmm.apply(input, mat1, mat2, beta=read[0], alpha=read[1]), alpha=alpha, beta=beta)


@lower_precision
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *number_first, beta=1, alpha=1,
            out_dtype: dtype | None = None) -> Tensor:
    """beta * input + alpha * bmm(batch1, batch2) (``number_first``, ``out_dtype``: as addmm's)."""
    number_first, out_dtype = _out_dtype_given(number_first, out_dtype)
    if number_first:
        input, batch1, batch2, beta, alpha = _deprecated.beta_first_function(
            "baddbmm", ("batch1", "batch2"), (input, batch1, batch2, *number_first), beta, alpha)
    require_tensors("baddbmm", 2, batch1=batch1, batch2=batch2)
    refuse_out_dtype("baddbmm", out_dtype)
    _check_bmm(batch1, batch2)
    _check_same_dtype(input, batch1, batch2, "baddbmm")
    check_product(batch1, batch2, "baddbmm")
    (batches, rows, inner), columns = batch1._data.shape, batch2._data.shape[2]
    _check_added(input, (batches, rows, columns), "baddbmm")
    read = _scalars_read(input, batch1.dtype, beta, alpha, batches * rows * columns, inner)
    return keep_as_given(Baddbmm.apply(input, batch1, batch2, beta=read[0], alpha=read[1]), alpha=alpha, beta=beta)


@lower_precision
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * sum over the batch of batch1[i] @ batch2[i] (``number_first``: as addmm's)."""
    if number_first:
        input, batch1, batch2, beta, alpha = _deprecated.beta_first_function(
            "addbmm", ("batch1", "batch2"), (input, batch1, batch2, *number_first), beta, alpha)
    require_tensors("addbmm", 2, batch1=batch1, batch2=batch2)
    _check_bmm(batch1, batch2, addbmm=True)
    _check_same_dtype(input, batch1, batch2, "addbmm")
    check_product(batch1, batch2, "addmm_impl_cpu_")
    (batches, rows, inner), columns = batch1._data.shape, batch2._data.shape[2]
    _check_added(input, (rows, columns), "addbmm")
    read = _scalars_read(input, batch1.dtype, beta, alpha, rows * columns, inner, batches)
    return keep_as_given(Addbmm.apply(input, batch1, batch2, beta=read[0], alpha=read[1]), alpha=alpha, beta=beta)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (mat @ vec) (``number_first``: as addmm's)."""
    if number_first:
        input, mat, vec, beta, alpha = _deprecated.beta_first_function(
            "addmv", ("mat", "vec"), (input, mat, vec, *number_first), beta, alpha)
    require_tensors("addmv", 2, mat=mat, vec=vec)
    if input._data.ndim > 1:  # (PyTorch's input is a vector, or a 0-d tensor)
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, {mat._data.ndim}, "
                           f"{vec._data.ndim}")
    _check_mv(mat, vec, input)  # (the input's dtype named first, as PyTorch's message)
    if input._data.ndim and input._data.shape[0] not in (1, mat._data.shape[0]):
        raise RuntimeError(f"size mismatch, got input ({input._data.shape[0]}), mat ({mat._data.shape[0]}x"
                           f"{mat._data.shape[1]}), vec ({vec._data.shape[0]})")
    if not mat._data.size:  # (PyTorch's shortcut: input times beta as a tensor of its dtype; alpha not read)
        read = _product_scalars(mat.dtype, beta, 1, half_as="float64")
    else:
        read = _product_scalars(mat.dtype, beta, alpha, half_as=None)
    return keep_as_given(Addmv.apply(input, mat, vec, beta=read[0], alpha=read[1]), alpha=alpha, beta=beta)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *number_first, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2) (``number_first``: as addmm's)."""
    if number_first:
        input, vec1, vec2, beta, alpha = _deprecated.beta_first_function(
            "addr", ("vec1", "vec2"), (input, vec1, vec2, *number_first), beta, alpha)
    require_tensors("addr", 2, vec1=vec1, vec2=vec2)
    _check_dims("addr", vec1, 1)
    _check_dims("addr", vec2, 1)
    _check_added(input, (vec1._data.shape[0], vec2._data.shape[0]), "addr")
    result = promote_types(promote_types(input.dtype, vec1.dtype), vec2.dtype)
    read = _addr_scalars(result, beta, alpha)
    return keep_as_given(Addr.apply(input, vec1, vec2, beta=read[0], alpha=read[1], dtype=result.np), alpha=alpha,
                         beta=beta)


def _addr_scalars(result: dtype, beta, alpha) -> tuple:
    """beta and alpha as PyTorch's addr takes them for a result of dtype ``result``: a bool one for a bool result
    only, a float or complex one for a floating or complex result only; for a bool result each read as a bool (2 is
    True), else as the family's (``_product_scalars``)."""
    beta, alpha = _python_numbers(beta, alpha)
    inexact = result.is_floating_point or result.is_complex
    for name, value in (("beta", beta), ("alpha", alpha)):
        if isinstance(value, bool) and result.np != xp.bool_:
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if isinstance(value, (float, complex)) and not inexact:
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    if result.np == xp.bool_:
        return bool(beta), bool(alpha)
    return _product_scalars(result, beta, alpha, half_as=None)


def _check_both_dtypes(a: Tensor, b: Tensor) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")


def inner(a: Tensor, b: Tensor) -> Tensor:
    """The sum of products over the last dimension of each (a scalar times a tensor when one is 0-d)."""
    from .elementwise import mul
    from .shape import reshape

    require_tensors("inner", 2, other=b)
    if a._data.ndim == 0 or b._data.ndim == 0:
        return mul(a, b)
    if a._data.shape[-1] != b._data.shape[-1]:  # (before the dtypes, as PyTorch)
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(a._data.shape)} and {list(b._data.shape)}")
    _check_both_dtypes(a, b)
    if a._data.ndim == 1 and b._data.ndim == 1:  # (PyTorch's is a dot product: its bool error names dot, empty too)
        _check_not_bool(a, b, "dot")
    lead_a, lead_b = a._data.shape[:-1], b._data.shape[:-1]
    # (the leading sizes multiplied out, not -1: an empty last dimension leaves -1 undetermined)
    rows_a, rows_b = int(xp.prod(lead_a, dtype=xp.int64)), int(xp.prod(lead_b, dtype=xp.int64))
    out = matmul(reshape(a, rows_a, a._data.shape[-1]), reshape(b, rows_b, b._data.shape[-1]).mT)
    return reshape(out, lead_a + lead_b)


def vdot(a: Tensor, b: Tensor) -> Tensor:
    """The dot product of two 1-D tensors, conjugating the first (a plain dot product for real tensors)."""
    from .complex import conj

    require_tensors("vdot", 2, other=b)
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    return shown_as(dot(conj(a) if a._data.dtype.kind == "c" else a, b), "VdotBackward0")  # (PyTorch's one node)


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Contract ``a``'s last ``dims`` dimensions with ``b``'s first (``dims`` an int), or the dimensions listed
    pairwise (``dims=(dims_a, dims_b)``); the result has ``a``'s remaining dimensions, then ``b``'s. Computed as
    one matrix product of the permuted, flattened operands (so it differentiates to any order)."""
    from .._tensor import _wrap_dim
    from .shape import permute, reshape

    _check_both_dtypes(a, b)
    na, nb = a._data.ndim, b._data.ndim
    dims = _tensordot_dims(dims)
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > na or dims > nb:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(na - dims, na)), list(range(dims))
    else:
        da, db = dims
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da, db = [_wrap_dim(d, na) for d in da], [_wrap_dim(d, nb) for d in db]
    sa, sb = a._data.shape, b._data.shape
    for i, j in zip(da, db):
        if sa[i] != sb[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa[i]} in dim {i} and "
                               f"second has size {sb[j]} in dim {j}")
    free_a, free_b = [i for i in range(na) if i not in da], [j for j in range(nb) if j not in db]
    k = int(xp.prod([sa[i] for i in da]))
    if not free_a and not free_b:  # (a full contraction: PyTorch's is a dot product, whose bool error names dot)
        _check_not_bool(a, b, "dot")
    left = reshape(permute(a, *free_a, *da), -1, k) if na else reshape(a, 1, 1)
    right = reshape(permute(b, *db, *free_b), k, -1) if nb else reshape(b, 1, 1)
    out = matmul(left, right)
    return reshape(out, tuple(sa[i] for i in free_a) + tuple(sb[j] for j in free_b))


def _tensordot_dims(dims) -> int | tuple[list, list]:
    """``dims`` as PyTorch's ``tensordot`` reads it: an int (a bool is one), a tensor of one element as its int, else
    two lists of ints (a pair, or a tensor of two rows); a pair whose side is an int or a tensor is refused, as
    PyTorch's argument parser refuses it (``dims=(1, 0)``: TypeError), anything else a RuntimeError."""
    if isinstance(dims, Tensor):
        if dims.numel() <= 1:
            return int(dims.item())
        dims = (dims[0].tolist(), dims[1].tolist())
    if isinstance(dims, int):
        return dims
    if not isinstance(dims, (tuple, list)):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    dims_a, dims_b = dims
    for position, (argument, side) in enumerate((("dims_self", dims_a), ("dims_other", dims_b)), 3):
        if not isinstance(side, (tuple, list)):
            raise TypeError(f"tensordot(): argument '{argument}' (position {position}) must be tuple of ints, not "
                            f"{type(side).__name__}")
        for i, d in enumerate(side):
            if isinstance(d, bool) or not isinstance(d, (int, xp.integer)):  # (a NumPy int is one)
                raise TypeError(f"tensordot(): argument '{argument}' (position {position}) must be tuple of ints, "
                                f"but found element of type {type(d).__name__} at pos {i}")
    return [int(d) for d in dims_a], [int(d) for d in dims_b]


def kron(a: Tensor, b: Tensor) -> Tensor:
    """The Kronecker product: block ``(i, j, ...)`` of the result is ``a[i, j, ...] * b`` (the shorter shape is
    padded with leading 1s); a broadcast product of interleaved shapes, reshaped.

    As PyTorch's, the reshapes are ``_unsafe_view``s (``reshape_owned``: the same memory, no view's version
    counter): the product saves those, so a change of ``a`` or ``b`` in place before backward is read by it, not
    refused, and the result is no view."""
    from .elementwise import mul
    from .shape import reshape_owned

    n = max(a._data.ndim, b._data.ndim)
    sa = (1,) * (n - a._data.ndim) + a._data.shape
    sb = (1,) * (n - b._data.ndim) + b._data.shape
    wide = mul(reshape_owned(a, *(s for d in sa for s in (d, 1))), reshape_owned(b, *(s for d in sb for s in (1, d))))
    return reshape_owned(wide, *(x * y for x, y in zip(sa, sb)))

"""``torch.linalg``: norms, solves, inverses, determinants and factorizations of batches of matrices.

Every function accepts leading batch dimensions and is differentiable (PyTorch's derivative
formulas; the kernels live in ember/ops/solve.py and ember/ops/decompositions.py). A singular or
non-positive-definite input raises ``LinAlgError``, a RuntimeError, as in PyTorch. Complex input where the
functions' docstrings (and docs/api.md) say so.
"""

from __future__ import annotations

import math

from . import _dtype
from ._backend import xp
from ._missing import module_getattr
from ._tensor import Tensor
from .autograd.graph import Node, torch_named
from .ops.decompositions import (
    cholesky,
    cholesky_ex,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    lu,
    lu_factor,
    lu_factor_ex,
    qr,
    svd,
    svdvals,
)
from .ops.ldl import ldl_factor, ldl_factor_ex, ldl_solve
from .ops.linalg import matmul
from .ops.solve import (
    LinAlgError,
    check_matrix,
    cross,
    det,
    empty_in_float32,
    inv,
    matrix_exp,
    pinv,
    refuse_low_precision,
    solve,
    solve_triangular,
)
from .ops.solve import slogdet as _slogdet
from .return_types import result

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve",
           "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
           "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander",
           "vecdot", "vector_norm"]

_INF = float("inf")


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The ``ord``-norm of ``x`` as a vector over ``dim`` (all elements by default): sum(|x|^ord)^(1/ord),
    max |x| (inf), min |x| (-inf), the count of non-zeros (0)."""
    from .ops.elementwise import promoted
    from .ops.reduction import check_norm_dtype, norm

    if not isinstance(ord, (int, float)) or isinstance(ord, bool):
        raise RuntimeError(f"linalg.vector_norm: Expected a numeric ord, but got {ord!r}")
    dtype = check_norm_dtype(x, dtype, "linalg.vector_norm")
    if dtype is not None:
        x = promoted(x, dtype)
    if isinstance(dim, int):
        dim = (dim,)
    return norm(x, ord, dim, keepdim)


def _matrix_dims(A: Tensor, dim, name: str) -> tuple[int, int]:
    nd = A._data.ndim
    if nd < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    d = tuple(int(i) + nd if int(i) < 0 else int(i) for i in dim)
    if len(d) != 2 or d[0] == d[1]:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})" if len(d) == 2 else
                           f"{name}: dim must be a 2-tuple. Got {' '.join(str(i) for i in dim)}")
    return d


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """A matrix norm over the two dims ``dim``: "fro", "nuc" (sum of singular values), 2 / -2 (largest /
    smallest singular value), 1 / -1 (max / min column sum of |A|), inf / -inf (max / min row sum)."""
    from .ops.elementwise import cast
    from .ops.movement import movedim
    from .ops.reduction import amax, amin, check_norm_dtype, sum
    from .ops.shape import unsqueeze
    from .ops.unary import abs

    dtype = check_norm_dtype(A, dtype, "linalg.matrix_norm")
    if dtype is not None:
        A = cast(A, dtype)
    if ord not in ("fro", "nuc", 2, -2, 1, -1, _INF, -_INF):  # (PyTorch checks the order before the dims)
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    d0, d1 = _matrix_dims(A, dim, "linalg.matrix_norm")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    check_matrix(A, "linalg.matrix_norm", square=False, low_precision=False)
    if ord in ("nuc", 2, -2):
        refuse_low_precision(A, "linalg.matrix_norm")  # (LAPACK's singular values; the other norms are sums)
        s = svdvals(movedim(A, (d0, d1), (-2, -1)))
        if ord == 2 and s._data.shape[-1] == 0:
            out = _empty_max(s, -1, False)
        else:
            out = sum(s, -1) if ord == "nuc" else (amax(s, -1) if ord == 2 else amin(s, -1))
        if keepdim:
            for d in sorted((d0, d1)):
                out = unsqueeze(out, d)
        return out
    summed, other = (d0, d1) if ord in (1, -1) else (d1, d0)  # 1: column sums (over rows); inf: row sums
    sums = sum(abs(A), summed, keepdim=keepdim)
    other = other if keepdim or other < summed else other - 1
    if ord > 0 and sums._data.shape[other] == 0:
        return _empty_max(sums, other, keepdim)
    return (amax if ord > 0 else amin)(sums, other, keepdim=keepdim)  # (AmaxBackward0 last)


def _empty_max(sums: Tensor, dim: int, keepdim: bool) -> Tensor:
    """A positive order's matrix norm where the sums (singular values) it takes the largest of are none: zeros, as
    PyTorch's (a tensor without history: no gradient flows from it)."""
    shape = list(sums._data.shape)
    shape[dim] = 1
    zeros = xp.zeros(shape, dtype=sums._data.dtype)
    return Tensor._make(zeros if keepdim else zeros.squeeze(dim))


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """A vector norm (1-D input, an int ``dim``, or ``ord=None`` with ``dim=None``: all elements flattened)
    or a matrix norm (2-D input with ``ord`` given, or a 2-tuple ``dim``)."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and A._data.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if ord is not None and dim is None and A._data.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A._data.ndim}D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def inv_ex(A: Tensor, *, check_errors: bool = False):
    """``(inverse, info)``: info is 0, or non-zero where the matrix is singular (the inverse is then not valid)."""
    try:
        return result("linalg_inv_ex", ("inverse", "info"),
                      (inv(A), Tensor._make(xp.zeros(A._data.shape[:-2], dtype=xp.int32))))
    except LinAlgError:
        if check_errors:
            raise
        from .ops.decompositions import lu_arrays

        lu_, _ = lu_arrays(A._data)
        zero = xp.diagonal(lu_, 0, -2, -1) == 0
        info = xp.where(zero.any(-1), xp.argmax(zero, -1) + 1, 0).astype(xp.int32)
        from .autograd.graph import shown_as

        # (the pseudo-inverse stands in for the invalid inverse; its node reads as PyTorch's)
        return result("linalg_inv_ex", ("inverse", "info"), (shown_as(pinv(A), "LinalgInvExBackward0"),
                                                             Tensor._make(info)))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False):
    """``(result, info)``, as ``solve`` with an info of 0 (a singular A raises, as with ``check_errors=True``)."""
    return result("linalg_solve_ex", ("result", "info"),
                  (solve(A, B, left=left), Tensor._make(xp.zeros(A._data.shape[:-2], dtype=xp.int32))))


@empty_in_float32
def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """X with ``A X = B`` from A's ``lu_factor`` (``X A = B`` when not ``left``; A^H when ``adjoint``)."""
    from ._dtype import SCALAR_TYPE_NAMES
    from .ops.decompositions import lu_unpack

    if LU.dtype != B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{SCALAR_TYPE_NAMES[LU.dtype.name]} and B of type {SCALAR_TYPE_NAMES[B.dtype.name]} "
                           "instead")
    refuse_low_precision(LU, "linalg.lu_solve")
    P, L, U = lu_unpack(LU, pivots)
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return lu_solve(LU, pivots, B.mH, adjoint=not adjoint).mH
    if adjoint:  # A^H X = B with A = P L U:  U^H L^H P^T X = B (P real)
        y = solve_triangular(L.mH, solve_triangular(U.mH, B, upper=False), upper=True, unitriangular=True)
        return matmul(P, y)
    return solve_triangular(U, solve_triangular(L, matmul(P.mT, B), upper=False, unitriangular=True), upper=True)


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` of min ||A X - B||, as PyTorch's default CPU driver
    ("gelsy"): residuals and singular_values are empty, rank is computed. The solution is pinv(A) @ B, its node
    named as PyTorch's one node (``LinalgLstsqBackward0``), which saves A, B and the solution whichever needs a
    gradient: changing any of them in place before backward is its error."""
    from ._dtype import SCALAR_TYPE_NAMES
    from .autograd.graph import shown_as, version_checked
    from .ops.shape import reshape_owned, unsqueeze

    if isinstance(A, Tensor) and A._data.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if isinstance(A, Tensor) and isinstance(B, Tensor) and A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {SCALAR_TYPE_NAMES[A.dtype.name]} and other's dtype "
                           f"{SCALAR_TYPE_NAMES[B.dtype.name]}")
    check_matrix(A, "linalg.lstsq", square=False)
    if not 0 <= A._data.ndim - B._data.ndim <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1 (got {A._data.ndim} and {B._data.ndim})")
    vector = B._data.ndim == A._data.ndim - 1
    rows = B._data.shape[-1] if vector else B._data.shape[-2]
    if rows != A._data.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size({-1 if vector else -2}). "
                           f"Got {A._data.shape[-2]} and {rows}")
    rtol = rcond if rcond is not None else max(A._data.shape[-2:]) * float(xp.finfo(A._data.dtype).eps)
    pinv_a = pinv(A, rtol=rtol)
    if vector and B._data.ndim > 1:  # a stack of vectors: as columns, the solution a fresh tensor (no view)
        x = matmul(pinv_a, unsqueeze(B, -1))
        x = reshape_owned(x, *x._data.shape[:-1])
    else:
        x = matmul(pinv_a, B)
    x = version_checked(shown_as(x, "LinalgLstsqBackward0"), A, B)
    if x.grad_fn is not None:
        x.grad_fn.check_versions_of(x)
    empty = Tensor._make(xp.zeros((0,), dtype=A._data.dtype))
    rank = matrix_rank(A, rtol=rtol)
    return result("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"), (x, empty, rank, empty))


def slogdet(A: Tensor):
    """(sign, log|det|) of each square matrix, as ``torch.slogdet`` (named ``return_types.linalg_slogdet`` here)."""
    return result("linalg_slogdet", ("sign", "logabsdet"), _slogdet(A))


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """The number of singular values above ``max(atol, rtol * largest)`` (rtol as in ``pinv``). ``tol`` is
    PyTorch's deprecated NumPy-compatible spelling: ``atol=tol, rtol=0``."""
    if isinstance(A, Tensor) and A._data.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    check_matrix(A, "linalg.matrix_rank", square=False)
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg.matrix_rank() takes tol or atol/rtol, not both")
        atol, rtol = tol, 0.0
    a = A._data
    s = xp.abs(xp.linalg.eigvalsh(a)) if hermitian else xp.linalg.svd(a, compute_uv=False)
    if rtol is None:
        rtol = max(a.shape[-2:]) * float(xp.finfo(a.dtype).eps) if atol in (None, 0) else 0.0
    tol = xp.maximum(0.0 if atol is None else float(atol), float(rtol) * s.max(-1, initial=0))
    return Tensor._make((s > tol[..., None]).sum(-1).astype(xp.int64))


@torch_named("LinalgHouseholderProductBackward0")
class _NoReflectors(Node):
    """The product of no reflectors, the first n columns of the identity (``Q``), recorded as PyTorch records it
    when A or tau requires grad: constant in both, its backward gives neither a gradient (None, as PyTorch's)."""

    def forward(self, A, tau, *, Q):
        return Q

    def backward(self, g):
        return None, None


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of the product H_1 ... H_k of Householder reflectors H_i = I - tau_i v_i v_i^H, where
    v_i is column i of A below its diagonal with a 1 on it (LAPACK's orgqr/ungqr; ``geqrf``'s output gives Q).
    Composed of ember ops, so its gradients (to the columns' lower parts and to tau) are autograd's of the same
    product."""
    from . import eye, where
    from .ops.elementwise import require_tensor

    name = "torch.linalg.householder_product"
    require_tensor("linalg_householder_product", tau, argument="tau")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if n < tau.shape[-1] if tau.ndim else False:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.ndim} and input.ndim is equal to {A.ndim}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{name}: tau dtype {_dtype.SCALAR_TYPE_NAMES[tau.dtype.name]} does not match input dtype "
                           f"{_dtype.SCALAR_TYPE_NAMES[A.dtype.name]}")
    if not (A.is_floating_point() or A.is_complex()) or A.dtype in (_dtype.float16, _dtype.bfloat16):
        raise _dtype.not_implemented_for("orgqr_cpu", A.dtype)
    rows = Tensor._make(xp.arange(m)[:, None])
    Q = eye(m, n, dtype=A.dtype).expand(A.shape)
    if tau.shape[-1] == 0:
        return _NoReflectors.apply(A, tau, Q=Q.contiguous()._data)
    for i in reversed(range(tau.shape[-1])):  # Q = H_i Q, from the last reflector to the first
        v = where(rows < i, 0, where(rows == i, 1, A[..., :, i:i + 1]))  # (..., m, 1)
        Q = Q - tau[..., i, None, None] * (v @ (v.mH @ Q))
    return Q


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of A read as a linear map from its last dims to its first ``ind`` ones (their element counts
    equal): ``tensordot(tensorinv(A, ind), A, ind)`` is the identity; the result has shape
    ``A.shape[ind:] + A.shape[:ind]``."""
    import math

    from .ops.solve import Inv

    if ind.__class__ is not int:
        raise TypeError(f"linalg_tensorinv(): argument 'ind' must be int, not {type(ind).__name__}")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    rows, cols = math.prod(shape[ind:]), math.prod(shape[:ind])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
                           f"but got {rows} != {cols}")
    square = A.reshape(rows, rows)
    check_matrix(square, "linalg.inv")
    return Inv.apply(square, name="inv").reshape(shape[ind:] + shape[:ind])  # ("inv": PyTorch's singular error)


def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """X with ``tensordot(A, X, X.ndim) == B``: A read as a linear map from its last dims (X's shape) to its
    first ``B.ndim`` ones; ``dims`` (A's dims moved to the end first) says which of A's dims X's are."""
    import math

    if dims is not None:
        if not isinstance(dims, (list, tuple)):
            raise TypeError(f"linalg_tensorsolve(): argument 'dims' must be tuple of ints, not {type(dims).__name__}")
        A = A.movedim(list(dims), list(range(A.ndim - len(dims), A.ndim)))
    result_shape = tuple(A.shape[B.ndim:])
    rows, cols = math.prod(result_shape), math.prod(B.shape)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {rows} != {cols}")
    return solve(A.reshape(rows, rows), B.flatten()).reshape(result_shape)


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (the first may be a row vector, the last a column vector)."""
    from ._dtype import CPP_TYPE_NAMES
    from .autograd.graph import shown_as
    from .ops.shape import squeeze, tensor_list, unsqueeze

    tensors = tensor_list(tensors, "linalg_multi_dot")
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0]._data.ndim == 1, tensors[-1]._data.ndim == 1
    chain = [unsqueeze(tensors[0], 0) if first else tensors[0], *tensors[1:-1],
             unsqueeze(tensors[-1], -1) if last else tensors[-1]]
    for i, t in enumerate(chain):
        if t._data.ndim != 2:
            which = "the first tensor" if i == 0 else "the last tensor" if i == len(chain) - 1 else f"tensor {i}"
            allowed = "2D" if 0 < i < len(chain) - 1 else "1D or 2D"
            raise RuntimeError(f"multi_dot(): {which} must be {allowed} but got {tensors[i]._data.ndim}D")
        if t.dtype != chain[0].dtype:  # (PyTorch's matrix products do not promote)
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{CPP_TYPE_NAMES[chain[0].dtype.name]} and tensor {i} {CPP_TYPE_NAMES[t.dtype.name]}")
    for i in range(len(chain) - 1):  # (PyTorch's check, naming the tensors as given, before any product)
        if chain[i]._data.shape[1] != chain[i + 1]._data.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                               f"{list(tensors[i + 1].shape)} cannot be multiplied")
    out = chain[0]
    for t in chain[1:]:
        out = matmul(out, t)
    if first:
        out = squeeze(out, 0)
    # PyTorch's composite ends with a view of the product to the result's shape
    return shown_as(squeeze(out, -1) if last else out, "ViewBackward0")


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """sum(conj(x) * y) over ``dim`` (the operands broadcast; of one dtype, as PyTorch requires)."""
    from ._dtype import SCALAR_TYPE_NAMES
    from .ops.reduction import sum

    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_TYPE_NAMES[x.dtype.name]}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{SCALAR_TYPE_NAMES[x.dtype.name]} and y of type {SCALAR_TYPE_NAMES[y.dtype.name]} instead")
    return sum((x.conj() if x.is_complex() else x) * y, dim)


def matrix_power(A: Tensor, n: int) -> Tensor:
    """A to the integer power ``n`` (repeated squaring; a negative n inverts first; n = 0 is the identity, n = 1 a
    copy). Products alone take integer and bool matrices, as PyTorch's (a negative n refuses them in ``inv``)."""
    from ._creation import eye
    from ._memory_format import contiguous_format
    from .ops.shape import expand

    check_matrix(A, "linalg.matrix_power", integer_ok=True)
    n = int(n)
    if n == 0:  # (PyTorch's: A's contiguous clone, the identity copied in: in A's graph, its gradient zeros)
        return A.clone(memory_format=contiguous_format).copy_(expand(eye(A._data.shape[-1], dtype=A.dtype),
                                                                     A._data.shape))
    base, out = (inv(A) if n < 0 else A), None
    n = abs(n)
    while n:
        if n & 1:
            out = base if out is None else matmul(out, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    # (A ** 1: PyTorch's result is a contiguous copy, CloneBackward0)
    return out.clone(memory_format=contiguous_format) if out is A else out


@empty_in_float32
def cond(A: Tensor, p=None) -> Tensor:
    """The condition number of each matrix in the norm ``p``: the ratio of the extreme singular values for
    None / 2 / -2, the sum of the singular values times that of their reciprocals for "nuc", else
    ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` (square A; inf for a singular one).

    As PyTorch's, the latter fills the inverse of a singular matrix with inf in place and turns the product's NaN
    (0 * inf) into inf in place: its grad_fn is NanToNumBackward0, and backward through it raises PyTorch's
    RuntimeError (the inverse, saved for inv's gradient, was modified by an in-place operation)."""
    if isinstance(A, Tensor) and A._data.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p in (None, 2, -2):
        check_matrix(A, "linalg.cond", square=False)
        s = svdvals(A)
        if s._data.shape[-1] == 0:  # an empty matrix: PyTorch's condition number is 0
            return Tensor._make(xp.zeros(s._data.shape[:-1], s._data.dtype))
        big, small = s[..., :1], s[..., -1:]  # (PyTorch's grad_fn: the quotient's SqueezeBackward1)
        return (small / big if p == -2 else big / small).squeeze(-1)
    check_matrix(A, "linalg.cond", low_precision=p == "nuc")  # (the others' refusal is inv's)
    if p == "nuc":  # (from the singular values, as PyTorch's: no inverse; 0 * inf is NaN for a singular matrix)
        s = svdvals(A)
        return s.sum(-1) * s.reciprocal().sum(-1)
    inverse, info = inv_ex(A)
    inverse.masked_fill_((info > 0)[..., None, None], math.inf)
    return (matrix_norm(A, p) * matrix_norm(inverse, p)).nan_to_num_(math.inf, math.inf, -math.inf)


def vander(x: Tensor, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of the last dimension of ``x``: columns x^0, x^1, ..., x^(N-1) (N > 1, by default
    the length of x)."""
    from .ops.shape import unsqueeze

    if x._data.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension.")
    if x.dtype in (_dtype.float16, _dtype.bfloat16, _dtype.bool_):  # (PyTorch's kernel has no such version)
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{_dtype.SCALAR_TYPE_NAMES[x.dtype.name]}")
    n = x._data.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = Tensor._make(xp.arange(n, dtype=x._data.dtype if x.is_floating_point() else xp.int64))
    return unsqueeze(x, -1) ** powers


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The ``offset`` diagonal of the last two dims (``torch.diagonal`` with other defaults)."""
    from .ops.matrix import diagonal as _diagonal

    return _diagonal(A, offset, dim1, dim2)


from ._arg_aliases import accept_torch_names as _accept_torch_names  # noqa: E402
from ._arg_aliases import name_as_native_ops as _name_as_native_ops  # noqa: E402
from ._out import with_out as _with_out  # noqa: E402

# out= as PyTorch's linalg_det and linalg_multi_dot take it (out's dtype exactly the result's, resized)
det = _with_out("linalg_det", det)
multi_dot = _with_out("linalg_multi_dot", multi_dot)
_accept_torch_names(globals(), "linalg.")  # PyTorch's keyword names: linalg.cholesky(input=A)
_name_as_native_ops(globals(), "linalg_", __all__)  # linalg.inv.__name__: "linalg_inv"

__getattr__ = module_getattr(__name__)

"""Inverses and linear solves: inv, solve, solve_triangular, det/slogdet, pinv, cross, matrix_exp.

Every op takes a batch of matrices (leading batch dimensions, NumPy's broadcasting
between operands) and has a hand-written backward; ``X^-T`` below means the inverse
of the transpose. ``ember.linalg`` is the public namespace; these are its kernels.
"""

from __future__ import annotations

import functools

from .. import _dtype
from .._backend import xp
from .._size import c_type_name
from .._tensor import Tensor
from ..autograd.graph import MultiOutputNode, Node, torch_named
from ..autograd.recorded import is_recorded, value_of
from ..autograd.saved_attributes import saved_tensor
from ..return_types import rebuilt, result


class LinAlgError(RuntimeError):
    """A matrix that the operation cannot handle (singular, not positive-definite), as ``torch.linalg.LinAlgError``;
    a RuntimeError, as in PyTorch."""

    __module__ = "ember.linalg"


# PyTorch's ScalarType names, which its messages use
_SCALAR_TYPE = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def mT(a):
    return xp.swapaxes(a, -1, -2)


def check_matrix(A: Tensor, name: str, square: bool = True, arg: str = "A", integer_ok: bool = False,
                 low_precision: bool = True) -> None:
    """PyTorch's errors for a non-floating, non-complex input (unless ``integer_ok``: an op of products alone, as
    ``matrix_power``), fewer than 2 dims, (``square``) non-square matrices, or (``low_precision``: the caller
    checks later, or not at all) a float16 / bfloat16 input to an op that LAPACK computes."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {c_type_name(A)}")
    float_double = name in _FLOAT_DOUBLE_ONLY
    if not A.is_floating_point() and not A.is_complex() and not integer_ok and not float_double:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_SCALAR_TYPE.get(A.dtype.name, A.dtype.name)}")
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if square and m != n:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are {m} by {n} matrices")
    if float_double and A.dtype not in (_dtype.float32, _dtype.float64) and not A.is_complex():
        raise RuntimeError("This function doesn't handle types other than float and double")
    if low_precision:
        refuse_low_precision(A, name)


LOW_PRECISION = (_dtype.float16, _dtype.bfloat16)

# How PyTorch's CPU op of each name refuses float16 and bfloat16, which LAPACK lacks: a check of its own (None:
# "Low precision dtypes not supported", an empty input included), or its kernel's dispatch (the kernel's name:
# NotImplementedError; with True where an empty input never reaches the kernel and so gets its empty result).
# (matrix_exp, of products alone, computes them; lstsq and matrix_rank refuse all but float and double.)
_LOW_PRECISION = {
    "linalg.inv": None, "linalg.slogdet": None, "logdet": None, "linalg.matrix_norm": None,
    "linalg.det": ("lu_cpu", True), "linalg.solve": ("lu_cpu", True), "linalg.lu": ("lu_cpu", True),
    "linalg.lu_factor_ex": ("lu_cpu", True), "linalg.lu_solve": ("linalg.lu_solve_cpu", True),
    "linalg.cholesky": ("cholesky_cpu", True), "linalg.cholesky_ex": ("cholesky_cpu", True),
    "linalg.svd": ("linalg_svd_cpu", True), "linalg.svdvals": ("linalg_svd_cpu", True),
    "linalg.cond": ("linalg_svd_cpu", True), "linalg.eigh": ("linalg_eigh_cpu", True),
    "linalg.qr": ("geqrf_cpu", False), "linalg.solve_triangular": ("triangular_solve_cpu", False),
    "triangular_solve": ("triangular_solve_cpu", False), "cholesky_solve": ("cholesky_solve_cpu", False),
    "cholesky_inverse": ("cholesky_inverse_out_cpu", False),
}
_FLOAT_DOUBLE_ONLY = ("linalg.lstsq", "linalg.matrix_rank")


def refuse_low_precision(A: Tensor, name: str) -> None:
    """PyTorch's error for a float16 / bfloat16 ``A`` given to the op ``name`` (see ``_LOW_PRECISION``); none
    for an empty ``A`` where the kernel is never reached (``empty_in_float32`` then computes it)."""
    if A.dtype not in LOW_PRECISION or name not in _LOW_PRECISION:
        return
    refusal = _LOW_PRECISION[name]
    if refusal is None:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_dtype.SCALAR_TYPE_NAMES[A.dtype.name]}")
    kernel, empty_ok = refusal
    if not (empty_ok and A._data.size == 0):
        raise _dtype.not_implemented_for(kernel, A.dtype)


def empty_in_float32(op):
    """``op`` (an op whose PyTorch kernel an empty input never reaches) for an empty float16 / bfloat16 input:
    computed in float32 (NumPy's LAPACK has neither dtype), its floating results cast back to the input's dtype,
    as PyTorch's are."""

    @functools.wraps(op)
    def run(A, *args, **kwargs):  # (A: the matrix, its first argument, that gives the dtype)
        low = A.dtype if isinstance(A, Tensor) else None
        if low not in LOW_PRECISION or any(isinstance(a, Tensor) and (
                a._data.size or a.is_floating_point() and a.dtype != low) for a in (A, *args)):
            return op(A, *args, **kwargs)
        args = (A, *args)
        out = op(*(a.float() if isinstance(a, Tensor) and a.dtype == low else a for a in args), **kwargs)

        def back(t):
            return t.to(low) if isinstance(t, Tensor) and t.is_floating_point() else t

        return rebuilt(type(out), map(back, out)) if isinstance(out, tuple) else back(out)

    return run


def _batch_prefix(shape, flat_index: int) -> str:
    return f"(Batch element {flat_index}): " if len(shape) > 2 else ""


def singular_error(name: str, a) -> LinAlgError:
    """PyTorch's error for a singular ``a``: which batch element, and which diagonal element of U is zero."""
    from .decompositions import lu_arrays

    lu, _ = lu_arrays(a.reshape((-1,) + a.shape[-2:]))
    zero = xp.diagonal(lu, 0, -2, -1) == 0
    b = int(xp.argmax(zero.any(-1)))
    i = int(xp.argmax(zero[b])) + 1
    if name == "linalg.solve":
        return LinAlgError(f"torch.linalg.solve: {_batch_prefix(a.shape, b)}The solver failed because the input "
                           "matrix is singular.")
    return LinAlgError(f"{name}: {_batch_prefix(a.shape, b)}The diagonal element {i} is zero, the inversion could "
                       "not be completed because the input matrix is singular.")


def _inv(a, name: str):
    try:
        return xp.linalg.inv(a)
    except xp.linalg.LinAlgError:
        raise singular_error(name, a) from None


def _solve(a, b, name: str):
    try:
        return xp.linalg.solve(a, b)
    except xp.linalg.LinAlgError:
        raise singular_error(name, a) from None


def mH(a):
    """The conjugate transpose of each matrix (the transpose of a real one)."""
    return xp.conj(mT(a)) if a.dtype.kind == "c" else mT(a)


@torch_named("LinalgInvExBackward0")
class Inv(Node):
    def forward(self, a, name):
        out = _inv(a, name)
        self.saved = (out,)
        return out

    def backward(self, g):  # d(A^-1) = -A^-1 dA A^-1, so dL/dA = -A^-H G A^-H (A^-T for a real A)
        y = mH(self.saved[0])
        return (-(y @ g @ y),)


def inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix (real or complex); a singular one raises ``LinAlgError``."""
    check_matrix(A, "linalg.inv")
    return Inv.apply(A, name="linalg.inv")


@torch_named("LinalgSolveExBackward0")
class Solve(Node):
    """X with ``A X = B`` (``X A = B`` when not ``left``), B and X batches of vectors when ``vector``: one node for
    every form, as PyTorch's."""

    def forward(self, a, b, vector, left, name):
        bm = b[..., None] if vector else b
        x = _solve(a, bm, name) if left else mT(_solve(mT(a), mT(bm), name))
        out = x[..., 0] if vector else x
        self.saved = (a, out)
        self.form = vector, left
        return out

    def backward(self, g):
        a, x = self.saved
        vector, left = self.form
        if vector:
            g, x = g[..., None], x[..., None]
        if left:  # X = A^-1 B: dL/dB = A^-H G, dL/dA = -(dL/dB) X^H (transposes for real ones)
            gb = xp.linalg.solve(mH(a), g)
            ga = -(gb @ mH(x))
        else:  # X = B A^-1: dL/dB = G A^-H, dL/dA = -X^H (dL/dB)
            gb = mH(xp.linalg.solve(a, mH(g)))
            ga = -(mH(x) @ gb)
        return ga, (gb[..., 0] if vector else gb)


def _vector_rhs(A: Tensor, B: Tensor) -> bool:
    """B is a (batch of) vector(s) when 1-D or when its shape is A's without the last dimension, as PyTorch reads it."""
    return B._data.ndim == 1 or (B._data.ndim == A._data.ndim - 1 and B._data.shape == A._data.shape[:-1])


@empty_in_float32
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with ``A X = B`` (``X A = B`` when ``left=False``); B may be a batch of vectors (a column each, also with
    ``left=False``, as PyTorch reads them). Real or complex."""
    check_matrix(A, "linalg.solve", low_precision=False)
    vector = _vector_rhs(A, B)
    n = A._data.shape[-1]
    rows, cols = (B._data.shape[-1], 1) if vector else B._data.shape[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    if vector and not left:  # (shapes that pass: 1 x 1 matrices)
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtype.SCALAR_TYPE_NAMES[A.dtype.name]} and B of type "
                           f"{_dtype.SCALAR_TYPE_NAMES[B.dtype.name]} instead")
    refuse_low_precision(A, "linalg.solve")  # (after the dtypes are compared, as PyTorch's kernel)
    return Solve.apply(A, B, vector=vector, left=bool(left), name="linalg.solve")


def _triangle(a, upper: bool, unitriangular: bool):
    """The triangle of ``a`` that is read (its diagonal ones when ``unitriangular``), as a new array."""
    if not unitriangular:
        return xp.triu(a) if upper else xp.tril(a)
    strict = xp.triu(a, 1) if upper else xp.tril(a, -1)
    return strict + xp.eye(a.shape[-1], dtype=a.dtype)


@torch_named("LinalgSolveTriangularBackward0")
class SolveTriangular(Node):
    rerun_for_higher_order = True  # backward reads the triangle of A (recomputed on recorded inputs)

    def forward(self, a, b, upper, left, unitriangular):
        t = _triangle(a, upper, unitriangular)
        x = _solve(t, b, "linalg.solve_triangular") if left else mT(_solve(mT(t), mT(b), "linalg.solve_triangular"))
        self.saved = (t, x)
        self.flags = upper, left, unitriangular
        return x

    def backward(self, g):
        t, x = self.saved
        upper, left, unit = self.flags
        if left:  # T X = B: dL/dB = T^-H G, dL/dT = -(dL/dB) X^H
            gb = xp.linalg.solve(mH(t), g)
            ga = -(gb @ mH(x))
        else:  # X T = B: dL/dB = G T^-H, dL/dT = -X^H (dL/dB)
            gb = mH(xp.linalg.solve(t, mH(g)))
            ga = -(mH(x) @ gb)
        # only the triangle (off its unit diagonal) was read
        ga = (xp.triu(ga, int(unit)) if upper else xp.tril(ga, -int(unit)))
        return ga, gb


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
    """X with ``A X = B`` (``X A = B`` when ``left=False``), reading only A's upper or lower triangle
    (its diagonal taken as ones when ``unitriangular``)."""
    check_matrix(A, "linalg.solve_triangular", low_precision=False)
    check_matrix(B, "linalg.solve_triangular", square=False, arg="B", low_precision=False)
    refuse_low_precision(A, "linalg.solve_triangular")  # (A's dtype: a float32 A takes a float16 B)
    promoted = _dtype.promote_types(A.dtype, B.dtype)  # (PyTorch's kernel runs in the operands' common dtype)
    A, B = (t if t.dtype == promoted else t.to(promoted) for t in (A, B))
    n = A._data.shape[-1]
    k = B._data.shape[-2] if left else B._data.shape[-1]
    if k != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {'x'.join(map(str, B.shape[-2:]))})")
    return SolveTriangular.apply(A, B, upper=bool(upper), left=bool(left), unitriangular=bool(unitriangular))


def _adjugate_h(a):
    """The conjugate of each matrix's cofactor matrix (its adjugate's conjugate transpose; for a real matrix the
    transposed adjugate), through its SVD, as PyTorch's det gradient for a (nearly) singular matrix computes it:
    well defined where det(A) A^-H is not."""
    u, s, vh = xp.linalg.svd(a)
    n = s.shape[-1]
    ones = xp.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], -1), -1)  # prod_{j<i} s_j
    after = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(s, -1)[..., :-1]], -1), -1), -1)  # prod_{j>i} s_j
    others = before * after if n else s
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    if a.dtype.kind == "c":
        sign = xp.conj(sign)
    return sign[..., None, None] * (u * others[..., None, :]) @ vh


@torch_named("LinalgDetBackward0")
class Det(Node):
    def forward(self, a):
        out = xp.linalg.det(a)
        self.saved = (a, out)
        return out

    def backward(self, g):
        # d det(A) / dA is the cofactor matrix; PyTorch's gradient is its conjugate times g: g conj(det) A^-H, or,
        # where |det| < 100 eps, the SVD form of the cofactors (well defined and differentiable there). (PyTorch's
        # first-order gradient solves with A's LU instead, zero pivots nudged to eps: exactly 0 where det is
        # exactly 0, which rounding decides differently in NumPy's LAPACK and PyTorch's; ember gives the cofactors.)
        a, det = self.saved
        tiny = xp.abs(value_of(det)) < 100 * xp.finfo(value_of(det).dtype).eps
        if tiny.any():  # (the SVD form for the whole batch: equal to the other where both are defined)
            return (g[..., None, None] * _adjugate_h(a),)
        gd = g * xp.conj(det) if det.dtype.kind == "c" else g * det
        return (gd[..., None, None] * mH(xp.linalg.inv(a)),)


@empty_in_float32
def det(A: Tensor) -> Tensor:
    """The determinant of each square matrix (real or complex)."""
    check_matrix(A, "linalg.det")
    return Det.apply(A)


def _lu_solve_adjoint(a, d):
    """``A^-H D`` as PyTorch's first-order slogdet gradient computes it: from the LU (partial pivoting) of ``A^H``,
    the row swaps, then the unit-lower and upper triangular substitutions in LAPACK's reference order (getrs, trsm
    without its zero test). A singular A (an exact zero pivot) gives PyTorch's infinities and NaNs, not an error."""
    from .decompositions import lu_arrays

    lu, piv = lu_arrays(mH(a))
    n = a.shape[-1]
    lu = lu.reshape((-1, n, n))
    x = xp.broadcast_to(d, a.shape).astype(lu.dtype).reshape(lu.shape)
    rows = xp.arange(lu.shape[0])
    swaps = piv.reshape(-1, n) - 1
    with xp.errstate(all="ignore"):
        for j in range(n):
            p = swaps[:, j]
            top = x[:, j].copy()
            x[:, j] = x[rows, p]
            x[rows, p] = top
        for k in range(n):
            x[:, k + 1:] -= lu[:, k + 1:, k, None] * x[:, k, None, :]
        for k in range(n - 1, -1, -1):
            x[:, k] /= lu[:, k, k, None]
            x[:, :k] -= lu[:, :k, k, None] * x[:, k, None, :]
    return x.reshape(a.shape)


@torch_named("LinalgSlogdetBackward0")
class SlogDet(MultiOutputNode):
    def forward(self, a):
        sign, logabs = xp.linalg.slogdet(a)
        self.saved = (a, sign)
        return sign, logabs

    def backward(self, gsign, glog):
        # d log|det A| / dA = A^-H; a real sign is piecewise constant, a complex one turns with the determinant's
        # angle: its gradient g_s adds i Im(conj(sign) g_s) A^-H, as PyTorch's
        a, sign = self.saved
        complex_input = a.dtype.kind == "c"
        if glog is None and (gsign is None or not complex_input):
            return (None,)
        g = xp.zeros(sign.shape, a.real.dtype) if glog is None else glog
        if complex_input and gsign is not None:
            g = g + 1j * (xp.conj(sign) * gsign).imag
        if not is_recorded(a) and (value_of(sign) == 0).any():  # singular: PyTorch's LU solve, infinities and NaNs
            eye = xp.eye(a.shape[-1], dtype=a.dtype)
            return (_lu_solve_adjoint(a, g[..., None, None] * eye),)
        return (g[..., None, None] * mH(xp.linalg.inv(a)),)


def slogdet(A: Tensor):
    """(sign, log|det|) of each square matrix, as the named tuple ``(sign, logabsdet)``; a complex matrix's sign is
    complex (``det / |det|``). A singular matrix's is (0, -inf), its first-order gradient PyTorch's infinities and
    NaNs (its LU solve); under create_graph it raises ``LinAlgError``, as PyTorch's."""
    check_matrix(A, "linalg.slogdet")
    return result("slogdet", ("sign", "logabsdet"), SlogDet.apply(A))


def logdet(A: Tensor) -> Tensor:
    """log(det(A)): nan where the determinant is negative, -inf where it is zero. As PyTorch's, a real ``A``'s is
    ``where(sign == -1, nan, log|det|)`` (its node WhereBackward0; a negative determinant's gradient is zero), a
    complex one's ``log(sign) + log|det|``."""
    from .indexing import where
    from .unary import log

    check_matrix(A, "logdet")
    sign, logabs = SlogDet.apply(A)
    if A.is_complex():
        return log(sign) + logabs
    return where(Tensor._make(sign._data == -1), float("nan"), logabs)


@torch_named("LinalgPinvBackward0")
class Pinv(Node):
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_result, _raw_saved_result = saved_tensor(1)

    def forward(self, a, atol, rtol, hermitian):
        if hermitian:
            w, v = xp.linalg.eigh(a)
            s, u, vh = xp.abs(w), v * xp.sign(w)[..., None, :], mH(v)
        else:
            u, s, vh = xp.linalg.svd(a, full_matrices=False)
        smax = s.max(-1, keepdims=True, initial=0)
        keep = s > xp.maximum(atol, rtol * smax)
        inv_s = xp.where(keep, 1 / xp.where(keep, s, 1), 0)
        out = mH(vh) @ (inv_s[..., :, None] * mH(u))
        self.saved = (a, out)
        return out

    def backward(self, g):
        # d(A+) = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+   (constant rank), so
        # dL/dA = -X^H G X^H + (I - A X) G^H X X^H + X^H X G^H (I - X A)   with X = A+
        a, x = self.saved
        xt, gt = mH(x), mH(g)
        return (-(xt @ g @ xt) + (gt - a @ (x @ gt)) @ (x @ xt) + (xt @ x) @ (gt - (gt @ x) @ a),)


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse. Singular values at or below ``max(atol, rtol * largest)`` count as zero;
    rtol defaults to ``max(m, n) * eps`` of the dtype when atol is not given, else 0 (as PyTorch)."""
    if isinstance(A, Tensor) and (A.dtype not in (_dtype.float32, _dtype.float64) and not A.is_complex()
                                  or A._data.ndim < 2):
        raise RuntimeError(f"linalg.pinv({_dtype.SCALAR_TYPE_NAMES[A.dtype.name]}{{{list(A._data.shape)}}}): expected "
                           "a tensor with 2 or more dimensions of float, double, cfloat or cdouble types")
    check_matrix(A, "linalg.pinv", square=False)
    if rtol is None:
        rtol = max(A._data.shape[-2:]) * float(xp.finfo(A._data.dtype).eps) if atol in (None, 0) else 0.0
    return Pinv.apply(A, atol=0.0 if atol is None else float(atol), rtol=float(rtol), hermitian=bool(hermitian))


@torch_named("LinalgCrossBackward0")
class Cross(Node):
    def forward(self, a, b, axis):
        # each operand's gradient reads the other alone: PyTorch saves b only for a's gradient and a only for b's,
        # so the one whose partner needs none may change in place before backward
        na, nb = self.needs_input_grad or (True, True)  # (None: nothing recorded, or a formula's own call)
        self.saved, self.axis = (a if nb else None, b if na else None), axis
        return xp.cross(a, b, axis=axis)

    def backward(self, g):  # <G, a x b> = <b x G, a> = <G x a, b>
        a, b = self.saved
        na, nb = self.needs_input_grad or (True, True)
        return (xp.cross(b, g, axis=self.axis) if na else None), (xp.cross(g, a, axis=self.axis) if nb else None)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (the operands broadcast, but must have as many dimensions). As
    PyTorch's, the two must have one dtype (no type promotion), not bool."""
    if input._data.ndim != other._data.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    nd = input._data.ndim
    try:
        shape = xp.broadcast_shapes(input._data.shape, other._data.shape)
    except ValueError:
        raise RuntimeError(f"linalg.cross: the shapes {list(input.shape)} and {list(other.shape)} cannot be "
                           "broadcast") from None
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    if input._data.shape[d - nd] != 3 or other._data.shape[d - nd] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input._data.shape[d - nd]} and {other._data.shape[d - nd]}")
    if input.dtype == _dtype.bool_:  # (PyTorch's kernel: no bool version, and no promotion)
        raise _dtype.not_implemented_for("cross", input.dtype)
    if other.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.SCALAR_TYPE_NAMES[input.dtype.name]} but found "
                           f"{_dtype.SCALAR_TYPE_NAMES[other.dtype.name]}")
    from .shape import expand

    return Cross.apply(expand(input, shape), expand(other, shape), axis=d)


def _expm(a):
    """exp(A) by scaling and squaring: a degree-18 Taylor series of A / 2^s, squared s times."""
    norm = xp.abs(a).sum(-2).max(-1) if a.size else xp.zeros(a.shape[:-2])
    # (the number of squarings is a choice made from the values: not recorded under create_graph)
    s = int(max(0, xp.ceil(xp.log2(max(float(value_of(norm).max()), 1e-300))) + 1)) if norm.size else 0
    x = a / 2.0 ** s
    out = term = xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
    for k in range(1, 19):
        term = term @ x / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


@torch_named("LinalgMatrixExpBackward0")
class MatrixExp(Node):
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, a):
        self.saved = (a,)
        return _expm(a).astype(a.dtype, copy=False)  # (a bfloat16 one's scaling promotes to float32)

    def backward(self, g):
        # The Frechet derivative's adjoint: the top-right block of exp([[A^H, G], [0, A^H]]).
        at = mH(self.saved[0])
        n = at.shape[-1]
        block = xp.zeros_like(at, shape=at.shape[:-2] + (2 * n, 2 * n))
        block[..., :n, :n] = block[..., n:, n:] = at
        block[..., :n, n:] = g
        return (_expm(block)[..., :n, n:],)


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix."""
    check_matrix(A, "linalg.matrix_exp")
    return MatrixExp.apply(A)

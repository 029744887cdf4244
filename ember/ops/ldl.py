"""``torch.linalg.ldl_factor`` / ``ldl_factor_ex`` / ``ldl_solve``: the Bunch-Kaufman LDL^T (LDL^H with
``hermitian=True`` for complex input) factorization with LAPACK's pivoting (``sytf2`` / ``hetf2``, lower triangle),
and the solve with it (``sytrs`` / ``hetrs``).

LD holds L below its diagonal (unit diagonal implied) and the blocks of D on and next to it (1x1 or 2x2); its
strict upper triangle is zero. pivots (int32, 1-based) are LAPACK's: ``p > 0`` means rows and columns k and p were
interchanged and D has a 1x1 block at k; ``pivots[k] = pivots[k + 1] = -p`` a 2x2 block at k, k + 1 with rows and
columns k + 1 and p interchanged. The pivot choices are LAPACK's unblocked algorithm's (PyTorch's ``sytrf`` blocks
matrices past 64 rows, whose choices agree except where magnitudes tie to rounding). Only A's lower triangle is
read. As PyTorch's, neither op has a derivative (a NotImplemented node).

Pivot magnitudes of complex entries are |re| + |im|, as LAPACK's (``cabs1``).
"""

from __future__ import annotations

import math

from .. import _dtype
from .._backend import quiet, xp
from .._tensor import Tensor
from ..return_types import result
from .elementwise import without_derivative
from .solve import check_matrix

_ALPHA = (1 + math.sqrt(17)) / 8  # Bunch-Kaufman's threshold


def _magnitude(a):
    """LAPACK's pivot magnitude: |a|, |re| + |im| for complex a."""
    return xp.abs(a.real) + xp.abs(a.imag) if xp.iscomplexobj(a) else xp.abs(a)


def _factor_one(a, hermitian: bool):
    """(LD, pivots, info) of one matrix ``a`` (a copy, overwritten), LAPACK's ``sytf2``/``hetf2`` with uplo L."""
    n = a.shape[0]
    conj = xp.conj if hermitian else (lambda v: v)
    real_diagonal = hermitian and xp.iscomplexobj(a)
    pivots = xp.zeros(n, dtype=xp.int32)
    info = 0
    k = 0
    while k < n:
        step = 1
        diagonal = a[k, k].real if real_diagonal else a[k, k]
        absakk = abs(diagonal) if not xp.iscomplexobj(a) or real_diagonal else float(_magnitude(diagonal))
        if k + 1 < n:
            below = _magnitude(a[k + 1:, k])
            imax = k + 1 + int(xp.argmax(below))
            colmax = float(below[imax - k - 1])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or math.isnan(absakk):
            info = info or k + 1  # (a zero column: D's block is 0, the factorization goes on)
            pivot = k
            if real_diagonal:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                pivot = k
            else:
                row = _magnitude(a[imax, k:imax])
                rowmax = float(row.max())
                if imax + 1 < n:
                    rowmax = max(rowmax, float(_magnitude(a[imax + 1:, imax]).max()))
                other = a[imax, imax].real if real_diagonal else a[imax, imax]
                absother = abs(other) if not xp.iscomplexobj(a) or real_diagonal else float(_magnitude(other))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    pivot = k
                elif absother >= _ALPHA * rowmax:
                    pivot = imax
                else:
                    pivot, step = imax, 2
            kk = k + step - 1
            if pivot != kk:  # interchange rows and columns kk and pivot of the trailing lower triangle
                a[pivot + 1:, [kk, pivot]] = a[pivot + 1:, [pivot, kk]]
                between = a[kk + 1:pivot, kk].copy()
                a[kk + 1:pivot, kk] = conj(a[pivot, kk + 1:pivot])
                a[pivot, kk + 1:pivot] = conj(between)
                if real_diagonal:
                    a[pivot, kk] = xp.conj(a[pivot, kk])
                a[kk, kk], a[pivot, pivot] = a[pivot, pivot], a[kk, kk]
                if step == 2:
                    a[k + 1, k], a[pivot, k] = a[pivot, k], a[k + 1, k]
            if real_diagonal:
                a[k, k] = a[k, k].real
                if step == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if step == 1:
                if k + 1 < n:
                    x = a[k + 1:, k].copy()
                    d11 = 1 / (a[k, k].real if real_diagonal else a[k, k])
                    a[k + 1:, k + 1:] -= xp.outer(x, d11 * conj(x))  # A -= x d11 x^T (x^H): the Schur complement
                    a[k + 1:, k] = x * d11
            elif k + 2 < n:
                _eliminate_2x2(a, k, hermitian and real_diagonal)
        pivots[k:k + step] = pivot + 1 if step == 1 else -(pivot + 1)
        if real_diagonal:
            diag = xp.arange(k, n)
            a[diag, diag] = a[diag, diag].real
        k += step
    return xp.tril(a), pivots, info


def _eliminate_2x2(a, k: int, hermitian: bool) -> None:
    """The Schur complement of the 2x2 block D at k, k + 1, and L's columns k, k + 1 (LAPACK's formulas, which
    divide by D's off-diagonal entry first)."""
    ak, ak1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
    if hermitian:
        d = abs(a[k + 1, k])
        d11, d22 = a[k + 1, k + 1].real / d, a[k, k].real / d
        d21 = a[k + 1, k] / d
        d = 1 / (d11 * d22 - 1) / d
        wk = d * (d11 * ak - d21 * ak1)
        wkp1 = d * (d22 * ak1 - xp.conj(d21) * ak)
        a[k + 2:, k + 2:] -= xp.outer(ak, xp.conj(wk)) + xp.outer(ak1, xp.conj(wkp1))
    else:
        d21 = a[k + 1, k]
        d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
        d21 = 1 / (d11 * d22 - 1) / d21
        wk = d21 * (d11 * ak - ak1)
        wkp1 = d21 * (d22 * ak1 - ak)
        a[k + 2:, k + 2:] -= xp.outer(ak, wk) + xp.outer(ak1, wkp1)
    a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1


def _solve_one(ld, pivots, b, hermitian: bool):
    """X with A X = B for one factorization (LAPACK's ``sytrs``/``hetrs``, uplo L); ``b`` is overwritten."""
    n = ld.shape[0]
    conj = xp.conj if hermitian else (lambda v: v)
    k = 0
    while k < n:  # solve L D Y = P^T B
        p = int(pivots[k])
        if p > 0:
            b[[k, p - 1]] = b[[p - 1, k]]
            b[k + 1:] -= xp.outer(ld[k + 1:, k], b[k])
            b[k] = b[k] / (ld[k, k].real if hermitian else ld[k, k])
            k += 1
        else:
            b[[k + 1, -p - 1]] = b[[-p - 1, k + 1]]
            b[k + 2:] -= xp.outer(ld[k + 2:, k], b[k]) + xp.outer(ld[k + 2:, k + 1], b[k + 1])
            off = ld[k + 1, k]
            first = ld[k, k] / conj(off)
            second = ld[k + 1, k + 1] / off
            denominator = first * second - 1
            bk, bk1 = b[k] / conj(off), b[k + 1] / off
            b[k], b[k + 1] = (second * bk - bk1) / denominator, (first * bk1 - bk) / denominator
            k += 2
    k = n - 1
    while k >= 0:  # solve L^T (L^H) P^T X = Y
        p = int(pivots[k])
        b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
        if p > 0:
            b[[k, p - 1]] = b[[p - 1, k]]
            k -= 1
        else:
            b[k - 1] -= conj(ld[k + 1:, k - 1]) @ b[k + 1:]
            b[[k, -p - 1]] = b[[-p - 1, k]]
            k -= 2
    return b


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False):
    """``(LD, pivots, info)``: info is 0, or the 1-based index of the first zero block of D (a singular matrix;
    the factorization is completed). ``check_errors=True`` raises for a non-zero info."""
    name = "torch.linalg.ldl_factor_ex"
    check_matrix(A, name, low_precision=False)
    if A.dtype in (_dtype.float16, _dtype.bfloat16):
        raise _dtype.not_implemented_for("ldl_factor_kernel_cpu", A.dtype)
    data = A._data
    batch, n = data.shape[:-2], data.shape[-1]
    ld = xp.empty(data.shape, dtype=data.dtype)
    pivots = xp.empty(batch + (n,), dtype=xp.int32)
    info = xp.zeros(batch, dtype=xp.int32)
    with quiet():
        for index in xp.ndindex(*batch):
            ld[index], pivots[index], info[index] = _factor_one(data[index].copy(), hermitian and A.is_complex())
    if check_errors and (info > 0).any():
        _raise_singular("torch.linalg.ldl_factor_ex", info)
    LD = without_derivative(Tensor._make(ld), "linalg_ldl_factor_ex", A)
    return result("linalg_ldl_factor_ex", ("LD", "pivots", "info"),
                  (LD, Tensor._make(pivots), Tensor._make(info)))


def _raise_singular(name: str, info) -> None:
    """PyTorch's own check here is an internal assertion ("Unknown error code"): ember names the zero block."""
    flat = info.reshape(-1)
    first = int(xp.argmax(flat > 0))
    where = f"(Batch element {first}): " if info.ndim else ""
    raise RuntimeError(f"{name}: {where}The factorization could not be completed: the {int(flat[first])}-th "
                       "diagonal block of D is zero (the matrix is singular).")


def ldl_factor(A: Tensor, *, hermitian: bool = False):
    """``(LD, pivots)`` of ``ldl_factor_ex``; a singular matrix raises RuntimeError."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    if (info._data > 0).any():
        _raise_singular("torch.linalg.ldl_factor", info._data)
    return result("linalg_ldl_factor", ("LD", "pivots"), (LD, pivots))


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """X with A X = B, A's factorization ``(LD, pivots)`` from ``ldl_factor`` (batches broadcast)."""
    name = "torch.linalg.ldl_solve"
    check_matrix(LD, name, arg="LD", low_precision=False)
    check_matrix(B, name, arg="B", square=False, low_precision=False)
    if pivots._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got "
                           f"{_dtype.SCALAR_TYPE_NAMES[pivots.dtype.name]}")
    if LD.dtype != B.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtype.SCALAR_TYPE_NAMES[B.dtype.name]} and A of type "
                           f"{_dtype.SCALAR_TYPE_NAMES[LD.dtype.name]} instead.")
    n = LD._data.shape[-1]
    if pivots._data.shape[-1] != n or B._data.shape[-2] != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A, pivots and B: LD {list(LD.shape)}, pivots "
                           f"{list(pivots.shape)}, B {list(B.shape)}")
    batch = xp.broadcast_shapes(LD._data.shape[:-2], pivots._data.shape[:-1], B._data.shape[:-2])
    ld = xp.broadcast_to(LD._data, batch + LD._data.shape[-2:])
    piv = xp.broadcast_to(pivots._data, batch + (n,))
    out = xp.array(xp.broadcast_to(B._data, batch + B._data.shape[-2:]))
    with quiet():
        for index in xp.ndindex(*batch):
            out[index] = _solve_one(ld[index], piv[index], out[index].copy(), hermitian and LD.is_complex())
    return without_derivative(Tensor._make(out), "linalg_ldl_solve", LD, B)

"""The matrix products of bool, integer and half precision operands against PyTorch: its result (dtype, shape,
values) where it computes one, else its error word for word. PyTorch's CPU kernels have no bool version and name
the kernel its matmul dispatches to for the operands' dims (``dot``, ``addmv_impl_cpu``, ``addmm_impl_cpu_``,
``bmm``), except where an operand is empty and the kernel is never reached; integers are computed (wrapping in
their dtype)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import outcomes

import ember

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16"]

# every pair of ranks matmul dispatches differently, a batch of one beside a stack, and empty operands
MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((2, 2, 3), (3,)), ((3,), (2, 3, 2)),
                 ((2, 2, 3), (2, 3, 4)), ((2, 2, 3), (3, 4)), ((2, 3), (2, 3, 4)), ((1, 2, 3), (2, 3, 4)),
                 ((2, 1, 2, 3), (2, 3, 4)), ((0,), (0,)), ((2, 0), (0,)), ((0, 3), (3,)), ((2, 0), (0, 3)),
                 ((0, 2, 3), (0, 3, 1)), ((2, 3), (3, 0))]

OPS = {
    "mm": (lambda m, a, b: m.mm(a, b), [(2, 3), (3, 4)]),
    "mm of empty": (lambda m, a, b: m.mm(a, b), [(2, 0), (0, 4)]),
    "bmm": (lambda m, a, b: m.bmm(a, b), [(2, 2, 3), (2, 3, 4)]),
    "bmm of empty": (lambda m, a, b: m.bmm(a, b), [(0, 2, 3), (0, 3, 4)]),
    "mv": (lambda m, a, b: m.mv(a, b), [(2, 3), (3,)]),
    "mv of empty": (lambda m, a, b: m.mv(a, b), [(0, 3), (3,)]),
    "dot": (lambda m, a, b: m.dot(a, b), [(3,), (3,)]),
    "dot of empty": (lambda m, a, b: m.dot(a, b), [(0,), (0,)]),
    "vdot": (lambda m, a, b: m.vdot(a, b), [(3,), (3,)]),
    "inner": (lambda m, a, b: m.inner(a, b), [(2, 3), (4, 3)]),
    "outer": (lambda m, a, b: m.outer(a, b), [(3,), (2,)]),
    "kron": (lambda m, a, b: m.kron(a, b), [(2, 2), (2,)]),
    "tensordot": (lambda m, a, b: m.tensordot(a, b, 1), [(2, 3), (3, 2)]),
    "einsum": (lambda m, a, b: m.einsum("ij,jk->ik", a, b), [(2, 3), (3, 2)]),
    "addmm": (lambda m, a, b: m.addmm(a[:, :1] * 0 + a[:1, :1], a, b), [(2, 3), (3, 3)]),
    "addmv": (lambda m, a, b: m.addmv(b[:2], a, b), [(2, 3), (3,)]),
    "addr": (lambda m, a, b: m.addr(m.outer(a, b), a, b), [(3,), (2,)]),
    "baddbmm": (lambda m, a, b: m.baddbmm(m.bmm(a, b), a, b), [(2, 2, 3), (2, 3, 2)]),
    "addbmm": (lambda m, a, b: m.addbmm(a[0, :, :2], a, b), [(2, 2, 3), (2, 3, 2)]),
    "multi_dot": (lambda m, a, b: m.linalg.multi_dot([a, b, b.T]), [(2, 3), (3, 3)]),
    "linalg.vecdot": (lambda m, a, b: m.linalg.vecdot(a, b), [(2, 3), (2, 3)]),
    "trace": (lambda m, a, b: m.trace(b), [(2, 3), (3, 3)]),
    "trace of a vector": (lambda m, a, b: m.trace(a), [(3,), (3, 3)]),
    **{f"matrix_power {n}": (lambda m, a, b, n=n: m.linalg.matrix_power(b, n), [(2, 3), (3, 3)]) for n in (0, 1, 3, -1)},
    "matrix_power of a vector": (lambda m, a, b: m.linalg.matrix_power(a, 2), [(3,), (3, 3)]),
}


def _outcome(fn, shapes, dtype):
    def run(m):
        rng = np.random.default_rng(0)
        a, b = (m.tensor(rng.integers(0, 3, s)).to(getattr(m, dtype)) for s in shapes)
        return fn(m, a, b)

    (got, _), (want, _) = outcomes(run)
    return [f"{type(r).__name__}: {r}" if isinstance(r, Exception) else
            (str(r.dtype).split(".")[-1], tuple(r.shape), np.asarray(r.double().tolist())) for r in (got, want)]


def _assert_same(cases):
    wrong = []
    for case, (got, want) in cases:
        if isinstance(got, str) or isinstance(want, str):
            same = got == want
        else:
            same = got[:2] == want[:2] and np.allclose(got[2], want[2], rtol=1e-2)
        if not same:
            wrong.append((case, got, want))
    assert not wrong, wrong


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_of_each_rank_pair_as_pytorch(dtype):
    _assert_same([((sa, sb, form), _outcome(fn, (sa, sb), dtype)) for sa, sb in MATMUL_SHAPES
                  for form, fn in (("matmul", lambda m, a, b: m.matmul(a, b)), ("@", lambda m, a, b: a @ b))])


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_other_products_as_pytorch(dtype):
    _assert_same([(name, _outcome(fn, shapes, dtype)) for name, (fn, shapes) in OPS.items()
                  if not (name == "matrix_power -1" and dtype in ("float16", "bfloat16"))])  # (inv's: below)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_inverse_of_a_half_precision_matrix_is_refused_as_pytorch(dtype):
    _assert_same([(name, _outcome(fn, [(2, 2), (2, 2)], dtype)) for name, fn in (
        ("inv", lambda m, a, b: m.linalg.inv(a + 2 * m.eye(2, dtype=a.dtype))),
        ("matrix_power -1", lambda m, a, b: m.linalg.matrix_power(a + 2 * m.eye(2, dtype=a.dtype), -1)))])


def test_matrix_power_of_one_is_a_copy_as_pytorchs():
    """``matrix_power(A, 1)`` is a new tensor (CloneBackward0), never ``A`` itself: writing into it leaves ``A``."""
    for m in (ember, torch):
        a = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        out = m.linalg.matrix_power(a, 1)
        assert out is not a and type(out.grad_fn).__name__ == "CloneBackward0"
        b = m.eye(2)
        m.linalg.matrix_power(b, 1).add_(1)
        assert b.tolist() == [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize("n", [0, 1])
def test_matrix_power_of_zero_and_one_as_pytorchs_graph_and_layout(n):
    """``matrix_power(A, 0)`` is A's contiguous clone with the identity copied in (in A's graph: CopyBackwards, a
    zero gradient) and ``matrix_power(A, 1)`` A's contiguous clone, as PyTorch's, also of a transposed A."""
    got = []
    for m in (ember, torch):
        a = m.tensor([[1.0, 2.0], [3.0, 4.0]]).t().requires_grad_()
        out = m.linalg.matrix_power(a, n)
        out.sum().backward()
        got.append((out.grad_fn.name(), tuple(out.stride()), out.tolist(), a.grad.tolist()))
    assert got[0] == got[1]

"""cholesky_inverse and cholesky_solve read only their factor's triangle (the lower one, the upper one when
``upper``), as PyTorch's kernels: the other triangle's entries change nothing (ember multiplied the whole matrix).
Their gradient is PyTorch's for a triangular factor (dense: -(A^-1 (G + G^T) A^-1) L for cholesky_inverse)."""

import pytest
import torch

import ember

MATRICES = {"full": [[2.0, 5.0, 1.0], [1.0, 3.0, -2.0], [0.5, -1.0, 4.0]],
            "lower": [[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.5, -1.0, 4.0]],
            "upper": [[2.0, 1.0, 0.5], [0.0, 3.0, -1.0], [0.0, 0.0, 4.0]]}


def _run(lib, matrix, upper, dtype):
    L = lib.tensor(MATRICES[matrix], dtype=getattr(lib, dtype), requires_grad=True)
    weights = lib.arange(9, dtype=L.dtype).reshape(3, 3)
    result = lib.cholesky_inverse(L, upper)
    (grad,) = lib.autograd.grad((result * weights).sum(), L)
    return result.detach().tolist(), grad.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("matrix", list(MATRICES))
def test_reads_the_triangle_as_pytorch(matrix, upper, dtype):
    (got, got_grad), (want, want_grad) = _run(ember, matrix, upper, dtype), _run(torch, matrix, upper, dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert [v for row in got for v in row] == pytest.approx([v for row in want for v in row], rel=tol, abs=tol)
    if matrix == ("upper" if upper else "lower"):  # (a factor with entries off its triangle: PyTorch's formula
        # multiplies them in, which no composition of the triangle's value does)
        flat = lambda rows: [v for row in rows for v in row]  # noqa: E731
        assert flat(got_grad) == pytest.approx(flat(want_grad), rel=tol * 10, abs=tol * 10)


def test_batched_and_empty():
    for shape in [(2, 3, 3), (0, 3, 3), (3, 0, 0)]:
        a = torch.randn(*shape, dtype=torch.float64).tril()
        a.diagonal(dim1=-2, dim2=-1).add_(3)
        want = torch.cholesky_inverse(a)
        got = ember.cholesky_inverse(ember.tensor(a.numpy()))
        assert got.shape == want.shape
        assert got.numpy() == pytest.approx(want.numpy())


def _solve(lib, matrix, upper, dtype):
    L = lib.tensor(MATRICES[matrix], dtype=getattr(lib, dtype), requires_grad=True)
    B = lib.tensor([[1.0, -1.0], [2.0, 0.5], [0.0, 3.0]], dtype=L.dtype, requires_grad=True)
    X = lib.cholesky_solve(B, L, upper)
    grad_L, grad_B = lib.autograd.grad((X * lib.arange(6, dtype=L.dtype).reshape(3, 2)).sum(), (L, B))
    return [[v for row in t.tolist() for v in row] for t in (X.detach(), grad_B, grad_L)]


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("matrix", list(MATRICES))
def test_cholesky_solve_reads_the_triangle_as_pytorch(matrix, upper):
    got, want = _solve(ember, matrix, upper, "float64"), _solve(torch, matrix, upper, "float64")
    read = 3 if matrix == ("upper" if upper else "lower") else 2  # (L's gradient: for a triangular factor)
    for g, w in zip(got[:read], want[:read]):
        assert g == pytest.approx(w, rel=1e-10, abs=1e-12)

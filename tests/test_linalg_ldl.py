"""linalg.ldl_factor / ldl_factor_ex / ldl_solve against torch: LAPACK's Bunch-Kaufman pivots (1x1 and 2x2 blocks)
and LD for real symmetric, complex symmetric and complex Hermitian matrices, the solve, batches and broadcasting,
empty and non-contiguous inputs (only the lower triangle read), singular matrices' info, no derivative, PyTorch's
errors."""

import numpy as np
import pytest
import torch

import ember

_RNG = np.random.default_rng(7)


def _matrices(kind: str, n: int, count: int, dtype="float64"):
    """``count`` symmetric (Hermitian for "hermitian") n x n matrices, a third with a small diagonal (2x2 pivots)."""
    shape = (count, n, n)
    m = _RNG.standard_normal(shape) if kind == "real" else _RNG.standard_normal(shape) + 1j * _RNG.standard_normal(shape)
    m[::3, np.arange(n), np.arange(n)] *= 0.01
    a = m + (np.conj(np.swapaxes(m, -1, -2)) if kind == "hermitian" else np.swapaxes(m, -1, -2))
    return a.astype(dtype if kind == "real" else {"float64": "complex128", "float32": "complex64"}[dtype])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind", ["real", "symmetric", "hermitian"])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 9])
def test_factor_and_solve_as_torch(kind, n, dtype):
    a = _matrices(kind, n, 12, dtype)
    hermitian = kind == "hermitian"
    b = (_RNG.standard_normal((12, n, 2)) + (0 if kind == "real" else 1j * _RNG.standard_normal((12, n, 2))))
    b = b.astype(a.dtype)
    results = []
    for m in (torch, ember):
        LD, pivots, info = m.linalg.ldl_factor_ex(m.tensor(a), hermitian=hermitian)
        X = m.linalg.ldl_solve(LD, pivots, m.tensor(b), hermitian=hermitian)
        assert str(pivots.dtype).endswith("int32") and str(info.dtype).endswith("int32")
        results.append((LD.numpy(), pivots.numpy(), info.numpy(), X.numpy()))
    (t_ld, t_piv, t_info, t_x), (e_ld, e_piv, e_info, e_x) = results
    np.testing.assert_array_equal(e_piv, t_piv)  # (2x2 blocks among them: negative entries)
    np.testing.assert_array_equal(e_info, t_info)
    rtol = 1e-9 if dtype == "float64" else 2e-3
    np.testing.assert_allclose(e_ld, t_ld, rtol=rtol, atol=rtol * np.abs(a).max())
    np.testing.assert_allclose(e_x, t_x, rtol=rtol, atol=rtol * np.abs(t_x).max())
    if dtype == "float64":  # the solution solves
        np.testing.assert_allclose(a @ e_x, b, atol=1e-8)


def test_two_by_two_pivots_are_met():
    a = _matrices("real", 5, 6)
    assert (ember.linalg.ldl_factor(ember.tensor(a)).pivots.numpy() < 0).any()


def test_only_the_lower_triangle_is_read_and_layouts():
    a = _matrices("real", 4, 1)[0]
    garbage = np.tril(a) + np.triu(_RNG.standard_normal((4, 4)), 1)
    rhs = _RNG.standard_normal((2, 4))
    results = []
    for m in (torch, ember):
        full = m.tensor(np.ascontiguousarray(garbage.T)).t()  # non-contiguous
        LD, pivots = m.linalg.ldl_factor(full)
        b = m.tensor(rhs).t()  # (non-contiguous)
        results.append((LD.numpy(), pivots.numpy(), m.linalg.ldl_solve(LD, pivots, b).numpy()))
    for e, t in zip(results[1], results[0]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


def test_batches_broadcast_and_empty():
    a = _matrices("real", 3, 4).reshape(2, 2, 3, 3)
    b = _RNG.standard_normal((3, 2))
    results = []
    for m in (torch, ember):
        LD, pivots = m.linalg.ldl_factor(m.tensor(a))
        X = m.linalg.ldl_solve(LD, pivots, m.tensor(b))
        empty = m.linalg.ldl_factor(m.zeros(2, 0, 0))
        results.append((X.shape, X.numpy(), tuple(empty.LD.shape), tuple(empty.pivots.shape)))
    assert results[0][0] == results[1][0] and results[0][2:] == results[1][2:]
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-10)


def test_singular_info_and_no_derivative():
    for m in (torch, ember):
        LD, pivots, info = m.linalg.ldl_factor_ex(m.zeros(2, 3, 3, dtype=m.float64))
        assert info.tolist() == [1, 1] and pivots.tolist() == [[1, 2, 3]] * 2
        with pytest.raises(RuntimeError):
            m.linalg.ldl_factor(m.zeros(3, 3))
        A = m.tensor(_matrices("real", 3, 1)[0], requires_grad=True)
        LD, pivots = m.linalg.ldl_factor(A)
        assert type(LD.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
            LD.sum().backward()
        X = m.linalg.ldl_solve(LD.detach(), pivots, m.ones(3, 1, dtype=m.float64, requires_grad=True))
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not implemented"):
            X.sum().backward()
    assert ember.linalg.ldl_factor.__name__ == torch.linalg.ldl_factor.__name__ == "linalg_ldl_factor"


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.ldl_factor(m.ones(2, 3)),
    lambda m: m.linalg.ldl_factor(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.linalg.ldl_factor(m.ones(2)),
    lambda m: m.linalg.ldl_factor(m.ones(2, 2, dtype=m.float16)),
    lambda m: m.linalg.ldl_solve(m.eye(3, dtype=m.float64), m.tensor([1, 2, 3], dtype=m.int32), m.ones(3, 1)),
    lambda m: m.linalg.ldl_solve(m.eye(3, dtype=m.float64), m.tensor([1.0, 2, 3]), m.ones(3, 1, dtype=m.float64)),
])
def test_errors_as_torch(call):
    errors = []
    for m in (torch, ember):
        with pytest.raises((RuntimeError, NotImplementedError)) as info:
            call(m)
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]

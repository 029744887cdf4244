"""Complex input to ``torch.linalg`` cholesky, qr, svd, lu, pinv, matrix_exp and solve_triangular, against torch
(ember refused it with a NotImplementedError).

Values (up to the factors' phase freedom where LAPACK's choice is not unique) and gradients in PyTorch's
convention for complex inputs (the conjugate Wirtinger derivative of a real loss), through losses that do not
depend on the phase of singular vectors; and PyTorch's error for a loss that does.
"""

import numpy as np
import pytest
import torch

import ember

TOL = {"complex128": dict(rtol=1e-9, atol=1e-10), "complex64": dict(rtol=2e-3, atol=2e-4)}


def _complex(shape, seed=0, dtype="complex128"):
    rs = np.random.RandomState(seed)
    return (rs.randn(*shape) + 1j * rs.randn(*shape)).astype(dtype)


def _weights(shape, seed=1):
    rs = np.random.RandomState(seed)
    return rs.randn(*shape) + 1j * rs.randn(*shape)


def _hpd(shape, dtype):
    a = _complex(shape, dtype="complex128")
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _real_loss(m, outs, seed=1):
    """A real loss of complex outputs: Re(sum(out * w)) for fixed complex weights (real weights for a real output)."""
    loss = 0
    for i, out in enumerate(outs):
        w = _weights(tuple(out.shape), seed + i)
        if out.is_complex():
            loss = loss + (out * m.tensor(w.astype(np.complex128)).to(out.dtype)).real.sum()
        else:
            loss = loss + (out * m.tensor(w.real).to(out.dtype)).sum()
    return loss


def _grad(m, fn, a, *rest):
    inputs = [m.tensor(x, requires_grad=True) for x in (a, *rest)]
    outs = fn(m, *inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    grads = m.autograd.grad(_real_loss(m, outs), inputs)
    return [o.detach().numpy() for o in outs], [g.resolve_conj().numpy() for g in grads]


def _same(fn, *arrays, dtype="complex128"):
    (eo, eg), (to, tg) = _grad(ember, fn, *arrays), _grad(torch, fn, *arrays)
    for e, t in zip(eo + eg, to + tg):
        assert e.dtype == t.dtype
        np.testing.assert_allclose(e, t, **TOL[dtype])


CASES = {
    "cholesky": (lambda m, a: m.linalg.cholesky(a), lambda d: (_hpd((2, 4, 4), d),)),
    "cholesky_upper": (lambda m, a: m.linalg.cholesky(a, upper=True), lambda d: (_hpd((4, 4), d),)),
    "cholesky_ex": (lambda m, a: m.linalg.cholesky_ex(a).L, lambda d: (_hpd((3, 3), d),)),
    "qr_tall": (lambda m, a: tuple(m.linalg.qr(a)), lambda d: (_complex((2, 5, 3), dtype=d),)),
    "qr_square": (lambda m, a: tuple(m.linalg.qr(a)), lambda d: (_complex((4, 4), dtype=d),)),
    "qr_wide": (lambda m, a: tuple(m.linalg.qr(a)), lambda d: (_complex((3, 5), dtype=d),)),
    "qr_complete": (lambda m, a: tuple(m.linalg.qr(a, mode="complete")), lambda d: (_complex((3, 3), dtype=d),)),
    "solve_triangular_left": (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
                              lambda d: (_hpd((3, 3), d), _complex((3, 2), 2, d))),
    "solve_triangular_right_unit": (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False, left=False,
                                                                              unitriangular=True),
                                    lambda d: (_hpd((2, 3, 3), d), _complex((2, 4, 3), 2, d))),
    "pinv": (lambda m, a: m.linalg.pinv(a), lambda d: (_complex((2, 4, 3), dtype=d),)),
    "pinv_wide": (lambda m, a: m.linalg.pinv(a), lambda d: (_complex((3, 5), dtype=d),)),
    "pinv_hermitian": (lambda m, a: m.linalg.pinv(a, hermitian=True), lambda d: (_hpd((3, 3), d),)),
    "matrix_exp": (lambda m, a: m.linalg.matrix_exp(a), lambda d: (0.5 * _complex((2, 3, 3), dtype=d),)),
    "lu_factor": (lambda m, a: m.linalg.lu_factor(a).LU, lambda d: (_complex((2, 4, 4), dtype=d),)),
    "lu": (lambda m, a: tuple(m.linalg.lu(a))[1:], lambda d: (_complex((4, 4), dtype=d),)),
    # solves from the factors: adjoint=True is A^H (PyTorch's result of a right solve has its conjugate bit set)
    **{f"lu_solve_{'left' if left else 'right'}{'_adjoint' if adjoint else ''}": (
        lambda m, a, b, left=left, adjoint=adjoint: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, left=left,
                                                                       adjoint=adjoint).resolve_conj(),
        lambda d, left=left: (_complex((2, 3, 3), dtype=d), _complex((2, 3, 2) if left else (2, 2, 3), 2, d)))
       for left in (True, False) for adjoint in (False, True)},
    "svdvals": (lambda m, a: m.linalg.svdvals(a), lambda d: (_complex((2, 4, 3), dtype=d),)),
    # singular vectors through phase-free functions: |U|, |Vh| and the product U S Vh
    "svd_abs": (lambda m, a: (lambda u, s, vh: (u.abs(), s, vh.abs()))(*m.linalg.svd(a, full_matrices=False)),
                lambda d: (_complex((2, 5, 3), dtype=d),)),
    "svd_abs_wide": (lambda m, a: (lambda u, s, vh: (u.abs(), vh.abs()))(*m.linalg.svd(a, full_matrices=False)),
                     lambda d: (_complex((3, 5), dtype=d),)),
    "svd_product": (lambda m, a: (lambda u, s, vh: (u * s.to(u.dtype)[..., None, :]) @ vh)(*m.linalg.svd(a)),
                    lambda d: (_complex((4, 4), dtype=d),)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_complex_values_and_gradients_as_torch(case):
    fn, make = CASES[case]
    _same(fn, *make("complex128"))


@pytest.mark.parametrize("case", ["cholesky", "qr_tall", "svd_abs", "pinv", "matrix_exp", "solve_triangular_left"])
def test_complex64_as_torch(case):
    fn, make = CASES[case]
    _same(fn, *make("complex64"), dtype="complex64")


def test_qr_and_svd_factors_reconstruct_and_match_torchs():
    a = _complex((2, 5, 3))
    for m in (ember, torch):
        q, r = m.linalg.qr(m.tensor(a))
        np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
        u, s, vh = m.linalg.svd(m.tensor(a), full_matrices=True)
        assert tuple(u.shape) == (2, 5, 5) and str(s.dtype).endswith("float64")
    # the same LAPACK routines under both: the same factors
    np.testing.assert_allclose(ember.linalg.qr(ember.tensor(a)).R.numpy(), torch.linalg.qr(torch.tensor(a)).R.numpy(),
                               atol=1e-12)


def test_cholesky_reads_the_lower_triangle_and_the_real_diagonal():
    a = _hpd((3, 3), "complex128")
    junk = a + np.triu(_complex((3, 3), 5), 1) + 1j * np.diag([1.0, 2.0, 3.0])
    for upper in (False, True):
        np.testing.assert_allclose(ember.linalg.cholesky(ember.tensor(junk), upper=upper).numpy(),
                                   torch.linalg.cholesky(torch.tensor(junk), upper=upper).numpy(), atol=1e-12)


def test_complex_not_positive_definite_is_torchs_error_and_info():
    a = _complex((3, 3))
    a = a + np.conj(a.T)  # Hermitian, indefinite
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="not positive-definite"):
            m.linalg.cholesky(m.tensor(a))
    assert int(ember.linalg.cholesky_ex(ember.tensor(a)).info) == int(torch.linalg.cholesky_ex(torch.tensor(a)).info)


def test_svd_phase_dependent_loss_is_torchs_error():
    a = _complex((4, 3))
    for m in (ember, torch):
        A = m.tensor(a, requires_grad=True)
        u, _, _ = m.linalg.svd(A, full_matrices=False)
        with pytest.raises(RuntimeError, match="specified up to multiplication by e"):
            m.autograd.grad(u.imag.sum(), A)


def test_complex_empty_and_node_names():
    for m in (ember, torch):
        q, r = m.linalg.qr(m.zeros(0, 3, dtype=m.complex64))
        assert tuple(q.shape) == (0, 0) and tuple(r.shape) == (0, 3)
    A = ember.tensor(_hpd((3, 3), "complex128"), requires_grad=True)
    assert type(ember.linalg.cholesky(A).grad_fn).__name__ == "LinalgCholeskyExBackward0"
    assert type(ember.linalg.qr(A).Q.grad_fn).__name__ == "LinalgQrBackward0"


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cholesky_upper_reads_the_upper_triangle(dtype):
    """``upper=True`` factors the matrix that A's upper triangle describes, as PyTorch's LAPACK call (ember read
    the lower triangle for both, which differs when A is not exactly Hermitian)."""
    a = _hpd((2, 3, 3), "complex128") + np.triu(_complex((3, 3), 5), 1)  # the upper triangle differs
    a = (a if dtype == "complex128" else a.real).astype(dtype)
    for upper in (False, True):
        e = ember.linalg.cholesky_ex(ember.tensor(a), upper=upper)
        t = torch.linalg.cholesky_ex(torch.tensor(a), upper=upper)
        np.testing.assert_allclose(e.L.numpy(), t.L.numpy(), atol=1e-12)
        assert e.info.tolist() == t.info.tolist()


_LEGACY = {
    "cholesky_solve": (lambda m, L, B: m.cholesky_solve(B, L), False),
    "cholesky_solve_upper": (lambda m, L, B: m.cholesky_solve(B, L, upper=True), True),
    "cholesky_inverse": (lambda m, L: m.cholesky_inverse(L), False),
    "cholesky_inverse_upper": (lambda m, L: m.cholesky_inverse(L, upper=True), True),
    "triangular_solve": (lambda m, L, B: m.triangular_solve(B, L, upper=False)[0], False),
    "triangular_solve_transpose": (lambda m, L, B: m.triangular_solve(B, L, upper=False, transpose=True)[0], False),
}


@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
@pytest.mark.parametrize("case", sorted(_LEGACY))
def test_complex_legacy_solves_as_torch(case):
    """torch.cholesky_solve / cholesky_inverse / triangular_solve of complex factors (A = L L^H), which ember refused."""
    fn, upper = _LEGACY[case]
    low = np.linalg.cholesky(_hpd((3, 3), "complex128"))
    factor = np.conj(low.T).copy() if upper else low
    arrays = (factor,) if "inverse" in case else (factor, _complex((3, 2), 2))
    _same(fn, *arrays)


_NORMS_AND_PRODUCTS = {
    "matrix_norm_fro": (lambda m, x: m.linalg.matrix_norm(x), lambda: (_complex((2, 4, 3)),)),
    "matrix_norm_nuc": (lambda m, x: m.linalg.matrix_norm(x, "nuc"), lambda: (_complex((2, 4, 3)),)),
    "matrix_norm_2": (lambda m, x: m.linalg.matrix_norm(x, 2), lambda: (_complex((2, 4, 3)),)),
    "matrix_norm_1": (lambda m, x: m.linalg.matrix_norm(x, 1), lambda: (_complex((2, 4, 3)),)),
    "matrix_norm_inf": (lambda m, x: m.linalg.matrix_norm(x, float("inf")), lambda: (_complex((2, 4, 3)),)),
    "matrix_power": (lambda m, x: m.linalg.matrix_power(x, 3), lambda: (_complex((3, 3)),)),
    "matrix_power_negative": (lambda m, x: m.linalg.matrix_power(x, -2), lambda: (_hpd((3, 3), "complex128"),)),
    "lstsq": (lambda m, x, y: m.linalg.lstsq(x, y).solution, lambda: (_complex((2, 4, 3)), _complex((2, 4, 2), 2))),
    "cond": (lambda m, x: m.linalg.cond(x), lambda: (_complex((3, 3)),)),
}


@pytest.mark.parametrize("case", sorted(_NORMS_AND_PRODUCTS))
def test_complex_norms_products_lstsq_cond_as_torch(case):
    """matrix_norm, matrix_power, lstsq and cond of complex matrices (ember refused them): values (real norms) and
    gradients; matrix_rank and lstsq's rank too."""
    fn, make = _NORMS_AND_PRODUCTS[case]
    _same(fn, *make())


def test_complex_rank_and_cond_orders():
    a = _complex((2, 4, 3))
    assert ember.linalg.matrix_rank(ember.tensor(a)).tolist() == torch.linalg.matrix_rank(torch.tensor(a)).tolist()
    sq = _complex((3, 3))
    for p in ("fro", "nuc", 1, -1, 2, -2, float("inf")):
        np.testing.assert_allclose(ember.linalg.cond(ember.tensor(sq), p).item(),
                                   torch.linalg.cond(torch.tensor(sq), p).item(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_qr_mode_r_backward_is_torchs_error(dtype):
    """mode='r' computes no Q: a backward through R is PyTorch's RuntimeError (ember read Q's shape first)."""
    messages = []
    for m in (ember, torch):
        x = m.tensor((np.arange(9.0).reshape(3, 3) + np.eye(3)).astype(dtype), requires_grad=True)
        with pytest.raises(RuntimeError) as err:
            m.linalg.qr(x, mode="r").R.abs().sum().backward()
        messages.append(str(err.value))
    assert messages[0] == messages[1]

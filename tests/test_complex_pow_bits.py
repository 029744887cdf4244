"""Complex ``z ** e`` (tensor ** number, tensor ** tensor, number ** tensor) in complex64 and complex128, bit for bit
against PyTorch's CPU kernels: a tensor or number base with a tensor exponent, and a number exponent that PyTorch
does not special-case, is the C library's ``cpow``, ``exp(e * log(z))`` (also for integer-valued exponents, where
NumPy's power multiplies); exponents 0 and 1 fill 1 / copy; 2, 3: products; 0.5: sqrt; -0.5, -1, -2: ``1 / sqrt(z)``,
``1 / z``, ``1 / (z * z)``. For those three PyTorch's vectorised loop divides as ``conj(w) / |w|^2`` and its scalar
loop (a tensor shorter than two vectors, and the tail of a longer one) by Smith's algorithm, compiled with the
multiply-adds fused or not by the build: ember divides by Smith's algorithm (NumPy's) for every element, within 4 ulp
of PyTorch's (not bit for bit). The gradients (of the base and of the exponent) read the same kernels, and multiply
complex numbers, which PyTorch's vectorised loop does without fused multiply-adds and its scalar loop (like NumPy's
loops, by length) with them: within 4 ulp of PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

Z = [0j, complex(-0.0, 0.0), complex(0.0, -0.0), 1 + 0j, -1 + 0j, 2 + 0j, -2.5 + 0j, 1j, -1j, 0.5 + 2j, -3 - 0.25j,
     1e-3 + 1e3j, -0.0 + 1j, 0.75 - 0.6j, -1.25 + 4j]
EXPONENTS = [2, 3, 0.5, -1, -2, -0.5, 0, 1, 1.5, -3, 4, 7, -2.5, 1j, 2 + 1j, -0.5 + 0.3j, 2 + 0j, 3.0]
# PyTorch's own formulas for these, whose bits differ between its vectorised and scalar loops
_BY_LOOP = {-1, -2, -0.5}
BASES = [2.0, -2.0, 0.5, 1j, 2 + 1j, 3, 0.0, 1.0, -0.5 - 1.5j]
DTYPES = ["complex64", "complex128"]


def _bits(t) -> np.ndarray:
    """The real and imaginary parts' bits (every NaN as one pattern: a NaN's payload and sign are no value's)."""
    parts = t.detach().resolve_conj().numpy().copy()
    real = parts.view(np.float32 if parts.dtype == np.complex64 else np.float64)
    real[np.isnan(real)] = np.nan
    return real.view(np.uint32 if parts.dtype == np.complex64 else np.uint64)


def _same_bits(ours, theirs, what: str = "") -> None:
    np.testing.assert_array_equal(_bits(ours), _bits(theirs), err_msg=what)


def _each(m, dtype, values=Z):
    return m.tensor(values, dtype=getattr(m, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("e", EXPONENTS)
def test_tensor_to_a_number_as_pytorch(dtype, e):
    if e in _BY_LOOP:  # (one element at a time: PyTorch's scalar loop)
        for z in Z[3:]:  # (nonzero: inf and NaN parts at 0, as PyTorch's, are the bitwise test's below)
            _within_4_ulp(_each(ember, dtype, [z]) ** e, _each(torch, dtype, [z]) ** e)
        _same_bits(_each(ember, dtype, Z[:3]) ** e, _each(torch, dtype, Z[:3]) ** e)
        return
    _same_bits(_each(ember, dtype) ** e, _each(torch, dtype) ** e)
    _same_bits(ember.pow(_each(ember, dtype), e), torch.pow(_each(torch, dtype), e))
    _same_bits(_each(ember, dtype).pow_(e), _each(torch, dtype).pow_(e))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("e", sorted(_BY_LOOP))
def test_a_long_tensor_to_a_loop_dependent_exponent_within_4_ulp(dtype, e):
    rng = np.random.default_rng(0)
    z = (rng.standard_normal(4096) + 1j * rng.standard_normal(4096)).astype(dtype)
    _within_4_ulp(ember.from_numpy(z) ** e, torch.from_numpy(z) ** e)


def _within_4_ulp(ours, theirs) -> None:
    ours, theirs = ours.numpy(), theirs.numpy()
    np.testing.assert_allclose(ours, theirs, rtol=4 * np.finfo(ours.real.dtype).eps, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_to_a_tensor_as_pytorch(dtype):
    zs = np.repeat(np.array(Z), len(EXPONENTS))
    es = np.tile(np.array(EXPONENTS, dtype=complex), len(Z))
    _same_bits(_each(ember, dtype, zs) ** _each(ember, dtype, es), _each(torch, dtype, zs) ** _each(torch, dtype, es))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("base", BASES)
def test_number_to_a_tensor_as_pytorch(dtype, base):
    _same_bits(base ** _each(ember, dtype), base ** _each(torch, dtype), f"{base} ** z")
    _same_bits(ember.pow(base, _each(ember, dtype)), torch.pow(base, _each(torch, dtype)), f"pow({base}, z)")


def _gradients(m, dtype, form, e):
    z = m.tensor(Z[3:], dtype=getattr(m, dtype), requires_grad=True)  # (nonzero bases: 0 ** e's gradient is inf/NaN)
    if form == "number exponent":
        out, inputs = z ** e, (z,)
    elif form == "tensor exponent":
        u = m.full_like(z, e).requires_grad_()
        out, inputs = z ** u, (z, u)
    else:
        u = (z * 0 + e).detach().requires_grad_()
        out, inputs = 2.5 ** u, (u,)
    g = m.tensor([k * (1 - 0.5j) for k in range(1, len(Z) - 2)], dtype=getattr(m, dtype))
    return m.autograd.grad(out, inputs, g)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("e", [2, 3, 1.5, -3, 4, 2 + 1j, -0.5 + 0.3j])
@pytest.mark.parametrize("form", ["number exponent", "tensor exponent", "number base"])
def test_gradients_as_pytorch(dtype, e, form):
    for ours, theirs in zip(_gradients(ember, dtype, form, e), _gradients(torch, dtype, form, e)):
        ours, theirs = ours.numpy(), theirs.numpy()
        eps = np.finfo(ours.real.dtype).eps
        assert (np.abs(ours - theirs) <= 4 * eps * np.abs(theirs)).all(), (ours, theirs)

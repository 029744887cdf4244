"""``torch.special``'s Bessel functions J0, J1, Y0, Y1, K0, K1 (plain and exp-scaled) and Airy's Ai, against torch:
values over each approximation's branches (the points where they switch, small, large, negative, infinite and NaN
arguments), float64 and float32, empty, 0-d and non-contiguous inputs, integer inputs, no gradient, out=, and
PyTorch's names (their errors: tests/test_special_bessel_no_gradient.py)."""

import numpy as np
import pytest
import torch

import ember

NAMES = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai"]
_RNG = np.random.default_rng(0)
# the branch points (1e-5, 2, 2.09, 5, 8.32, 103.892), both sides of zero, huge and non-finite arguments, and a
# spread over [-10, 10] and over magnitudes from 1e-9 to 1e3
XS = np.concatenate([
    [0.0, -0.0, 1e-300, 1e-20, 9.9e-6, 1e-5, 1.1e-5, 2.0, 2.0000001, 2.09, -2.09, -2.0900001, 5.0, 5.0000001, -5.0,
     8.3203353, 103.892, 104.0, 700.0, 1e10, 1e300, np.inf, -np.inf, np.nan, -1e-20, -1.0, -1e5],
    _RNG.uniform(-10, 10, 300), np.exp(_RNG.uniform(-20, 7, 300)), -np.exp(_RNG.uniform(-20, 7, 100))])
# PyTorch evaluates the same Cephes approximations in the input's dtype; the rest is rounding and the C library's
# sin/cos/exp/log (largest relative differences near J's and Y's zeros, where the values cancel)
TOL = {"float64": dict(rtol=1e-12, atol=1e-15), "float32": dict(rtol=3e-6, atol=3e-7)}


def _both(name, make):
    return getattr(ember.special, name)(make(ember)), getattr(torch.special, name)(make(torch))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", NAMES)
def test_values_as_torch(name, dtype):
    with np.errstate(over="ignore"):
        x = XS.astype(dtype)
    e, t = _both(name, lambda m: m.tensor(x))
    assert str(e.dtype) == str(t.dtype).replace("torch", "ember")
    e, t = e.numpy(), t.numpy()
    np.testing.assert_array_equal(np.isnan(e), np.isnan(t))
    np.testing.assert_array_equal(e[np.isinf(t)], t[np.isinf(t)])
    np.testing.assert_allclose(e, t, equal_nan=True, **TOL[dtype])


@pytest.mark.parametrize("name", NAMES)
def test_shapes_integers_no_gradient_and_out(name):
    base = np.linspace(0.25, 6.0, 12).reshape(3, 4)
    for make in (lambda m: m.tensor(base).t(), lambda m: m.tensor(base)[:, ::2], lambda m: m.tensor(1.5),
                 lambda m: m.empty(0, 3, dtype=m.float64), lambda m: m.tensor([1, 2, 3])):
        e, t = _both(name, make)
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype).replace("torch", "ember")
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=3e-6)
    for m in (ember, torch):
        x = m.tensor([0.5, 2.0], requires_grad=True)
        y = getattr(m.special, name)(x)
        assert not y.requires_grad and y.grad_fn is None
        out = m.empty(2)
        assert getattr(m.special, name)(x, out=out) is out
        np.testing.assert_allclose(out.detach().numpy(), y.detach().numpy().astype(np.float32))


@pytest.mark.parametrize("name", NAMES)
def test_named_as_torch(name):
    e, t = getattr(ember.special, name), getattr(torch.special, name)
    assert e.__name__ == t.__name__ == f"special_{name}"
    keyword = "x" if name.startswith(("scaled", "airy")) else "input"
    x = np.array([0.5, 3.0])
    np.testing.assert_allclose(e(**{keyword: ember.tensor(x)}).numpy(), t(**{keyword: torch.tensor(x)}).numpy(),
                               rtol=1e-12)

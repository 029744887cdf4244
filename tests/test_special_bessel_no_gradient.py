"""``torch.special.modified_bessel_i0`` / ``modified_bessel_i1`` / ``spherical_bessel_j0`` , against
torch: values over the kernels' branches (the series near 0, large and infinite arguments, NaN), dtypes, no gradient,
out=, and PyTorch's errors."""

import numpy as np
import pytest
import torch

import ember

NAMES = ["modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0"]
XS = np.array([-3.0, -0.4, -1e-20, 0.0, 1e-3, 0.3, 0.49, 0.5, 0.51, 2.0, 10.0, 30.0, 100.0, np.inf, -np.inf, np.nan])
TOL = {"float64": dict(rtol=1e-14, atol=0), "float32": dict(rtol=5e-7, atol=0)}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", NAMES)
def test_values_as_torch(name, dtype):
    e, t = (getattr(m.special, name)(m.tensor(XS.astype(dtype))) for m in (ember, torch))
    assert str(e.dtype).rsplit(".")[-1] == str(t.dtype).rsplit(".")[-1] == dtype
    np.testing.assert_allclose(e.numpy(), t.numpy(), equal_nan=True, **TOL[dtype])


@pytest.mark.parametrize("name", NAMES)
def test_integers_no_gradient_and_out(name):
    for m in (ember, torch):
        y = getattr(m.special, name)(m.tensor([1, 2]))
        assert str(y.dtype).rsplit(".")[-1] == "float32"
        x = m.tensor([0.5, 2.0], requires_grad=True)
        assert not getattr(m.special, name)(x).requires_grad
        out = m.empty(2)
        getattr(m.special, name)(x, out=out)
    np.testing.assert_allclose(getattr(ember.special, name)(ember.tensor([0.5, 2.0])).numpy(),
                               getattr(torch.special, name)(torch.tensor([0.5, 2.0])).numpy(), rtol=5e-7)


# with the Bessel functions J, Y, K and Airy's (tests/test_special_bessel_jyk.py), which refuse the same inputs
@pytest.mark.parametrize("name", NAMES + ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0",
                                          "modified_bessel_k1", "scaled_modified_bessel_k0",
                                          "scaled_modified_bessel_k1", "airy_ai"])
@pytest.mark.parametrize("make", [lambda m: m.ones(2, dtype=m.float16), lambda m: m.ones(2, dtype=m.bfloat16),
                                  lambda m: m.ones(2, dtype=m.complex64), lambda m: 0.5])
def test_errors_as_torch(name, make):
    messages = []
    for m in (ember, torch):
        with pytest.raises((TypeError, NotImplementedError)) as info:
            getattr(m.special, name)(make(m))
        messages.append((type(info.value).__name__, str(info.value)))
    assert messages[0] == messages[1]

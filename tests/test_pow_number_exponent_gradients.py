"""``x ** e`` for a number exponent and its base's gradient (PyTorch's ``e * x ** (e - 1)``): at the special
points of its ``pow`` kernel (``x ** -0.5`` taken as ``1 / sqrt(x)``: -inf at -0.0 and NaN at -inf, where the C
library's pow gives +inf and 0; ``x ** 0.5`` as ``sqrt``), for exponents whose ``e - 1`` is and is not one of them,
in float32 and float64, first order and under create_graph (the recorded formula)."""

import numpy as np
import pytest
import torch

import ember

BASES = [-np.inf, -2.0, -1.0, -0.0, 0.0, 1e-30, 0.25, 1.0, 3.0, 1e30, np.inf, np.nan]
EXPONENTS = [0.5, 1.5, -0.5, 0.25, 2.5, -1.5, 2, 3, -1, 1, 0]


def _gradients(m, dtype, e, create_graph):
    x = m.tensor(BASES, dtype=getattr(m, dtype), requires_grad=True)
    (g,) = m.autograd.grad((x ** e).sum(), x, create_graph=create_graph)
    return g.detach().double().numpy()


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("e", EXPONENTS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_gradient_of_a_number_power_is_pytorchs_at_its_special_points(dtype, e, create_graph):
    got, want = _gradients(ember, dtype, e, create_graph), _gradients(torch, dtype, e, create_graph)
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13, atol=0, err_msg=str(BASES))
    signed = ~np.isnan(want)  # (-0.0's and -inf's signs; a NaN's sign bit is no value's)
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]))


@pytest.mark.parametrize("e", EXPONENTS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_number_power_is_pytorchs_at_its_special_points(dtype, e):
    """The values themselves: x ** -0.5 is NaN at -inf and -inf at -0.0, as PyTorch's 1 / sqrt(x)."""
    got, want = (m.tensor(BASES, dtype=getattr(m, dtype)) ** e for m in (ember, torch))
    got, want = got.double().numpy(), want.double().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13, atol=0)
    signed = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]))

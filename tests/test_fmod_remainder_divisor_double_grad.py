"""fmod / remainder (out of place and in place) with a divisor tensor that requires grad, under create_graph: the
divisor's gradient is PyTorch's recorded ``-grad * self.div(other, rounding_mode=...)`` ("trunc" for fmod, "floor"
for remainder), so it requires grad (its second derivative zero through the rounded quotient), as PyTorch's."""
import numpy as np
import pytest
import torch

import ember


def gradients(m, op):
    x = m.tensor([5.0, -7.5, 3.0, -4.0], dtype=m.float64, requires_grad=True)
    o = m.tensor([2.0, 2.0, -1.5, -3.0], dtype=m.float64, requires_grad=True)
    r = getattr(x * 1, op)(o)  # (in place on a non-leaf for the ``_`` forms)
    w = m.tensor([1.0, -2.0, 0.5, 3.0], dtype=m.float64, requires_grad=True)
    gx, go = m.autograd.grad((r * w).sum(), (x, o), create_graph=True)
    second = m.autograd.grad(go.sum(), (x, o, w), allow_unused=True)
    return gx, go, second


@pytest.mark.parametrize("op", ["fmod", "fmod_", "remainder", "remainder_"])
def test_divisor_gradient_is_recorded_as_pytorchs(op):
    (gx, go, second), (tgx, tgo, tsecond) = gradients(ember, op), gradients(torch, op)
    assert go.requires_grad == tgo.requires_grad is True
    assert gx.requires_grad == tgx.requires_grad
    np.testing.assert_array_equal(gx.detach().numpy(), tgx.detach().numpy())
    np.testing.assert_array_equal(go.detach().numpy(), tgo.detach().numpy())
    for got, want in zip(second, tsecond):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_divisor_gradient_with_a_constant_gradient_requires_grad(op):
    for m in (ember, torch):
        x = m.tensor([5.0, -7.5], requires_grad=True)
        o = m.tensor([2.0, -2.0], requires_grad=True)
        y = x * 1
        getattr(y, op + "_")(o)
        _, go = m.autograd.grad(y.sum(), (x, o), create_graph=True)
        assert go.requires_grad, m.__name__

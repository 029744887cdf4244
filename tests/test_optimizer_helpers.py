"""The update helpers of ``ember/optim/optimizer.py`` at their boundaries: ``add_scaled`` at every scale its
callers can pass (1, where it adds without a product, and 2, 0, -1 and a fraction, which the others take) on the
NumPy and compiled paths, ``decayed_grad_into`` for each combination of weight decay and maximize, and the same
scales reached through options PyTorch accepts (SGD's ``dampening`` of -1 makes the momentum buffer add twice the
gradient, 1 adds none), trajectories against PyTorch's."""

import numpy as np
import pytest
import torch

import ember
from ember.optim.optimizer import add_scaled, decayed_grad_into


@pytest.mark.parametrize("alpha", [1, 2, 0, -1, 0.375, -2.5])
@pytest.mark.parametrize("size", [7, 1 << 15])  # (below and above the size at which a compiled kernel may run)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_scaled_is_y_plus_alpha_x(alpha, size, dtype):
    rng = np.random.default_rng(3)
    y, x = rng.standard_normal(size).astype(dtype), rng.standard_normal(size).astype(dtype)
    expected = y + np.multiply(x, alpha, dtype=dtype)
    add_scaled(y, x, alpha, np.empty_like(x))
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("weight_decay", [0, 0.25])
@pytest.mark.parametrize("maximize", [False, True])
def test_decayed_grad_into(weight_decay, maximize):
    p, g = np.array([1.0, -2.0, 4.0]), np.array([0.5, 3.0, -1.0])
    out = np.full(3, np.nan)
    result = decayed_grad_into(p, g, weight_decay, maximize, out)
    assert result is out
    np.testing.assert_array_equal(out, (-g if maximize else g) + weight_decay * p)


def sgd_trajectory(fw, **options):
    p = fw.tensor(np.linspace(-1, 1, 4096, dtype=np.float32), requires_grad=True)
    opt = fw.optim.SGD([p], lr=0.1, momentum=0.9, **options)
    for i in range(3):
        opt.zero_grad()
        ((p * p).sum() * (i + 1)).backward()
        opt.step()
    return p.detach().numpy().copy()


@pytest.mark.parametrize("foreach", [None, False])
@pytest.mark.parametrize("dampening", [-1, 0.5, 1, 2])
def test_sgd_dampening_scales_as_pytorchs(dampening, foreach):
    expected = sgd_trajectory(torch, dampening=dampening, foreach=foreach)
    np.testing.assert_allclose(sgd_trajectory(ember, dampening=dampening, foreach=foreach), expected,
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lr", [0.0, -0.0, -1e-12])
def test_learning_rate_boundary_as_pytorchs(lr):
    def outcome(fw):
        try:
            fw.optim.Adam([fw.zeros(1, requires_grad=True)], lr=lr)
        except ValueError as error:
            return str(error)
        return None

    assert outcome(ember) == outcome(torch)

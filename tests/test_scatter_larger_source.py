"""scatter with a source larger than its index: PyTorch writes the source's index-shaped leading part, and its
backward refuses the index-shaped gradient it computes for the source (the engine's shape check)."""

import numpy as np
import pytest
from oracle import assert_same_outcome, outcomes

import ember


@pytest.mark.parametrize("index_shape,src_shape", [((2, 3), (4, 5)), ((1, 5), (4, 5)), ((2, 3), (2, 5)), ((2, 3), (2, 3))])
def test_forward_values_and_backward(index_shape, src_shape):
    def run(m, backward):
        x = m.zeros(3, 5, dtype=m.float64, requires_grad=True)
        src = m.tensor(np.arange(float(np.prod(src_shape))).reshape(src_shape), requires_grad=True)
        idx = m.tensor(np.arange(np.prod(index_shape)).reshape(index_shape) % 3)
        y = x.scatter(0, idx, src)
        if not backward:
            return y
        (y * m.arange(15.0).reshape(3, 5)).sum().backward()
        return src.grad

    assert_same_outcome(lambda m: run(m, False))
    assert_same_outcome(lambda m: run(m, True))


def test_source_without_gradient_backpropagates_to_self():
    (got, _), (want, _) = outcomes(lambda m: _self_grad(m))
    np.testing.assert_allclose(got.numpy(), want.numpy())


def _self_grad(m):
    x = m.ones(3, 5, dtype=m.float64, requires_grad=True)
    src = m.tensor(np.arange(20.0).reshape(4, 5))
    x.scatter(0, m.tensor([[0, 1, 2]]), src).sum().backward()
    return x.grad


def test_larger_source_values_without_grad_mode():
    src = ember.arange(20.0).reshape(4, 5).requires_grad_()
    with ember.no_grad():
        y = ember.zeros(3, 5).scatter(0, ember.tensor([[0, 1, 2]]), src)
    assert y.tolist()[0][:3] == [0.0, 0.0, 0.0] and y.tolist()[1][1] == 1.0

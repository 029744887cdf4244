"""In-place activations' graph nodes against PyTorch's: the node the input takes after the in-place op (PyTorch
names the in-place form of an activation that reads its result ``...Backward1``: LeakyReluBackward1,
EluBackward1, ..., and threshold_'s ThresholdBackward1), its gradient, and for the forms that read the result, its
refusal when the result is changed again before backward."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

X = np.array([-2.0, -0.5, 0.25, 1.5, 3.0])


def _F(m):
    return m.nn.functional


CASES = {
    "relu_": lambda m, x: m.relu_(x),
    "relu inplace": lambda m, x: _F(m).relu(x, inplace=True),
    "leaky_relu_": lambda m, x: _F(m).leaky_relu_(x, 0.2),
    "leaky_relu inplace": lambda m, x: _F(m).leaky_relu(x, 0.2, inplace=True),
    "elu_": lambda m, x: _F(m).elu_(x, 1.5),
    "elu inplace": lambda m, x: _F(m).elu(x, 0.5, inplace=True),
    "selu_": lambda m, x: _F(m).selu_(x),
    "celu_": lambda m, x: _F(m).celu_(x, 2.0),
    "rrelu_ eval": lambda m, x: _F(m).rrelu_(x, 0.1, 0.3, training=False),
    "hardtanh_": lambda m, x: _F(m).hardtanh_(x, -1.0, 2.0),
    "relu6 inplace": lambda m, x: _F(m).relu6(x, inplace=True),
    "threshold_": lambda m, x: _F(m).threshold_(x, 0.5, -1.0),
    "threshold inplace": lambda m, x: _F(m).threshold(x, 0.5, -1.0, inplace=True),
    "silu inplace": lambda m, x: _F(m).silu(x, inplace=True),
    "hardswish inplace": lambda m, x: _F(m).hardswish(x, inplace=True),
    "hardsigmoid inplace": lambda m, x: _F(m).hardsigmoid(x, inplace=True),
}


def _run(m, case, change_again):
    a = m.tensor(X, requires_grad=True)
    x = a * 1.0  # (a non-leaf: an in-place op on a leaf that requires grad is refused)
    y = CASES[case](m, x)
    names = (type(y.grad_fn).__name__, y.grad_fn.name(), y is x)
    if change_again:
        with m.no_grad():
            x.mul_(2.0)
    try:
        (g,) = m.autograd.grad(y, a, m.tensor(np.linspace(0.5, 1.5, len(X))))
    except RuntimeError as err:
        return names, "RuntimeError", str(err).split(";")[0][:120]
    return names, g.numpy()


@pytest.mark.parametrize("case", list(CASES))
def test_inplace_activation_node_and_gradient_are_pytorchs(case):
    ours, theirs = _run(ember, case, False), _run(torch, case, False)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_inplace_activation_result_changed_again_is_refused_where_pytorchs_is(case):
    ours, theirs = _run(ember, case, True), _run(torch, case, True)
    assert ours[0] == theirs[0]
    assert (len(ours) == 3) == (len(theirs) == 3)  # refused where PyTorch refuses
    if len(theirs) == 2:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-12)

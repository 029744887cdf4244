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


def _double_backward(m, case):
    """The gradient of an in-place activation under create_graph: its node's name, the names of the nodes its edges
    reach (None for an edge that carries nothing), and the second derivatives with respect to the input and to the
    incoming gradient."""
    a = m.tensor(X, requires_grad=True)
    y = CASES[case](m, a.clone())  # (a clone's gradient is the incoming one: no node between)
    go = m.tensor(np.linspace(0.5, 1.5, len(X)), requires_grad=True)
    (g,) = m.autograd.grad(y, a, go, create_graph=True)
    edges = [None if fn is None else type(fn).__name__ for fn, _ in g.grad_fn.next_functions]
    second = m.autograd.grad((g * g).sum(), [a, go], allow_unused=True)
    return type(g.grad_fn).__name__, edges, [None if s is None else s.detach().numpy() for s in second]


# the forms that read their result: PyTorch's formula reads it there (its edge is the in-place node) for the
# piecewise-linear ones; a smooth one's (elu_ and kin) is recomputed from the input it overwrote (ember's edge is the
# input's clone), the name and values as PyTorch's
_READS_RESULT = ("leaky_relu_", "leaky_relu inplace", "rrelu_ eval")


# (silu's PyTorch derivative is composed of several ops, hardsigmoid's has none: not one node to compare)
@pytest.mark.parametrize("case", [c for c in CASES if c not in ("silu inplace", "hardsigmoid inplace")])
def test_inplace_activation_double_backward_node_is_pytorchs(case):
    ours, theirs = _double_backward(ember, case), _double_backward(torch, case)
    assert ours[0] == theirs[0]  # (EluBackwardBackward0, LeakyReluBackwardBackward0 ... not a Mul)
    if case in _READS_RESULT or not case.startswith(("elu", "selu", "celu")):
        assert ours[1] == theirs[1]
    for o, t in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)

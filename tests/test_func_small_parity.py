"""``torch.func`` against PyTorch where small differences were found: ``vjp_fn(..., retain_graph=False)`` frees the
graph even when its results are recorded (a second call raises PyTorch's error), and ``linearize`` returns the
leaves of ``func``'s output that are not tensors as they are (PyTorch traces ``func``: they are constants)."""

import warnings

import pytest
import torch

import ember
from tests.autodiff_oracle import assert_same


def test_vjp_fn_retain_graph_false_frees_the_graph_when_recording():
    """The input requires grad, so the gradient is recorded (create_graph); retain_graph=False still frees."""
    messages = []
    for m in (torch, ember):
        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        _, vjp_fn = m.func.vjp(lambda t: (t * t).sum(), x)
        (g,) = vjp_fn(m.tensor(1.0, dtype=m.float64), retain_graph=False)
        assert g.requires_grad
        with pytest.raises(RuntimeError) as err:
            vjp_fn(m.tensor(1.0, dtype=m.float64), retain_graph=False)
        messages.append(str(err.value))
    assert messages[1] == messages[0]
    assert messages[0].startswith("Trying to backward through the graph a second time")


def test_vjp_fn_keeps_the_graph_by_default_when_recording():
    for m in (torch, ember):
        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        _, vjp_fn = m.func.vjp(lambda t: (t * t).sum(), x)
        first, second = vjp_fn(m.tensor(1.0, dtype=m.float64)), vjp_fn(m.tensor(1.0, dtype=m.float64))
        assert first[0].tolist() == second[0].tolist() == [2.0, 4.0, 6.0]


def _linearized(m, func):
    with warnings.catch_warnings():  # (PyTorch's tracing of a constant output warns from torch.fx)
        warnings.simplefilter("ignore")
        output, jvp_fn = m.func.linearize(func, m.tensor([1.0, 2.0, 3.0], dtype=m.float64))
        return output, jvp_fn(m.tensor([0.5, -1.0, 2.0], dtype=m.float64))


@pytest.mark.parametrize("func", [
    lambda t: 3.0,
    lambda t: "name",
    lambda t: None,
    lambda t: (),
    lambda t: (t.sin().sum(), 2.0),
    lambda t: {"a": t * 2, "b": 1},
    lambda t: [t.exp(), None],
], ids=["number", "string", "none", "empty", "tensor-and-number", "dict", "list-with-none"])
def test_linearize_returns_constant_leaves_as_they_are(func):
    theirs, mine = _linearized(torch, func), _linearized(ember, func)
    assert_same(mine, theirs)


def _grad_with_a_leaf_made_inside(m, x):
    def f(t):
        w = m.ones(3, dtype=m.float64, requires_grad=True)  # at grad's level in PyTorch: none of the caller's
        return (t * w * t).sum()

    return m.func.grad(f)(x)


@pytest.mark.parametrize("outer", [False, True], ids=["input-needs-no-grad", "input-requires-grad"])
def test_a_leaf_made_inside_grads_function_is_not_the_callers(outer):
    """The gradient 2 * t * w requires grad outside only through an input that does (PyTorch's)."""
    theirs = _grad_with_a_leaf_made_inside(torch, torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64,
                                                               requires_grad=outer))
    mine = _grad_with_a_leaf_made_inside(ember, ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64,
                                                             requires_grad=outer))
    assert theirs.requires_grad is outer
    assert_same(mine, theirs)


def test_a_caller_leaf_told_to_require_grad_before_the_transform_stays_the_callers():
    for m in (torch, ember):
        w = m.ones(3, dtype=m.float64).requires_grad_()
        g = m.func.grad(lambda t, w=w: (t * w * t).sum())(m.tensor([1.0, 2.0, 3.0], dtype=m.float64))
        assert g.requires_grad
        g.sum().backward()
        assert w.grad.tolist() == [2.0, 4.0, 6.0]

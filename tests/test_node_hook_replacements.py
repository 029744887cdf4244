"""What a node's post-hook (``grad_fn.register_hook``) or pre-hook (``register_prehook``) may return in place of
its gradients, against PyTorch: a gradient of another size or dtype is PyTorch's error naming the hook, one of the
same kind replaces the gradient, None keeps it, and a tensor where there is no gradient (an input that needs none, an
output the backward did not reach) is PyTorch's error; with and without create_graph."""

from __future__ import annotations

import pytest
import torch

import ember


def _gradient_or_error(m, loss, a, create_graph):
    try:
        (grad,) = m.autograd.grad(loss, a, create_graph=create_graph)
    except RuntimeError as err:
        return "error", str(err)
    return "computed", grad.detach().tolist()


def _outcome(m, replacement, create_graph):
    a = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = m.tensor([[0.5, -1.0, 2.0], [1.5, 3.0, -2.0]])
    y = a * b

    def hook(grad_inputs, grad_outputs):
        g = grad_inputs[0]
        return {"other size": (m.ones(3, 2), None), "other dtype": (g.double(), None), "scaled": (g * 3, None),
                "kept": (None, None), "for the input without one": (g, m.ones(2, 3))}[replacement]

    y.grad_fn.register_hook(hook)
    return _gradient_or_error(m, (y * y).sum(), a, create_graph)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("replacement", ["other size", "other dtype", "scaled", "kept", "for the input without one"])
def test_a_node_hooks_replacement_gradients_as_pytorchs(replacement, create_graph):
    assert _outcome(ember, replacement, create_graph) == _outcome(torch, replacement, create_graph)


def _pre_hook_outcome(m, replacement, create_graph):
    """A pre-hook (``grad_fn.register_prehook``) of unbind's node, backward from its first output only: the second
    output's gradient is None."""
    a = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    first, _ = a.unbind(0)

    def hook(grad_outputs):
        g = grad_outputs[0]
        return {"other size": (m.ones(5), None), "other dtype": (g.double(), None), "scaled": (g * 3, None),
                "kept": (None, None), "for the output without one": (g, m.ones(3))}[replacement]

    first.grad_fn.register_prehook(hook)
    return _gradient_or_error(m, (first * first).sum(), a, create_graph)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("replacement", ["other size", "other dtype", "scaled", "kept", "for the output without one"])
def test_a_node_pre_hooks_replacement_gradients_as_pytorchs(replacement, create_graph):
    assert _pre_hook_outcome(ember, replacement, create_graph) == _pre_hook_outcome(torch, replacement, create_graph)

"""A post-hook on nll_loss's node (cross_entropy's last node, or nll_loss after log_softmax) sees the input gradient
before log_softmax's backward does, and may change it: in place, by a returned replacement, or leave it. ember's
log_softmax backward takes a shortcut when the gradient reaching it is nll_loss's untouched (zero but the picked
entries, which it then reads from a note instead of the array); with a hook on the node it must read the array
itself. Values and gradients against PyTorch, for the 2-D input that takes the shortcut and the forms beside it."""

import numpy as np
import pytest
import torch

import ember

X = np.random.default_rng(0).standard_normal((4, 5))
T = [1, 0, 4, 2]

HOOKS = {
    "doubled in place": lambda gi, go: [gi[0].mul_(2), None][1],  # (returns None: the gradient as changed)
    "one entry changed in place": lambda gi, go: [gi[0][:, 3].add_(0.5), None][1],
    "replaced": lambda gi, go: (gi[0] * 3 + 0.25,),
    "read only": lambda gi, go: None,
}
LOSSES = {
    "cross_entropy": lambda m, x, t: m.nn.functional.cross_entropy(x, t),
    "cross_entropy(sum, weight)": lambda m, x, t: m.nn.functional.cross_entropy(
        x, t, weight=m.tensor([1.0, 2.0, 0.5, 1.5, 1.0], dtype=x.dtype), reduction="sum"),
    "nll_loss(log_softmax)": lambda m, x, t: m.nn.functional.nll_loss(m.log_softmax(x, 1), t, ignore_index=2),
    "cross_entropy of (N, C, 1)": lambda m, x, t: m.nn.functional.cross_entropy(x[:, :, None], t[:, None]),
}


def _run(m, loss, hook, dtype):
    x = m.tensor(X, dtype=getattr(m, dtype), requires_grad=True)
    y = LOSSES[loss](m, x, m.tensor(T))
    node = y.grad_fn
    while "Nll" not in node.name():  # (the class loss's own node, under any reduction's)
        node = node.next_functions[0][0]
    node.register_hook(HOOKS[hook])
    y.backward()
    return y.item(), x.grad.double().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("hook", list(HOOKS))
@pytest.mark.parametrize("loss", list(LOSSES))
def test_a_hook_on_the_nll_node_changes_what_log_softmax_backward_reads(loss, hook, dtype):
    (got_y, got_g), (want_y, want_g) = _run(ember, loss, hook, dtype), _run(torch, loss, hook, dtype)
    np.testing.assert_allclose(got_y, want_y, rtol=1e-6)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-5, atol=1e-7)


# (input shape, target shape): each rank nll_loss takes, with an empty batch, no classes or an empty spatial extent
SHAPES = [((5,), ()), ((3, 5), (3,)), ((0, 5), (0,)), ((3, 0), (3,)), ((2, 5, 3), (2, 3)), ((2, 5, 0), (2, 0)),
          ((0, 5, 3), (0, 3)), ((2, 5, 3, 2), (2, 3, 2)), ((2, 5, 0, 2), (2, 0, 2)), ((2, 5, 2, 1, 3), (2, 2, 1, 3)),
          ((2, 5, 2, 0, 3), (2, 2, 0, 3)), ((0, 5, 2, 1), (0, 2, 1))]


def _what_the_node_hook_sees(m, shape, target_shape, reduction):
    """The name of nll_loss's node and the shapes of the gradients its post-hook is given (PyTorch's kernel shapes:
    an input of another rank is viewed as (N, C, 1, -1), or (N, C, 0, 0) when empty), and the input's gradient."""
    x = m.zeros(shape, requires_grad=True)
    c = shape[1] if len(shape) > 1 else shape[0]
    t = m.zeros(target_shape, dtype=m.int64) if c else m.full(target_shape, -100, dtype=m.int64)
    y = m.nn.functional.nll_loss(x, t, reduction=reduction)
    node = y.grad_fn
    while "Nll" not in node.name():
        node = node.next_functions[0][0]
    seen = []
    node.register_hook(lambda gi, go: seen.append((node.name(), [tuple(g.shape) for g in gi if g is not None],
                                                   [tuple(g.shape) for g in go])))
    y.sum().backward()
    return seen, tuple(x.grad.shape)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape,target_shape", SHAPES)
def test_the_nll_nodes_gradients_have_pytorchs_kernel_shapes(shape, target_shape, reduction):
    assert _what_the_node_hook_sees(ember, shape, target_shape, reduction) == \
        _what_the_node_hook_sees(torch, shape, target_shape, reduction)

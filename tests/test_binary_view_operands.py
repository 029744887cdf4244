"""A view whose base changed in place after the view was made, as either operand of add/sub/mul/div (each form),
against PyTorch: the gradients of the leaves and of what the base was changed by, and the node the view's edge
leads to.

Such a view's ``grad_fn`` is stale: PyTorch regenerates it from the base's history (AsStridedBackward0 over the
in-place op's node), so the gradient reaches what changed the base. ember's fast path for two operands of one float
dtype (``graph.apply_same``) writes each operand's edge inline and leaves a view to ``input_edge``, which
regenerates it; an operand that is not a view takes its own ``grad_fn``. A slip there on one side only (the second
operand's) left every test with the view on the left passing."""

import numpy as np
import pytest
import torch

import ember

OPS = {
    "add": lambda m, a, b: m.add(a, b), "sub": lambda m, a, b: m.sub(a, b), "mul": lambda m, a, b: m.mul(a, b),
    "div": lambda m, a, b: m.div(a, b), "+": lambda m, a, b: a + b, "*": lambda m, a, b: a * b,
    "/": lambda m, a, b: a / b, "add alpha": lambda m, a, b: m.add(a, b, alpha=2), "method sub": lambda m, a, b: a.sub(b),
}


def _stale_view(m, leaf, w, how):
    """A view of a non-leaf base, then the base changed in place (by ``w``) in one of three ways."""
    base = leaf * 1
    v = base[1:3]
    if how == "base mul_":
        base.mul_(w)
    elif how == "other view copy_":
        base[2:].copy_(w[:2])
    elif how == "view of the view":
        v = v[:]
        base.add_(w)
    else:  # "unchanged": the view's own grad_fn is current
        pass
    return v


def _run(m, op, side, how, dtype):
    dt = getattr(m, dtype)
    leaf = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=dt, requires_grad=True)
    w = m.tensor([1.5, -2.0, 0.5, 3.0], dtype=dt, requires_grad=True)
    other = m.tensor([0.5, 4.0], dtype=dt, requires_grad=True)
    v = _stale_view(m, leaf, w, how)
    a, b = (v, other) if side == "left" else (other, v)
    y = OPS[op](m, a, b)
    edge = y.grad_fn.next_functions[0 if side == "left" else 1][0]
    y.backward(m.tensor([1.0, -3.0], dtype=dt))
    return edge.name(), [t.grad for t in (leaf, w, other)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("how", ["base mul_", "other view copy_", "view of the view", "unchanged"])
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_view_operand_after_its_base_changed_as_torch(op, side, how, dtype):
    e_edge, e_grads = _run(ember, op, side, how, dtype)
    t_edge, t_grads = _run(torch, op, side, how, dtype)
    assert e_edge == t_edge
    for e, t in zip(e_grads, t_grads):
        assert (e is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)

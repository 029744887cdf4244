"""scatter, masked_scatter, index_put and index_fill (out of place and in place, on a tensor with history) record
PyTorch's one node: its first edge the input's own (no CloneBackward0, nor ExpandBackward0 for a broadcast
masked_scatter), its second the source's own (none for a number); values and gradients as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import assert_close, assert_same_grads, node_names

import ember

X = np.random.default_rng(0).standard_normal((4, 5))
S = np.random.default_rng(1).standard_normal((2, 5))
MASK = np.array([True, False, True, True, False])

CASES = {
    "scatter": lambda m, y, s, i: y.scatter(0, i, s),
    "scatter_number": lambda m, y, s, i: y.scatter(0, i, 2.0),
    "scatter_": lambda m, y, s, i: y.scatter_(0, i, s),
    "scatter_number_": lambda m, y, s, i: y.scatter_(0, i, 2.0),
    "scatter_add_": lambda m, y, s, i: y.scatter_add_(0, i, s),
    "masked_scatter": lambda m, y, s, i: y.masked_scatter(y > 0, s.repeat(2, 1)),
    "masked_scatter_": lambda m, y, s, i: y.masked_scatter_(y > 0, s.repeat(2, 1)),
    "masked_scatter_broadcast": lambda m, y, s, i: y[0].masked_scatter(m.tensor(np.ones((3, 5), bool)), s.repeat(2, 1)),
    "masked_scatter_larger_source": lambda m, y, s, i: y.masked_scatter(m.tensor(MASK), s.repeat(4, 1)),
    "index_put": lambda m, y, s, i: y.index_put((m.tensor([0, 2]),), s),
    "index_put_": lambda m, y, s, i: y.index_put_((m.tensor([0, 2]),), s),
    "index_put_broadcast_": lambda m, y, s, i: y.index_put_((m.tensor([0, 2]),), s[0]),
    "index_put_accumulate": lambda m, y, s, i: y.index_put((m.tensor([0, 0]),), s, accumulate=True),
    "index_fill_number": lambda m, y, s, i: y.index_fill(0, m.tensor([0, 2]), 1.0),
    "index_fill_number_": lambda m, y, s, i: y.index_fill_(0, m.tensor([0, 2]), 1.0),
    "index_fill_tensor": lambda m, y, s, i: y.index_fill(1, m.tensor([1]), s.sum()),
    "index_add_": lambda m, y, s, i: y.index_add_(0, m.tensor([0, 2]), s),
    "index_copy_": lambda m, y, s, i: y.index_copy_(0, m.tensor([1, 3]), s),
    "masked_fill_": lambda m, y, s, i: y.masked_fill_(y > 0, s.sum()),
}


def _run(m, name):
    x = m.tensor(X, requires_grad=True)
    s = m.tensor(S, requires_grad=True)
    idx = m.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 0, 1]])
    out = CASES[name](m, x * 2, s, idx)
    return out, (x, s)


@pytest.mark.parametrize("name", CASES)
def test_index_write_graph_values_and_gradients_as_pytorch(name):
    (eo, e_in), (to, t_in) = _run(ember, name), _run(torch, name)
    assert node_names(eo.grad_fn, 3) == node_names(to.grad_fn, 3)
    assert_close(eo, to)
    g = np.cos(np.arange(to.numel(), dtype=np.float64)).reshape(tuple(to.shape))
    eo.backward(ember.tensor(g, dtype=eo.dtype))
    to.backward(torch.tensor(g, dtype=to.dtype))
    assert_same_grads(e_in, t_in)


@pytest.mark.parametrize("name", ["scatter", "masked_scatter_broadcast", "index_put_", "index_fill_tensor"])
def test_index_write_second_derivatives_as_pytorch(name):
    out = []
    for m in (ember, torch):
        o, (x, s) = _run(m, name)
        gx, gs = m.autograd.grad((o * o).sum(), (x, s), create_graph=True)
        out.append(m.autograd.grad(gx.sum() + (gs * gs).sum(), (x, s)))
    for e, t in zip(*out):
        assert_close(e, t)


def test_number_written_leaves_no_edge_for_it():
    y = ember.randn(3, 4, requires_grad=True) * 1
    assert len(y.scatter(0, ember.zeros(1, 4, dtype=ember.long), 1.0).grad_fn.next_functions) == 1
    assert len(y.index_fill(0, ember.tensor([1]), 1.0).grad_fn.next_functions) == 1


@pytest.mark.parametrize("write", [
    lambda m, y, s: y.scatter(0, m.zeros(1, 4, dtype=m.long), s),
    lambda m, y, s: y.masked_scatter(y > 0, s.repeat(3, 1)),
    lambda m, y, s: y.index_put((m.tensor([0, 2]),), s),
    lambda m, y, s: y.index_put((m.tensor([0, 2]),), s.sum()),
], ids=["scatter", "masked_scatter", "index_put", "index_put_0d"])
def test_a_tensor_written_that_needs_no_gradient_keeps_its_none_edge(write):
    # (PyTorch's node has an edge for every tensor input, None where it needs no gradient; a number has none)
    names = []
    for m in (ember, torch):
        y = m.tensor(X[:3, :4], requires_grad=True) * 1
        out = write(m, y, m.tensor(S[:1, :4]))
        names.append([None if f is None else type(f).__name__ for f, _ in out.grad_fn.next_functions])
    assert names[0] == names[1]

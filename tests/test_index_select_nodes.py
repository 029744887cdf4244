"""``index_select`` and ``repeat_interleave`` recorded as PyTorch's: IndexSelectBackward0 (with its saved ``dim``,
``index`` and input sizes), and for an int ``repeats`` PyTorch's composite (UnsqueezeBackward0, ExpandBackward0,
CloneBackward0, ViewBackward0); gradients and errors as PyTorch's."""

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_same_error

CALLS = {
    "index_select_0": lambda m, x: x.index_select(0, m.tensor([1, 0, 1])),
    "index_select_1": lambda m, x: m.index_select(x, 1, m.tensor([2, 2, 0, 1])),
    "index_select_0d_index": lambda m, x: m.index_select(x, -1, m.tensor(1)),
    "repeat_int_dim0": lambda m, x: x.repeat_interleave(2, dim=0),
    "repeat_int_neg_dim": lambda m, x: x.repeat_interleave(3, dim=-1),
    "repeat_int_flat": lambda m, x: x.repeat_interleave(2),
    "repeat_int_transposed": lambda m, x: x.t().repeat_interleave(2, dim=0),
    "repeat_zero": lambda m, x: x.repeat_interleave(0, dim=1),
    "repeat_int_output_size": lambda m, x: x.repeat_interleave(2, dim=0, output_size=4),
    "repeat_tensor": lambda m, x: x.repeat_interleave(m.tensor([1, 2]), dim=0),
    "repeat_one_count": lambda m, x: x.repeat_interleave(m.tensor([2]), dim=1),
    "repeat_0d_count": lambda m, x: x.repeat_interleave(m.tensor(2), dim=1),
}


def _chain(node):
    names = []
    while node is not None:
        names.append(node.name().replace("torch::autograd::", ""))
        node = node.next_functions[0][0] if node.next_functions else None
    return names


@pytest.mark.parametrize("name", CALLS)
def test_recorded_as_pytorch(name):
    results = {}
    for m in (ember, torch):
        x = m.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        y = CALLS[name](m, x)
        (y * m.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        results[m] = (_chain(y.grad_fn), y.detach().numpy().tolist(), y.stride(), x.grad.numpy().tolist())
    assert results[ember] == results[torch]


def test_index_selects_saved_values():
    nodes = {}
    for m in (ember, torch):
        x = m.ones(2, 3, requires_grad=True)
        nodes[m] = m.index_select(x, 1, m.tensor([0, 2, 2])).grad_fn
    got, want = nodes[ember], nodes[torch]
    assert got._saved_dim == want._saved_dim
    assert got._saved_index.tolist() == want._saved_index.tolist()
    assert tuple(got._saved_self_sym_sizes) == tuple(want._saved_self_sym_sizes)


def test_a_modified_index_is_noticed():
    def run(m):
        x, index = m.ones(2, 3, requires_grad=True), m.tensor([0, 2])
        y = x.index_select(1, index)
        index.add_(0)
        y.sum().backward()
    assert_same_error(run)


@pytest.mark.parametrize("call", [
    lambda m: m.arange(6.0).reshape(2, 3).repeat_interleave(-1, dim=0),
    lambda m: m.arange(6.0).reshape(2, 3).repeat_interleave(2, dim=0, output_size=5),
    lambda m: m.tensor(5.0).repeat_interleave(3, dim=0),
    lambda m: m.arange(6.0).reshape(2, 3).repeat_interleave(2, dim=2),
])
def test_errors_as_pytorch(call):
    assert_same_error(call)

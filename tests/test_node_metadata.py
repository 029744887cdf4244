"""``Node.metadata``, as PyTorch's: a dict per graph node (an op's node, a leaf's AccumulateGrad) that keeps what the
caller puts in it for the node's lifetime, the same dict each time it is read."""

from __future__ import annotations

import torch

import ember


def _use(m):
    x = m.ones(2, requires_grad=True)
    y = (x * 2).sum()
    seen = []
    for node in (y.grad_fn, y.grad_fn.next_functions[0][0], y.grad_fn.next_functions[0][0].next_functions[0][0]):
        first = node.metadata
        seen.append((type(first).__name__, dict(first)))
        first["name"] = node.name()
        seen.append((node.metadata is first, dict(node.metadata)))
    return seen


def test_node_metadata_as_pytorch():
    assert _use(ember) == _use(torch)

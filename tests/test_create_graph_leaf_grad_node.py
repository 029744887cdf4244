"""A leaf's ``.grad`` after ``backward(create_graph=True)`` as PyTorch's AccumulateGrad stores it: the first
gradient a copy laid out as the leaf (``CopyBackwards``, edges: none and the gradient's node), a second one added
out of place (``AddBackward0`` of the first and the new gradient), a constant gradient no node, a leaf that is not
dense a contiguous clone; values, strides and the gradient of the gradient unchanged."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import ember

sys.path.insert(0, str(Path(__file__).parent))
from oracle import node_names  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")


def _run(m, leaf, times, fn):
    x = leaf(m).requires_grad_()
    for _ in range(times):
        fn(x).sum().backward(create_graph=True)
    g = x.grad
    seen = (node_names(g.grad_fn, 1) if g.grad_fn is not None else None, type(g.grad_fn).__name__,
            g.requires_grad, g.stride(), g.tolist())
    if g.requires_grad:
        x.grad = None
        (g * g).sum().backward()
        seen += (x.grad.tolist(),)
    return seen


LEAVES = {"row": lambda m: m.tensor([1.0, 2.0, 3.0]), "transposed": lambda m: m.tensor([[1.0, 2.0, 3.0]] * 2).t(),
          "strided": lambda m: m.arange(18.0).reshape(3, 6)[:, ::2]}  # (not dense: a contiguous clone)
FNS = {"cube": lambda x: x ** 3, "sin": lambda x: x.sin() * x, "constant": lambda x: x * 3,
       "constant_through_t": lambda x: (x.mT.contiguous() * 3).mT if x.dim() == 2 else x * 3}  # (transposed)


@pytest.mark.parametrize("times", [1, 2])
@pytest.mark.parametrize("fn", list(FNS))
@pytest.mark.parametrize("leaf", list(LEAVES))
def test_create_graph_leaf_grad_node_as_pytorchs(leaf, fn, times):
    got, want = (_run(m, LEAVES[leaf], times, FNS[fn]) for m in (ember, torch))
    assert got[:4] == want[:4] and len(got) == len(want)
    for a, b in zip(got[4:], want[4:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("times", [1, 2])
def test_create_graph_retained_non_leaf_grad_is_a_clone_as_pytorchs(times):
    # PyTorch's retain_grad hook clones the first gradient (CloneBackward0), where a leaf's AccumulateGrad copies
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        for _ in range(times):
            (y * y).sum().backward(create_graph=True)
        return node_names(y.grad.grad_fn, 1), y.grad.tolist()

    assert run(ember) == run(torch)

"""Under create_graph, the gradients of a stack of matrices times one matrix or vector (``x @ w.t()``,
``x @ v``) as PyTorch records them: its matmul folds the stack into one matrix, so each gradient is mm's or mv's
of the folded output gradient (``ViewBackward0`` over ``MmBackward0``; ``TBackward0`` over ``MmBackward0`` for a
column-major operand, whether or not the other operand's gradient is computed), and its derivatives of every
order are PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def _chain(node, forward: set, depth: int = 0, out: list | None = None) -> list:
    """The names of a gradient's recorded nodes, down to the forward graph (``forward``: its nodes, named only:
    ember records the forward product as one node, see docs/api.md)."""
    out = [] if out is None else out
    if node is None:
        return out
    if node not in forward and node.name() in ("ViewBackward0", "UnsafeViewBackward0") and all(
            child in forward for child, _ in node.next_functions):
        # the stack folded into one matrix: a node of PyTorch's forward graph (its matmul records view, mm and
        # view), which ember's one forward node makes again in the gradient's graph
        node = next(iter(forward))
    out.append("  " * depth + (node.name() if node not in forward else "(forward)"))
    if node not in forward:
        for child, _ in node.next_functions:
            _chain(child, forward, depth + 1, out)
    return out


def _nodes(node, seen: set) -> set:
    if node is not None and node not in seen:
        seen.add(node)
        for child, _ in node.next_functions:
            _nodes(child, seen)
    return seen


# (stack's shape, the other operand: "w.t()" (5, 4) transposed, "w" (4, 5), "v" (4,), "transposed stack")
CASES = [((2, 3, 4), "w.t()"), ((2, 3, 4), "w"), ((2, 2, 3, 4), "w.t()"), ((2, 3, 4), "v"),
         ((3, 2, 4), "transposed stack"), ((1, 3, 4), "w")]


def _run(m, shape, other, needs):
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal(shape), dtype=m.float64, requires_grad=needs[0])
    w = m.tensor(rng.standard_normal((5, 4) if other in ("w.t()", "transposed stack") else (4, 5) if other == "w"
                                     else (4,)), dtype=m.float64, requires_grad=needs[1])
    a = x.transpose(0, 1) if other == "transposed stack" else x
    y = a @ (w.t() if other in ("w.t()", "transposed stack") else w)
    inputs = [t for t, n in zip((x, w), needs) if n]
    grads = m.autograd.grad((y.tanh() ** 2).sum(), inputs, create_graph=True)
    forward = _nodes(y.grad_fn, set())
    chains = [_chain(g.grad_fn, forward) for g in grads]
    second = m.autograd.grad(sum((g ** 3).sum() for g in grads), inputs, create_graph=True)
    third = m.autograd.grad(sum(h.sin().sum() for h in second), inputs)
    return chains, [np.asarray(t.detach().tolist()) for t in (*second, *third)]


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)], ids=["both", "stack", "other"])
@pytest.mark.parametrize(("shape", "other"), CASES, ids=[f"{s}@{o}" for s, o in CASES])
def test_folded_matmul_gradients_recorded_as_pytorch(shape, other, needs):
    (chains, values), (want_chains, want_values) = (_run(m, shape, other, needs) for m in (ember, torch))
    assert chains == want_chains
    for got, want in zip(values, want_values):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_matrix_product_keeps_a_dropped_operands_layout():
    # only the transposed weight's gradient computed: the input is not kept, the weight's layout still decides
    # PyTorch's column-major form of its gradient (TBackward0 over MmBackward0)
    def chain(m):
        x = m.ones(3, 4, dtype=m.float64)
        w = m.ones(5, 4, dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad((x @ w.t()).pow(2).sum(), w, create_graph=True)
        return _chain(g.grad_fn, set())[:3]

    assert chain(ember) == chain(torch)

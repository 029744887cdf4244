"""matmul of stacks whose batch dims match but cannot be viewed as one (an operand permuted across its batch
dims): PyTorch's batched product reshapes each operand into one stack of matrices, which copies such an operand,
and its kernel saves the copy. Changing that operand in place before backward is then no error (the other's
gradient reads the values it had), where changing a viewable operand is; the values and gradients are PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def _run(m, permuted, changed):
    base_a = m.tensor(np.arange(120.0).reshape(3, 2, 4, 5) / 50, requires_grad=True)
    base_b = m.tensor(np.arange(90.0).reshape(3, 2, 5, 3) / 40, requires_grad=True)
    a, b = base_a * 1.0, base_b * 1.0
    a2 = a.permute(1, 0, 2, 3) if "a" in permuted else a.reshape(2, 3, 4, 5)
    b2 = b.permute(1, 0, 2, 3) if "b" in permuted else b.reshape(2, 3, 5, 3)
    return _changed_before_backward(m, m.matmul(a2, b2), (base_a, base_b), (a, b), changed)


def _changed_before_backward(m, y, leaves, operands, changed):
    """y's values, then the leaves' gradients after the operand ``changed`` ("a", "b" or None) was doubled in place
    (True: PyTorch's in-place error instead)."""
    value = y.detach().numpy().copy()
    if changed:
        with m.no_grad():
            operands["ab".index(changed)].mul_(2.0)
    try:
        grads = m.autograd.grad(y, leaves, m.ones_like(y))
    except RuntimeError as err:
        return value, "modified by an inplace operation" in str(err)
    return value, [g.numpy() for g in grads]


def _assert_as_pytorchs(ours, theirs):
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    if isinstance(theirs[1], bool):
        assert ours[1] is True  # refused, as PyTorch
    else:
        assert not isinstance(ours[1], bool), "refused where PyTorch computes"
        for g, h in zip(ours[1], theirs[1]):
            np.testing.assert_allclose(g, h, rtol=1e-12)


@pytest.mark.parametrize("changed", [None, "a", "b"])
@pytest.mark.parametrize("permuted", ["", "a", "b", "ab"])
def test_matmul_of_unviewable_batches_saves_a_copy_as_pytorch(permuted, changed):
    _assert_as_pytorchs(_run(ember, permuted, changed), _run(torch, permuted, changed))


# Batches that broadcast (a stack of a 4-D operand against a 3-D one, or a batch of 1): PyTorch expands each operand
# to the common batch and copies the one whose expanded batch cannot be viewed as one stack, saving the copy. Among
# them shapes whose leading sizes coincide with the other operand's batch and matrix rows ((2, 2, 3, 2) against
# (2, 2, 4)): which copy is made must follow the batch dims, not the sizes that happen to match.
BROADCAST = {
    "4-D times 3-D": ((2, 3, 4, 5), (3, 5, 2)),
    "4-D times 3-D, leading sizes as the 3-D's batch and rows": ((2, 2, 3, 2), (2, 2, 4)),
    "4-D of batch 1 times 3-D, leading sizes as the 3-D's": ((1, 2, 3, 2), (1, 2, 4)),
    "3-D times 4-D": ((3, 4, 5), (2, 3, 5, 2)),
    "3-D of batch 1 times 4-D": ((1, 4, 5), (2, 3, 5, 2)),
    "4-D batch 1 in the middle": ((2, 1, 4, 5), (3, 5, 2)),
    "3-D times 4-D, the 3-D's batch and rows as the 4-D's batch": ((2, 2, 3), (2, 2, 3, 4)),
}


def _run_broadcast(m, shapes, changed):
    (sa, sb) = shapes
    base_a = m.tensor(np.arange(np.prod(sa), dtype=np.float64).reshape(sa) / 50, requires_grad=True)
    base_b = m.tensor(np.arange(np.prod(sb), dtype=np.float64).reshape(sb) / 40, requires_grad=True)
    a, b = base_a * 1.0, base_b * 1.0
    return _changed_before_backward(m, m.matmul(a, b), (base_a, base_b), (a, b), changed)


@pytest.mark.parametrize("changed", [None, "a", "b"])
@pytest.mark.parametrize("shapes", list(BROADCAST.values()), ids=list(BROADCAST))
def test_matmul_of_broadcast_batches_saves_the_copies_pytorch_saves(shapes, changed):
    _assert_as_pytorchs(_run_broadcast(ember, shapes, changed), _run_broadcast(torch, shapes, changed))


# Operands without elements: PyTorch's reshape of an empty tensor is a view whatever the shapes (it has no memory to
# lay out), so neither its batched product nor its fold of a stack into one matrix copies one, and changing it in
# place before backward is PyTorch's error; NumPy infers no size of an empty array, so a copy must not be inferred
# from a failed reshape to -1. Each path: a vector or matrix times an empty stack (the fold), stacks whose batches
# broadcast, 3-D times 4-D and 4-D times 3-D, and stacks of one batch (no copy either way).
EMPTY = {
    "vector times an empty stack": ((0,), (2, 0, 4)),
    "matrix times an empty stack of batch 1": ((2, 0), (1, 0, 4)),
    "matrix times an empty 4-D stack": ((2, 0), (2, 1, 0, 4)),
    "vector times an empty 4-D stack without columns": ((0,), (1, 2, 0, 0)),
    "3-D without columns times a broadcast 3-D": ((2, 2, 0), (1, 0, 4)),
    "3-D times a broadcast 3-D without columns": ((2, 2, 3), (1, 3, 0)),
    "empty batch times a broadcast 3-D without columns": ((0, 2, 3), (1, 3, 0)),
    "3-D without rows times a broadcast 3-D": ((2, 0, 3), (1, 3, 4)),
    "3-D of batch 1 without rows times 4-D": ((1, 0, 3), (2, 1, 3, 4)),
    "3-D without rows times a 4-D of an empty batch": ((2, 0, 3), (0, 1, 3, 4)),
    "3-D times 4-D without columns": ((1, 2, 3), (1, 2, 3, 0)),
    "4-D without rows times 3-D": ((1, 2, 0, 3), (2, 3, 4)),
    "4-D without columns times 3-D": ((2, 2, 2, 0), (2, 0, 4)),
    "4-D of an empty batch times 3-D without columns": ((0, 1, 2, 3), (2, 3, 0)),
    "4-D times a broadcast 3-D without columns": ((2, 1, 2, 3), (1, 3, 0)),
    "one batch, without rows": ((2, 0, 3), (2, 3, 4)),
    "one batch, without columns": ((2, 2, 0), (2, 0, 4)),
}


@pytest.mark.parametrize("changed", [None, "a", "b"])
@pytest.mark.parametrize("shapes", list(EMPTY.values()), ids=list(EMPTY))
def test_matmul_of_empty_operands_saves_what_pytorch_saves(shapes, changed):
    _assert_as_pytorchs(_run_broadcast(ember, shapes, changed), _run_broadcast(torch, shapes, changed))

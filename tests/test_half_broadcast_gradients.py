"""The gradient of a broadcast half-precision operand, summed back to its shape (``sum_to_shape`` in
``ember/autograd/engine.py``, which accumulates float16/bfloat16 in float32 as PyTorch's sum kernel): its shape,
dtype and values as PyTorch's, for an operand broadcast along its own size-1 dims (no leading dims: the sum keeps
the dims, nothing reshapes it afterwards), along new leading dims, or both. Seen by the leaf's ``.grad``,
``autograd.grad`` and a hook on a non-leaf operand."""

import numpy as np
import pytest
import torch

import ember

SHAPES = [((3, 1), (3, 4)), ((1, 4), (3, 4)), ((2, 1, 3), (2, 5, 3)), ((1, 1), (2, 3)), ((4,), (3, 4)),
          ((1, 4), (2, 3, 4)), ((3, 1), (2, 3, 5))]


def _run(m, dtype, small, big, op):
    d = getattr(m, dtype)
    a = m.tensor(np.linspace(-1, 1, int(np.prod(small))).reshape(small), dtype=d, requires_grad=True)
    b = m.tensor(np.arange(np.prod(big)).reshape(big) / 8, dtype=d)
    inner = a * 1
    seen = []
    inner.register_hook(lambda g: seen.append((tuple(g.shape), str(g.dtype).split(".")[1], g.float().tolist())))
    y = (inner * b if op == "mul" else inner + b).sum()
    (g,) = m.autograd.grad(y, inner, retain_graph=True)
    y.backward()
    return (seen, tuple(g.shape), g.float().tolist(), tuple(a.grad.shape), str(a.grad.dtype).split(".")[1],
            a.grad.float().tolist())


@pytest.mark.parametrize("op", ["mul", "add"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("small,big", SHAPES)
def test_broadcast_operands_gradient_as_pytorchs(small, big, dtype, op):
    assert _run(ember, dtype, small, big, op) == _run(torch, dtype, small, big, op)


def _long_rows(m, dtype, small, big):
    """Many elements summed into each entry of the operand's gradient: a sum accumulated in the half type itself
    drifts from PyTorch's float32 accumulation (rounded once)."""
    d = getattr(m, dtype)
    b = np.random.default_rng(0).uniform(0.5, 1.5, big)
    a = m.tensor(np.ones(small), dtype=d, requires_grad=True)
    (a * m.tensor(b, dtype=d)).sum().backward()
    return str(a.grad.dtype).split(".")[1], a.grad.float().tolist()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("small,big", [((1,), (4096,)), ((8, 1), (8, 2048)), ((1, 3), (4096, 3))])
def test_long_broadcast_sums_accumulate_in_float32_as_pytorchs(small, big, dtype):
    assert _long_rows(ember, dtype, small, big) == _long_rows(torch, dtype, small, big)

"""torch.linalg.cross / torch.cross / Tensor.cross on operands of two dtypes, against PyTorch: no type promotion
(PyTorch's 'expected scalar type Float but found Double'), no bool kernel; one dtype keeps it (int8, float16),
with gradients in it."""

from __future__ import annotations

import pytest
import torch

import ember

CALLS = {
    "linalg.cross": lambda m, a, b: m.linalg.cross(a, b),
    "cross": lambda m, a, b: m.cross(a, b, dim=1),
    "Tensor.cross": lambda m, a, b: a.cross(b, dim=-1),
}
PAIRS = [("float32", "float64"), ("float64", "float32"), ("int64", "float32"), ("int64", "int32"),
         ("float16", "float32"), ("complex64", "float64"), ("bool", "bool"), ("int8", "int8"),
         ("float16", "float16"), ("float64", "float64")]


def _outcome(m, call, da, db):
    a = m.tensor([[1, 2, 3], [4, 5, 6]]).to(getattr(m, da))
    b = m.tensor([[0, 1, 0], [1, 0, 1]]).to(getattr(m, db))
    for t in (a, b):
        if t.is_floating_point():
            t.requires_grad_()
    try:
        y = CALLS[call](m, a, b)
    except (RuntimeError, NotImplementedError) as err:
        return type(err).__name__, str(err)
    out = [str(y.dtype).split(".")[1], y.tolist()]
    if y.requires_grad:
        y.backward(m.ones_like(y))
        out += [(str(t.grad.dtype).split(".")[1], t.grad.tolist()) for t in (a, b)]
    return out


@pytest.mark.parametrize("da,db", PAIRS)
@pytest.mark.parametrize("call", list(CALLS))
def test_cross_dtypes_as_pytorch(call, da, db):
    assert _outcome(ember, call, da, db) == _outcome(torch, call, da, db)

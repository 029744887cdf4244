"""The version counter of an op's result, against PyTorch: a fresh result is at version 0 whatever path computed it
(the unary fast path of a float tensor that requires grad, the general one, without grad, under no_grad), each
change in place adds one, and a view shares its base's counter. ``_version`` is what PyTorch's saved-tensor check
compares, and a user's way to tell whether a tensor was written."""

from __future__ import annotations

import pytest
import torch

import ember

OPS = {
    "exp": lambda m, x: x.exp(),
    "sin": lambda m, x: m.sin(x),
    "tanh": lambda m, x: x.tanh(),
    "sigmoid": lambda m, x: x.sigmoid(),
    "relu": lambda m, x: m.relu(x),
    "neg": lambda m, x: -x,
    "abs": lambda m, x: x.abs(),
    "sqrt": lambda m, x: x.abs().sqrt(),
    "square": lambda m, x: m.square(x),
    "x * 2": lambda m, x: x * 2,
    "x + x": lambda m, x: x + x,
    "sum": lambda m, x: x.sum(),
    "mean(0)": lambda m, x: x.mean(0),
    "matmul": lambda m, x: x @ x.T,
    "clone": lambda m, x: x.clone(),
    "to float64": lambda m, x: x.double(),
    "softmax": lambda m, x: m.softmax(x, 1),
    "view": lambda m, x: x.view(-1),
    "transpose": lambda m, x: x.t(),
    "add_ on a result": lambda m, x: (x * 1).add_(1),
    "mul_ twice": lambda m, x: (x * 1).mul_(2).mul_(3),
    "view of a result changed": lambda m, x: _changed_view(x),
}


def _changed_view(x):
    y = x * 1
    v = y[0]
    v.add_(1)
    return y


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("state", ["requires grad", "no grad needed", "under no_grad"])
@pytest.mark.parametrize("op", list(OPS))
def test_a_results_version_as_pytorch(op, state, dtype):
    seen = []
    for m in (ember, torch):
        x = m.tensor([[0.5, -1.25, 2.0], [1.5, 0.25, -3.0]], dtype=getattr(m, dtype))
        if state == "requires grad":
            x.requires_grad_()
        with m.set_grad_enabled(state != "under no_grad"):
            out = OPS[op](m, x)
        seen.append((out._version, x._version))
    assert seen[0] == seen[1]

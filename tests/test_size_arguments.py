"""Sizes, dims and repeats given to the shape methods as PyTorch takes them: ints and other integers (bools,
NumPy integers, one-element integer tensors) are accepted; a float or a string is PyTorch's TypeError, never
truncated to an int."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CALLS = {
    "view": lambda x, *a: x.view(*a),
    "reshape": lambda x, *a: x.reshape(*a),
    "expand": lambda x, *a: x.reshape(1, 24).expand(*a),
    "repeat": lambda x, *a: x.repeat(*a),
    "permute": lambda x, *a: x.reshape(2, 3, 4).permute(*a),
}
ARGS = {
    "view": (2, 3, 4), "reshape": (2, 3, 4), "expand": (2, 24), "repeat": (2, 1), "permute": (2, 0, 1),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("kind", ["float", "str", "numpy int", "tensor int", "list"])
def test_size_elements_as_pytorch(call, kind):
    outcomes = []
    for lib in (torch, ember):
        args = list(ARGS[call])
        args[1] = {"float": float(args[1]), "str": str(args[1]), "numpy int": np.int64(args[1]),
                   "tensor int": lib.tensor(args[1]), "list": args[1]}[kind]
        if kind == "list":
            args = [args]
        try:
            outcomes.append(tuple(CALLS[call](lib.arange(24), *args).shape))
        except TypeError:
            outcomes.append(TypeError)
    assert outcomes[1] == outcomes[0]

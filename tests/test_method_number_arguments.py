"""Tensor methods given a tensor where PyTorch's signature takes a number (a Number, float or int parameter), as
PyTorch's argument parser reads it: a 0-d tensor is its value; a one-element or longer tensor is its TypeError,
"renorm(): argument 'p' (position 1) must be Number, not Tensor", the position counted as a method's (the input
not among them) and none when the argument is given by keyword."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

FLOATS = {"1-element": [2.0], "0-d": 2.0, "2-element": [2.0, 3.0]}
INTS = {"1-element": [1], "0-d": 1, "2-element": [1, 0]}
# method, its arguments before the one given as a tensor, that argument's name, the arguments after it, values
CASES = [
    ("renorm", (), "p", (0, 1.0), FLOATS),
    ("renorm", (2,), "dim", (1.0,), INTS),
    ("renorm", (2, 0), "maxnorm", (), FLOATS),
    ("renorm_", (2, 0), "maxnorm", (), FLOATS),
    ("nan_to_num", (), "nan", (), FLOATS),
    ("nan_to_num", (0.0,), "posinf", (), FLOATS),
    ("nan_to_num", (0.0, 1.0), "neginf", (), FLOATS),
    ("nan_to_num_", (0.0,), "posinf", (), FLOATS),
    ("histc", (), "bins", (), INTS),
    ("histc", (4,), "min", (), FLOATS),
    ("histc", (4, 0), "max", (), FLOATS),
    ("logit", (), "eps", (), FLOATS),
    ("logit_", (), "eps", (), FLOATS),
    ("diff", (), "n", (), INTS),
    ("diff", (1,), "dim", (), INTS),
    ("exponential_", (), "lambd", (), FLOATS),
    ("kthvalue", (1,), "dim", (), INTS),
    ("cumsum", (), "dim", (), INTS),
    ("softmax", (), "dim", (), INTS),
    ("normal_", (), "mean", (), FLOATS),
    ("normal_", (0.0,), "std", (), FLOATS),
    ("log_normal_", (1.0,), "std", (), FLOATS),
    ("cauchy_", (), "median", (), FLOATS),
    ("cauchy_", (0.0,), "sigma", (), FLOATS),
    ("geometric_", (), "p", (), {"1-element": [0.5], "0-d": 0.5, "2-element": [0.5, 0.5]}),
]
IDS = [f"{c[0]}-{c[2]}" for c in CASES]


def _outcome(lib, method, before, name, after, value, by_keyword):
    x = lib.tensor([[1.5, 2.0], [3.0, 0.25]])
    if method == "exponential_":
        return _refusal(lambda: x.exponential_(**{name: value}) if by_keyword else x.exponential_(value))
    names = ["p", "dim", "maxnorm"] if method.startswith("renorm") else \
        ["bins", "min", "max"] if method == "histc" else ["nan", "posinf", "neginf"] if "nan" in method else \
        ["n", "dim"] if method == "diff" else ["k", "dim"] if method == "kthvalue" else \
        ["mean", "std"] if "normal" in method else ["median", "sigma"] if method == "cauchy_" else [name]

    def call():
        if by_keyword:
            return getattr(x, method)(**dict(zip(names, (*before, value, *after))))
        return getattr(x, method)(*before, value, *after)

    return _refusal(call)


def _refusal(call):
    try:
        result = call()
    except (TypeError, RuntimeError, ValueError) as e:
        return type(e).__name__, str(e)
    result = result[0] if isinstance(result, tuple) else result
    return "ok", np.asarray(result.detach().numpy() if hasattr(result, "detach") else result).shape


@pytest.mark.parametrize("by_keyword", [False, True], ids=["positional", "keyword"])
@pytest.mark.parametrize("kind", list(FLOATS))
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_tensor_for_a_number_as_pytorch(case, kind, by_keyword):
    method, before, name, after, values = case
    expected = _outcome(torch, method, before, name, after, torch.tensor(values[kind]), by_keyword)
    got = _outcome(ember, method, before, name, after, ember.tensor(values[kind]), by_keyword)
    assert got == expected
    if kind == "2-element":  # (the TypeError names the argument, its position only when given by position)
        assert expected[0] == "TypeError" and f"argument '{name}'" in expected[1]

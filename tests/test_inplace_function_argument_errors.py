"""The top-level in-place functions (``torch.sqrt_(x)``, ``torch.clamp_(x, 0, 1)``: ember/_inplace_functions.py)
refuse arguments they do not take as PyTorch's functions do: named as the function (``sqrt_() takes 1
positional argument but 2 were given``, ``fix_()``, not the method ``Tensor.trunc_()`` it forwards to), the
count including the input. Every function of the module is checked against PyTorch's message."""

from __future__ import annotations

import re

import pytest
import torch

import ember
import ember._inplace_functions as inplace_functions

NAMES = sorted(n for n, v in vars(inplace_functions).items()
               if n.endswith("_") and not n.startswith("_") and callable(v))
CALLS = {
    "extra positional": lambda lib, f: f(lib.ones(2), 1, 2, 3, 4, 5, 6),
    "unknown keyword": lambda lib, f: f(lib.ones(2), bogus=1),
}


def _message(lib, name: str, call) -> str:
    with pytest.raises(TypeError) as info:
        call(lib, getattr(lib, name))
    return str(info.value)


def test_every_function_is_checked():
    assert len(NAMES) == 61 and "sqrt_" in NAMES and "fix_" in NAMES


@pytest.mark.parametrize("form", list(CALLS))
@pytest.mark.parametrize("name", NAMES)
def test_argument_error_names_the_function(name, form):
    expected = _message(torch, name, CALLS[form])
    got = _message(ember, name, CALLS[form])
    assert got.startswith(f"{name}()"), got
    # where PyTorch's refusal is Python's own wording (not its parser's list of overloads), it is the same text
    if re.match(rf"{name}\(\) (takes \d|takes from|got an unexpected)", expected):
        assert got == expected

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


def _refusal(lib, call) -> str:
    try:
        call(lib)
    except Exception as e:  # (some still refuse "a" otherwise than PyTorch: only the overload lists are compared)
        return f"{type(e).__name__}: {e}"
    return "accepted"


# a list of overloads (PyTorch's "invalid combination of arguments"), which the function's parser lists with the
# input: "got (Tensor, str)", " * (Tensor input, Number min = None, ...)", "invalid types: (Tensor, !str!)"
OVERLOAD_CALLS = {
    "clamp_(x, 'a')": lambda lib: lib.clamp_(lib.ones(2), "a"),
    "clamp_(x, 'a', 1)": lambda lib: lib.clamp_(lib.ones(2), "a", 1),
    "clamp_(x, t, 1)": lambda lib: lib.clamp_(lib.ones(2), lib.ones(2, requires_grad=True), 1),
    "clamp_(x, max='a')": lambda lib: lib.clamp_(lib.ones(2), max="a"),
    "clamp_(x, min='a', max=1)": lambda lib: lib.clamp_(lib.ones(2), min="a", max=1),
    "clip_(x, 'a')": lambda lib: lib.clip_(lib.ones(2), "a"),
    "clip_(x, min=t, max=1)": lambda lib: lib.clip_(lib.ones(2), min=lib.ones(2), max=1),
    "clamp_min_(x, 'a')": lambda lib: lib.clamp_min_(lib.ones(2), "a"),
    "clamp_max_(x, None)": lambda lib: lib.clamp_max_(lib.ones(2), None),
    "xlogy_(x, 'a')": lambda lib: lib.xlogy_(lib.ones(2), "a"),
    "xlogy_(x, None)": lambda lib: lib.xlogy_(lib.ones(2), None),
}


@pytest.mark.parametrize("call", list(OVERLOAD_CALLS))
def test_overload_list_has_the_input(call):
    expected = _refusal(torch, OVERLOAD_CALLS[call])
    assert expected.startswith("TypeError: ") and "invalid combination of arguments" in expected
    assert _refusal(ember, OVERLOAD_CALLS[call]) == expected


@pytest.mark.parametrize("name", NAMES)
def test_string_operand_overload_list(name):
    """``torch.<name>_(x, "a")`` for every function: where both refuse it with a list of overloads, the same."""
    def call(lib):
        return getattr(lib, name)(lib.ones(2), "a")

    expected, got = _refusal(torch, call), _refusal(ember, call)
    assert not got.startswith("Tensor.")
    if "invalid combination" in expected and "invalid combination" in got:
        assert got == expected

"""The type PyTorch's C++ argument errors name for an operand that is no tensor is CPython's ``tp_name``: a class
defined in Python by its bare name (``Fraction``, a user's class), an extension type by its dotted name
(``numpy.ndarray``, ``decimal.Decimal``), a builtin by its name (``str``). Each of ember's errors that names such an
operand (the comparison functions, a function's tensor argument, an arithmetic operand, a custom Function's
gradient) names it as PyTorch does, against PyTorch's message."""

import decimal
import fractions

import numpy as np
import pytest
from oracle import outcomes


class Settings:  # (a class of the test module: PyTorch names it without its module)
    pass


OPERANDS = {
    "str": lambda: "a",
    "Fraction (a Python class of the standard library)": lambda: fractions.Fraction(1, 2),
    "Decimal (an extension type)": lambda: decimal.Decimal(1),
    "a class of this module": Settings,
    "numpy.ndarray": lambda: np.array([1.0, 2.0]),
}


def _first_line(error: Exception) -> str:
    return str(error).split("\n")[0]


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("operand", list(OPERANDS))
def test_a_comparison_function_names_the_operands_type_as_pytorch(name, operand):
    (got, _), (want, _) = outcomes(lambda m: getattr(m, name)(m.ones(2), OPERANDS[operand]()))
    assert isinstance(want, TypeError) and isinstance(got, TypeError), (got, want)
    # (PyTorch lists its overloads on the lines after; ember words them on the first, after "but expected")
    assert _first_line(got).split(", but expected")[0] == _first_line(want).split(", but expected")[0]


@pytest.mark.parametrize("operand", [o for o in OPERANDS if o != "numpy.ndarray"])
def test_an_arithmetic_operand_of_another_kind_is_named_as_pytorch(operand):
    # (a NumPy array beside a tensor gets ember's own message, which tells how to convert it: docs/api.md)
    for call in (lambda m: m.ones(2).mul(OPERANDS[operand]()), lambda m: m.add(m.ones(2), OPERANDS[operand]()),
                 lambda m: m.sub(m.ones(2), other=OPERANDS[operand]())):
        (got, _), (want, _) = outcomes(call)
        assert isinstance(want, TypeError) and isinstance(got, TypeError), (got, want)
        assert _first_line(got) == _first_line(want)


@pytest.mark.parametrize("operand", list(OPERANDS))
def test_a_functions_tensor_argument_given_another_kind_is_named_as_pytorch(operand):
    (got, _), (want, _) = outcomes(lambda m: m.exp(OPERANDS[operand]()))
    assert isinstance(want, TypeError) and isinstance(got, TypeError), (got, want)
    # (ember adds how to convert a NumPy array after PyTorch's words)
    assert _first_line(got).startswith(_first_line(want))


@pytest.mark.parametrize("operand", list(OPERANDS))
def test_a_custom_functions_gradient_of_another_kind_is_named_as_pytorch(operand):
    def run(m):
        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return OPERANDS[operand]()

        Twice.apply(m.ones(2, requires_grad=True)).sum().backward()

    (got, _), (want, _) = outcomes(run)
    assert isinstance(want, RuntimeError) and isinstance(got, RuntimeError), (got, want)
    assert _first_line(got) == _first_line(want)

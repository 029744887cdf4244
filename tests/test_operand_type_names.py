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


# PyTorch's argument parser (and its other C++ checks) on an argument of another kind: each message ends with the
# type's name. (ember words some of them its own way before it: only the name is compared.)
NAMED_AT_THE_END = {
    "topk's k": lambda m, o: m.topk(m.ones(3), o),
    "aminmax's dim": lambda m, o: m.aminmax(m.ones(3), dim=o),
    "histc's bins": lambda m, o: m.histc(m.ones(3), bins=o),
    "pixel_shuffle's factor": lambda m, o: m.nn.functional.pixel_shuffle(m.ones(1, 4, 2, 2), o),
    "pixel_unshuffle's factor": lambda m, o: m.nn.functional.pixel_unshuffle(m.ones(1, 1, 4, 4), o),
    "norm_except_dim's pow": lambda m, o: m.norm_except_dim(m.ones(2), o),
    "use_deterministic_algorithms' mode": lambda m, o: m.use_deterministic_algorithms(o),
    "renorm's input": lambda m, o: m.renorm(o, 2, 0, 1.0),
    "special.i0e's input": lambda m, o: m.special.i0e(o),
    "linalg.solve's A": lambda m, o: m.linalg.solve(o, m.ones(2)),
    "complex's real": lambda m, o: m.complex(o, m.ones(2)),
    "polar's angle": lambda m, o: m.polar(m.ones(2), o),
    "index_put's indices": lambda m, o: m.ones(3).index_put(o, m.ones(1)),
    "broadcast_tensors' element": lambda m, o: m.broadcast_tensors(m.ones(2), o),
    "block_diag's element": lambda m, o: m.block_diag(m.ones(2), o),
    "einsum's operand": lambda m, o: m.einsum("i->i", o),
    "from_numpy's array": lambda m, o: m.from_numpy(o),
    "maximum's other": lambda m, o: m.maximum(m.ones(2), o),
    "Tensor.minimum's other": lambda m, o: m.ones(2).minimum(o),
    "channel_shuffle's groups": lambda m, o: m.nn.functional.channel_shuffle(m.ones(1, 4, 2, 2), o),
    "kl_div's int reduction": lambda m, o: m.kl_div(m.ones(2), m.ones(2), o),
    "embedding_bag's offsets": lambda m, o: m.embedding_bag(m.ones(3, 2), m.tensor([0, 1]), o),
}


# (from_numpy takes an array; aminmax reads a NumPy array given as dim as a number first)
PAIRS = [(call, operand) for call in NAMED_AT_THE_END for operand in OPERANDS if operand != "str"
         and (call, operand) not in {("from_numpy's array", "numpy.ndarray"), ("aminmax's dim", "numpy.ndarray")}]


@pytest.mark.parametrize("call,operand", PAIRS)
def test_an_argument_of_another_kind_is_named_at_the_messages_end_as_pytorch(call, operand):
    (got, _), (want, _) = outcomes(lambda m: NAMED_AT_THE_END[call](m, OPERANDS[operand]()))
    assert isinstance(want, TypeError) and isinstance(got, TypeError), (got, want)
    assert _first_line(got).split()[-1].rstrip(").") == _first_line(want).split()[-1].rstrip(").")

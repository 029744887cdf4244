"""``torch.<op>(tensor, operand)`` with an operand that is neither a tensor nor a number, for the functions whose
signature has a Tensor and a Number overload: PyTorch's TypeError listing the overloads, word for word (ember said
"unsupported operand type for a tensor op", or "must be Tensor" as for the functions that take tensors only)."""

import pytest
import torch

import ember

NAMES = ["multiply", "floor_divide", "true_divide", "fmod", "copysign", "eq", "ne", "lt", "le", "gt", "ge",
         "greater", "less", "greater_equal", "less_equal", "not_equal", "clamp_min", "clamp_max", "remainder",
         "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "xlogy", "pow",
         "float_power", "subtract", "divide",
         "mul", "sub", "div", "atan2"]  # (these take a Tensor only: "must be Tensor", as before)


@pytest.mark.parametrize("operand", ["a", None, [1, "a"], (2,)], ids=["str", "None", "list", "tuple"])
@pytest.mark.parametrize("name", NAMES)
def test_a_non_operand_is_pytorchs_type_error(name, operand):
    messages = []
    for m in (torch, ember):
        with pytest.raises(TypeError) as caught:
            getattr(m, name)(m.ones(2), operand)
        messages.append(str(caught.value))
    assert messages[1] == messages[0]


@pytest.mark.parametrize("name", ["lt", "fmod", "remainder", "clamp_min", "pow"])
def test_the_methods_keep_pytorchs_wording(name):
    messages = []
    for m in (torch, ember):
        with pytest.raises(TypeError) as caught:
            getattr(m.ones(2), name)("a")
        messages.append(str(caught.value))
    assert messages[1] == messages[0]

"""A binary op given an operand that is neither a tensor nor a number (a str, None, a list), against torch: the
operators give NotImplemented, so that Python words the TypeError (``unsupported operand type(s) for +: 'Tensor'
and 'str'``; ``x * "a"`` asks the tensor for an index, as str's repetition does), the in-place ones too (``x += "a"``)
and comparisons are False / Python's; the methods raise PyTorch's own TypeError ("argument 'other' (position 1)
must be Tensor", or the invalid combination of its Tensor and Number overloads), before anything is written."""

import operator

import numpy as np
import pytest
import torch

import ember

BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor", "lshift",
          "rshift", "lt", "le", "gt", "ge", "eq", "ne"]
INPLACE = ["iadd", "isub", "imul", "itruediv", "ifloordiv", "ipow", "iand", "ior", "ixor", "ilshift", "irshift"]
METHODS = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "pow", "float_power", "fmod", "remainder",
           "copysign", "eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal",
           "not_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_left_shift", "bitwise_right_shift", "xlogy", "subtract", "multiply", "divide", "matmul",
           "igamma", "igammac"]
IN_PLACE_METHODS = [name + "_" for name in METHODS if name not in ("matmul", "igamma", "igammac")]


def _tensor(m, integer: bool):
    return m.ones(2, dtype=m.int64) if integer else m.ones(2)


def _outcome(fn, *args):
    try:
        out = fn(*args)
    except Exception as error:  # (the types and messages are compared)
        return type(error).__name__, str(error)
    return "returned", repr(out)


@pytest.mark.parametrize("operand", ["a", None, [1.0, 2.0]])
@pytest.mark.parametrize("name", BINARY)
def test_operators_leave_the_error_to_python(name, operand):
    integer = name in ("and_", "or_", "xor", "lshift", "rshift")
    results = []
    for m in (torch, ember):
        op = getattr(operator, name)
        results.append((_outcome(op, _tensor(m, integer), operand), _outcome(op, operand, _tensor(m, integer))))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_operators_leave_the_error_to_python(name):
    integer = name in ("iand", "ior", "ixor", "ilshift", "irshift")
    results = []
    for m in (torch, ember):
        x = _tensor(m, integer)
        results.append((_outcome(getattr(operator, name), x, "a"), x.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", METHODS + IN_PLACE_METHODS)
def test_methods_raise_pytorchs_type_error(name):
    integer = "bitwise" in name
    results = []
    for m in (torch, ember):
        x = _tensor(m, integer)
        results.append((_outcome(getattr(x, name), "a"), x.tolist()))
    assert results[0] == results[1]
    assert results[1][0][0] == "TypeError"


def test_operands_still_taken():
    """Numbers, NumPy scalars and tensors still work through the operators and methods; a refusal of another
    argument (alpha) stays the op's own."""
    x = ember.ones(2)
    assert (x + 1).tolist() == (x.add(np.float32(1))).tolist() == (x + ember.ones(2)).tolist() == [2.0, 2.0]
    assert (2 ** x).tolist() == [2.0, 2.0] and x.pow(2).tolist() == [1.0, 1.0]
    for m in (torch, ember):
        with pytest.raises(TypeError):
            m.ones(2).add(m.ones(2), alpha="a")


@pytest.mark.parametrize("call", [
    lambda m, x: x.clamp("a"), lambda m, x: x.clamp_("a"), lambda m, x: x.clip("a"), lambda m, x: x.clip_("a"),
    lambda m, x: x.clamp(None, "a"), lambda m, x: x.clamp(1, "a"), lambda m, x: x.clamp("a", 1),
    lambda m, x: x.clamp([1.0]), lambda m, x: x.clamp_min("a"), lambda m, x: x.clamp_min_("a"),
    lambda m, x: x.clamp_max("a"), lambda m, x: x.clamp_max_("a"), lambda m, x: m.clamp(x, "a"),
    lambda m, x: m.clamp(x, 1, "a"), lambda m, x: m.clip(x, "a"), lambda m, x: m.clamp_min(x, "a"),
    lambda m, x: m.clamp_max(x, "a")])
def test_clamp_bounds_of_another_kind_as_torch(call):
    """(A bound given by keyword is worded as a positional one: PyTorch's message says ``min=str``.)"""
    results = []
    for m in (torch, ember):
        x = m.ones(2)
        results.append((_outcome(call, m, x), x.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shift_functions_refuse_a_non_operand(name):
    """(They returned NotImplemented: a silent non-tensor result. ember words the error as its other binary
    functions do, "argument 'other' (position 2) must be Tensor"; PyTorch's lists its overloads.)"""
    for m in (torch, ember):
        with pytest.raises(TypeError, match=name):
            getattr(m, name)(m.ones(2, dtype=m.int64), "a")


@pytest.mark.parametrize("call", [
    lambda m, x: x @ 1, lambda m, x: 1 @ x, lambda m, x: x.matmul(1), lambda m, x: m.matmul(x, 1.5),
    lambda m, x: m.matmul(1, x), lambda m, x: m.logical_and(x, 1), lambda m, x: x.logical_and(1),
    lambda m, x: x.logical_xor_(1), lambda m, x: x.igamma(1), lambda m, x: x.igammac(2.0)])
def test_tensor_only_ops_refuse_numbers_as_torch(call):
    """matmul, the logical ops and igamma / igammac take tensors only (a number too is PyTorch's TypeError)."""
    results = []
    for m in (torch, ember):
        x = m.ones(2)
        results.append((_outcome(call, m, x), x.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["fmod", "fmod_", "copysign", "copysign_", "xlogy", "xlogy_", "bitwise_and",
                                  "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"])
def test_refusal_on_the_error_path_only(name):
    """These methods word a non-operand's refusal in their own error path (``method_refusal``), as the direct-call
    ones do: no refusing wrapper (``_refusing_non_operands``) costs a correct call anything."""
    method = getattr(ember.Tensor, name)
    assert not hasattr(method, "__wrapped__") and method.__name__ == name
    messages = []
    for m in (torch, ember):
        x = m.ones(2, dtype=m.int64 if name.startswith("bitwise") else m.float32)
        with pytest.raises(TypeError) as info:
            getattr(x, name)("a")
        messages.append(str(info.value))
    assert messages[1] == messages[0]

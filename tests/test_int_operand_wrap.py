"""A Python int operand that a narrow integer tensor's dtype cannot hold (``int8 + 300``, ``uint8 - 1000``,
``int8 < 300``): PyTorch's kernels read it as an int64 converted to the tensor's dtype, wrapping (300 is 44 in int8),
where NumPy raises OverflowError; an int past int64/uint64 is PyTorch's OverflowError whatever the tensor; fill
values (``where``'s, ``fill_``'s, ``clamp``'s) are checked instead of wrapped."""

import operator

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_same_error

VALUES = [300, -300, 1000, -1000, 2**40, -(2**63), 2**63, 2**64 - 1, 255, -1]
DTYPES = ["int8", "uint8", "int16", "int32"]
OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
    "mod": operator.mod, "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq, "ne": operator.ne,
    "truediv": operator.truediv,
}


def _same(fn):
    """``fn(module)``'s value, dtype and shape for ember and torch, or the same exception type and message."""
    try:
        want = fn(torch)
    except Exception:  # noqa: BLE001
        assert_same_error(fn)
        return
    got = fn(ember)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    if want.is_floating_point() or want.is_complex():  # (atan2, xlogy: the last bit is NumPy's)
        wide = "complex128" if want.is_complex() else "float64"  # (bfloat16 has no NumPy dtype in PyTorch)
        np.testing.assert_allclose(got.to(getattr(ember, wide)).numpy(), want.to(getattr(torch, wide)).numpy(),
                                   rtol=1e-6)
    else:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def _x(m, dtype):
    return m.tensor([-7, 0, 1, 5, 100], dtype=getattr(m, dtype)) if dtype != "uint8" else \
        m.tensor([0, 1, 5, 100, 250], dtype=m.uint8)


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("op", OPERATORS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_an_int_operand_is_wrapped_into_the_tensors_dtype(dtype, op, value):
    if op in ("floordiv", "mod") and value in (2**40, -(2**63), 2**63, 2**64 - 1, 255, -1) and dtype != "int32":
        value = 300  # (wrapped to 0 for some dtypes: PyTorch's ZeroDivisionError, covered below)
    _same(lambda m: OPERATORS[op](_x(m, dtype), value))
    if op not in ("lt", "le", "gt", "ge", "eq", "ne", "truediv"):
        _same(lambda m: OPERATORS[op](value, _x(m, dtype)))


@pytest.mark.parametrize("name", ["add_", "sub_", "mul_", "remainder_", "bitwise_and_", "bitwise_xor_", "lt_",
                                  "eq_", "ge_", "ne_"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_in_place_with_an_int_past_the_dtype_wraps(name, dtype):
    _same(lambda m: getattr(_x(m, dtype), name)(300))
    _same(lambda m: getattr(_x(m, dtype), name)(-1000))


def test_functions_and_alpha_wrap_the_operand():
    _same(lambda m: m.add(_x(m, "int8"), 300, alpha=2))
    _same(lambda m: m.sub(_x(m, "int8"), 300, alpha=2))
    _same(lambda m: m.rsub(_x(m, "int8"), 300))
    _same(lambda m: m.fmod(_x(m, "int8"), 300))
    _same(lambda m: m.remainder(_x(m, "int8"), -300))
    _same(lambda m: _x(m, "int8").div(300, rounding_mode="floor"))
    _same(lambda m: _x(m, "int8").div(300, rounding_mode="trunc"))
    _same(lambda m: _x(m, "int8").div_(300, rounding_mode="floor"))
    _same(lambda m: m.tensor(5, dtype=m.int8) + 300)  # (0-d)
    _same(lambda m: _x(m, "int8") + np.int64(300))  # (a NumPy scalar: its Python number)
    _same(lambda m: m.tensor([1, 2], dtype=m.int16).add_(70000, alpha=2))


def test_a_floating_result_takes_the_int_itself():
    # true division and atan2 compute in float: the operand is not wrapped into the integer dtype first
    _same(lambda m: _x(m, "int8") / 300)
    _same(lambda m: 300 / _x(m, "uint8"))
    _same(lambda m: m.atan2(_x(m, "int8"), m.tensor(300)))
    _same(lambda m: _x(m, "int8") / m.tensor(300))
    _same(lambda m: m.copysign(_x(m, "int8"), -300))
    _same(lambda m: m.xlogy(_x(m, "int8").abs(), 300))


def test_integer_division_by_an_int_that_wraps_to_zero():
    _same(lambda m: _x(m, "int8") // 256)
    _same(lambda m: _x(m, "int8") % 256)


@pytest.mark.parametrize("value", [2**64, 2**70, -(2**63) - 1, -(2**70)])
@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "float16", "complex64"])
def test_an_int_past_int64_and_uint64_is_overflow_error(dtype, value):
    _same(lambda m: m.ones(2, dtype=getattr(m, dtype)) + value)
    _same(lambda m: m.ones(2, dtype=getattr(m, dtype)).add_(value))
    _same(lambda m: m.ones(2, dtype=getattr(m, dtype)).fill_(value))
    _same(lambda m: m.full((2,), value, dtype=getattr(m, dtype)))
    if dtype != "complex64":
        _same(lambda m: m.ones(2, dtype=getattr(m, dtype)) < value)
        _same(lambda m: m.ones(2, dtype=getattr(m, dtype)).clamp(max=value))
        _same(lambda m: m.where(m.tensor([True, False]), m.ones(2, dtype=getattr(m, dtype)), value))


def test_a_uint64_sized_int_beside_a_float_tensor():
    _same(lambda m: m.ones(2) + (2**64 - 1))
    _same(lambda m: m.ones(2).mul_(2**63))
    _same(lambda m: m.ones(2) < 2**64 - 1)


def test_fill_values_are_checked_not_wrapped():
    cond = [True, False, True, False, True]
    _same(lambda m: m.where(m.tensor(cond), _x(m, "int8"), 300))
    _same(lambda m: m.where(m.tensor(cond), 300, _x(m, "int8")))
    _same(lambda m: m.where(m.tensor(cond), _x(m, "uint8"), -1))  # (a negative one wraps into unsigned)
    _same(lambda m: m.where(m.tensor(cond), _x(m, "int8"), 2.5))
    _same(lambda m: _x(m, "int8").fill_(300))
    _same(lambda m: _x(m, "int8").clamp(-300, 300))
    _same(lambda m: _x(m, "uint8").pow(300))
    _same(lambda m: _x(m, "uint8").pow_(300))


def test_a_bool_tensor_in_place_with_an_int_is_refused():
    _same(lambda m: m.tensor([True, False]).add_(1))
    _same(lambda m: m.tensor([True, False]).mul_(2))
    _same(lambda m: m.tensor([True, False]).lt_(300))


def test_a_tensor_bound_is_compared_in_the_result_dtype():
    _same(lambda m: m.clamp(_x(m, "int8"), min=m.tensor(300)))
    _same(lambda m: m.clamp(_x(m, "int8"), max=m.tensor([300, 2, 3, 4, 5])))
    _same(lambda m: _x(m, "uint8").clamp(m.tensor(-1), None))


FLOATING = ["float32", "float64", "float16", "bfloat16", "complex64"]
# ints a floating tensor takes as they are (PyTorch reads each as an int64, or a uint64 from 2**63 on), and the first
# ones past that range (its OverflowError)
FLOATING_VALUES = [-1, -300, 7, -(2**63), 2**63, 2**64 - 1, 2**64, -(2**63) - 1]


def _floating(m, dtype):
    return m.tensor([-7.0, 0.0, 1.5, 5.0], dtype=getattr(m, dtype))


@pytest.mark.parametrize("value", FLOATING_VALUES)
@pytest.mark.parametrize("name", ["add_", "sub_", "mul_", "div_", "lt_", "eq_", "ge_"])
@pytest.mark.parametrize("dtype", FLOATING)
def test_an_int_operand_beside_a_floating_tensor_keeps_its_value_in_place(dtype, name, value):
    """In place, a Python int beside a floating or complex tensor is the number itself (no wrapping into a width), or
    PyTorch's error past int64/uint64."""
    _same(lambda m: getattr(_floating(m, dtype), name)(value))


@pytest.mark.parametrize("value", [-1, -300, 7, -(2**63), 2**63 - 1])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "lt", "eq"])
@pytest.mark.parametrize("dtype", FLOATING)
def test_a_numpy_int_beside_a_floating_tensor_keeps_its_value(dtype, op, value):
    """A NumPy int64 number beside a floating or complex tensor, on either side: the number itself."""
    _same(lambda m: OPERATORS[op](_floating(m, dtype), np.int64(value)))
    if op in ("add", "sub", "mul"):
        _same(lambda m: OPERATORS[op](np.int64(value), _floating(m, dtype)))

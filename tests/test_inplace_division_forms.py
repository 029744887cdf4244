"""In-place rounded division as PyTorch's: ``div_(..., rounding_mode="trunc")`` rounds toward zero (it floored),
``floor_divide_`` and ``x //= y``, ``x %= y`` and ``x **= y`` write into ``x`` itself (Python rebound ``x`` to a
new tensor); their errors are the out-of-place forms'."""

import operator

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_same_error

CALLS = {
    "int8_trunc": lambda m: m.tensor([5, -5, 7], dtype=m.int8).div_(-7, rounding_mode="trunc"),
    "float_trunc": lambda m: m.tensor([5.0, -5.0, 7.5]).div_(-7, rounding_mode="trunc"),
    "float_trunc_tensor": lambda m: m.tensor([5.0, -5.0]).div_(m.tensor(-7.0), rounding_mode="trunc"),
    "half_trunc": lambda m: m.tensor([5.0, -5.0], dtype=m.float16).div_(3, rounding_mode="trunc"),
    "int_floor": lambda m: m.tensor([5, -5]).div_(3, rounding_mode="floor"),
    "floor_divide_": lambda m: m.tensor([5, -5]).floor_divide_(3),
    "floor_divide_float": lambda m: m.tensor([5.0, -5.0]).floor_divide_(m.tensor([2.0, 2.0])),
    "int_by_zero": lambda m: m.tensor([5]).div_(0, rounding_mode="trunc"),
    "floor_by_zero": lambda m: m.tensor([5]).floor_divide_(0),
    "int_by_float": lambda m: m.tensor([5]).div_(2.5, rounding_mode="floor"),
    "bool": lambda m: m.tensor([True]).floor_divide_(1),
    "bad_mode": lambda m: m.tensor([5.0]).div_(2, rounding_mode="x"),
    "int8_wrapped_operand": lambda m: m.tensor([100], dtype=m.int8).div_(300, rounding_mode="trunc"),
}


@pytest.mark.parametrize("name", CALLS)
def test_as_pytorch(name):
    try:
        want = CALLS[name](torch)
    except Exception:  # noqa: BLE001
        assert_same_error(CALLS[name])
        return
    got = CALLS[name](ember)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("op", [operator.ifloordiv, operator.imod, operator.ipow, operator.itruediv])
def test_augmented_assignment_writes_in_place(op):
    results = {}
    for m in (ember, torch):
        x = m.tensor([5.0, -5.0, 7.0])
        view = x[1:]
        y = op(x, 2)
        results[m] = (y is x, view.tolist())
    assert results[ember] == results[torch]

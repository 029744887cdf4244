"""In-place ``add_``/``sub_`` with ``alpha`` of an operand of another dtype, bit for bit against PyTorch: the sum is
computed in PyTorch's common dtype of the two tensors, then written into the input's.

An integer or bool operand beside a half-precision tensor is cast to the half type (PyTorch's promotion keeps the
floating category's dtype; NumPy's would widen float16 with int32 to float64), so a large integer is rounded to it
first; a wider floating operand makes the common dtype float32 or float64, with ``alpha`` in it (not rounded to the
half type). The tensors are 64 elements long: PyTorch's vectorised kernel, whose fused half-precision arithmetic
ember follows (its scalar loop for a few elements rounds ``alpha * other`` to the half type first)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

N = 64
ALPHAS = [0.1, -1.7, 3]
# integers a half type cannot hold exactly (2049 in float16, 257 in bfloat16) and small ones
INTEGERS = np.resize([2049, -4097, 257, -259, 65519, 3, -7, 0, 1, 12345], N)


def _values(dtype: str, rng) -> np.ndarray:
    if dtype == "bool":
        return rng.random(N) < 0.5
    if dtype in ("int8", "uint8"):
        return rng.integers(0 if dtype == "uint8" else -100, 100, N)
    if dtype.startswith("int"):
        return INTEGERS
    return rng.standard_normal(N) * 1000


def _run(lib, form, a_dtype, b_dtype, alpha, a_values, b_values):
    a = lib.tensor(a_values).to(getattr(lib, a_dtype))
    b = lib.tensor(b_values).to(getattr(lib, b_dtype))
    try:
        out = getattr(a, form)(b, alpha=alpha)
    except RuntimeError as err:  # (sub_ of a bool operand: PyTorch's refusal)
        return "refused", str(err)
    assert out is a
    return str(a.dtype).split(".")[-1], a.double().numpy().tobytes()


@pytest.mark.parametrize("form", ["add_", "sub_"])
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("b_dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("a_dtype", ["float16", "bfloat16"])
def test_an_integer_operand_into_a_half_tensor_is_cast_to_it_as_pytorch(a_dtype, b_dtype, alpha, form):
    rng = np.random.default_rng(0)
    a_values, b_values = rng.standard_normal(N) * 3, _values(b_dtype, rng)
    assert _run(ember, form, a_dtype, b_dtype, alpha, a_values, b_values) == \
        _run(torch, form, a_dtype, b_dtype, alpha, a_values, b_values)


@pytest.mark.parametrize("form", ["add_", "sub_"])
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("a_dtype, b_dtype", [("float16", "float32"), ("float16", "float64"), ("bfloat16", "float32"),
                                              ("bfloat16", "float64"), ("float16", "bfloat16"),
                                              ("bfloat16", "float16"), ("float32", "float64")])
def test_a_wider_operand_is_scaled_in_the_common_dtype_as_pytorch(a_dtype, b_dtype, alpha, form):
    # (the input zero: PyTorch's fused multiply-add and ember's product then sum round alike, so the values show
    # the dtype alpha * other was computed in)
    rng = np.random.default_rng(1)
    a_values, b_values = np.zeros(N), _values(b_dtype, rng)
    assert _run(ember, form, a_dtype, b_dtype, alpha, a_values, b_values) == \
        _run(torch, form, a_dtype, b_dtype, alpha, a_values, b_values)

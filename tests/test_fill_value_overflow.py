"""A Python number written into a tensor whose dtype cannot hold it (``full``, ``fill_``, ``masked_fill``,
``clamp``'s bounds, ...): PyTorch's RuntimeError "value cannot be converted to type ... without overflow", where
an arithmetic operand past the range (``x + 1e5``) becomes infinite."""

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close, assert_same_error

MASK = [True, False]
# name -> f(module, dtype, value): the value written into a tensor of that dtype
WRITES = {
    "full": lambda m, d, v: m.full((2,), v, dtype=d),
    "full_like": lambda m, d, v: m.full_like(m.ones(2, dtype=d), v),
    "new_full": lambda m, d, v: m.ones(2, dtype=d).new_full((2,), v),
    "fill_": lambda m, d, v: m.ones(2, dtype=d).fill_(v),
    "masked_fill": lambda m, d, v: m.ones(2, dtype=d).masked_fill(m.tensor(MASK), v),
    "masked_fill_": lambda m, d, v: m.ones(2, dtype=d).masked_fill_(m.tensor(MASK), v),
    "index_fill": lambda m, d, v: m.ones(2, dtype=d).index_fill(0, m.tensor([0]), v),
    "clamp_min": lambda m, d, v: m.ones(2, dtype=d).clamp(min=-v),
    "clamp_max": lambda m, d, v: m.ones(2, dtype=d).clamp(max=v),
    "clamp_": lambda m, d, v: m.ones(2, dtype=d).clamp_(-v, v),
}
# dtype name -> a finite value past its range
TOO_BIG = {"float16": 1e5, "bfloat16": 1e39, "float32": 1e39, "int8": 300}


@pytest.mark.parametrize("dtype", TOO_BIG)
@pytest.mark.parametrize("write", WRITES)
def test_a_value_past_the_dtypes_range_is_refused_as_pytorch(write, dtype):
    if dtype == "int8" and write.startswith("clamp"):
        pytest.skip("an integer tensor's clamp bounds are converted, not checked")
    assert_same_error(lambda m: WRITES[write](m, getattr(m, dtype), TOO_BIG[dtype]))


@pytest.mark.parametrize("value", [float("inf"), 65504.0, 3e38])
@pytest.mark.parametrize("write", ["full", "fill_", "masked_fill", "clamp_max"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_infinity_and_the_largest_values_are_written(write, dtype, value):
    if dtype == "float16" and value == 3e38:
        return  # (past float16's range: the test above)
    got, want = (WRITES[write](m, getattr(m, dtype), value) for m in (ember, torch))
    assert got.dtype.name == dtype
    assert_close(got.float(), want.float())


def test_an_arithmetic_operand_past_the_range_becomes_infinite():
    assert_close(ember.ones(2, dtype=ember.float16) + 1e5, torch.ones(2, dtype=torch.float16) + 1e5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_indexed_assignment_past_the_range_stores_infinity_silently(dtype):
    got, want = (m.ones(2, dtype=getattr(m, dtype)) for m in (ember, torch))
    got[0], want[0] = 1e39, 1e39  # (PyTorch's index_put_ takes the number as a 0-d tensor: no overflow check)
    assert_close(got.float(), want.float())


FILLS = ["full", "full_like", "new_full", "fill_", "masked_fill", "masked_fill_", "index_fill"]


@pytest.mark.parametrize("value", [1e5, 300.0, 127.5, -1.0, -0.5, float("inf"), float("nan")])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("write", FILLS)
def test_a_float_outside_an_integer_dtypes_range_is_refused_as_pytorch(write, dtype, value):
    # c10 compares the double with the type's limits (NaN never fits); NumPy wrapped it or warned
    if dtype != "uint8" and value in (-1.0, -0.5) or dtype == "int16" and value in (300.0, 127.5) or \
            dtype == "uint8" and value == 127.5:
        return  # (within range: the next test)
    assert_same_error(lambda m: WRITES[write](m, getattr(m, dtype), value))


@pytest.mark.parametrize("write", FILLS)
def test_a_float_within_an_integer_dtypes_range_is_truncated_as_pytorch(write):
    for dtype, value in (("int8", -128.0), ("int8", 127.0), ("int8", -0.7), ("uint8", 255.0), ("uint8", 2.7),
                         ("int16", -1.5)):
        got, want = (WRITES[write](m, getattr(m, dtype), value) for m in (ember, torch))
        assert got.dtype.name == dtype
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("value", [np.float64(1e5), np.float32(1e5), np.float64(65519.0), np.int64(100000)])
@pytest.mark.parametrize("write", FILLS)
def test_a_numpy_scalar_past_a_half_dtypes_range_is_refused_as_pytorch(write, value):
    # a NumPy scalar is the Python number it holds (NumPy's cast warned and gave inf)
    assert_same_error(lambda m: WRITES[write](m, m.float16, value))


@pytest.mark.parametrize("write", FILLS)
def test_numpy_scalars_fill_as_their_python_numbers(write):
    for dtype, value in (("uint8", np.int64(-1)), ("int8", np.float64(2.5)), ("float16", np.float32(0.1)),
                         ("bfloat16", np.float64(3.0)), ("int8", np.int64(300))):
        outcome = []
        for m in (ember, torch):
            try:
                outcome.append(WRITES[write](m, getattr(m, dtype), value).float().tolist())
            except RuntimeError as err:
                outcome.append(str(err))
        assert outcome[0] == outcome[1]


@pytest.mark.parametrize("write", FILLS)
def test_a_float_past_a_complex_dtypes_parts_is_refused_as_pytorch(write):
    assert_same_error(lambda m: WRITES[write](m, m.complex64, 1e39))


SET_INDICES = {"int": lambda m: 0, "slice": lambda m: slice(0, 2), "mask": lambda m: m.tensor([True, False]),
               "tensor": lambda m: m.tensor([1])}


def _set(m, dtype, index, value):
    x = m.zeros(2, dtype=getattr(m, dtype))
    x[SET_INDICES[index](m)] = value
    return x


@pytest.mark.parametrize("dtype, value", [("float32", 1e39), ("float32", -3.5e38), ("int8", 300), ("int8", 1e5),
                                          ("uint8", -0.5), ("int32", float("nan")), ("int8", np.float64(1e5))])
@pytest.mark.parametrize("index", SET_INDICES)
def test_indexed_assignment_past_a_full_precision_range_is_refused_as_pytorch(dtype, value, index):
    # x[i] = number is PyTorch's scalar_tensor of x's dtype: checked, but for the half precision dtypes
    assert_same_error(lambda m: _set(m, dtype, index, value))


@pytest.mark.parametrize("index", SET_INDICES)
def test_indexed_assignment_converts_numbers_as_pytorch(index):
    for dtype, value in (("uint8", -1), ("int8", 2.7), ("float16", 1e5), ("int64", True)):
        got, want = (_set(m, dtype, index, value) for m in (ember, torch))
        assert got.tolist() == want.tolist()

"""``torch.signbit`` / ``Tensor.signbit`` against PyTorch: -0.0 and a negative NaN count, integers by sign, unsigned
and bool never, float16/bfloat16 too; complex is PyTorch's error."""

import warnings

import pytest
import torch

import ember
from tests.oracle import assert_same_error

VALUES = [-2.0, -0.0, 0.0, 3.0, float("inf"), float("-inf"), float("nan"), -float("nan"), 1e-45, -1e-45]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int8", "uint8", "bool"])
def test_signbit_matches_pytorch(dtype):
    """ember had no signbit (a MissingFeatureError)."""
    results = []
    for m in (torch, ember):
        values = VALUES if "float" in dtype else [-3, 0, 2, 1] if dtype != "uint8" else [0, 200, 1, 3]
        if dtype == "bfloat16":  # (a NaN converted to bfloat16 may carry another sign: docs/api.md)
            values = [v for v in values if v == v]
        x = m.tensor(values).to(getattr(m, dtype)) if dtype != "bool" else m.tensor([True, False])
        out = (m.signbit(x), x.signbit(), m.signbit(x.reshape(-1, 1).expand(-1, 2).t()))
        results.append([(str(o.dtype).split(".")[-1], o.tolist()) for o in out])
    assert results[1] == results[0]


def test_signbit_of_complex_is_pytorchs_error():
    assert_same_error(lambda m: m.signbit(m.tensor([1j])))


def test_signbit_of_float64_beyond_float32s_range_warns_nothing():
    """float64 values float32 cannot hold (1e300, 1e-320) are read in their own type: no overflow warning of a
    conversion, and the signs of the tiny ones kept."""
    values = [1e300, -1e300, 1e-320, -1e-320, -5e-324, -0.0, float("-inf"), -float("nan")]
    results = []
    for m in (torch, ember):
        x = m.tensor(values, dtype=m.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            results.append(m.signbit(x).tolist())
    assert results[1] == results[0] == [False, True, False, True, True, True, True, True]

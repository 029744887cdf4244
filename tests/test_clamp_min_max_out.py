"""``torch.clamp_min`` / ``torch.clamp_max`` with ``out=``, against PyTorch: the result written into out (resized
from empty), out returned; out's dtype must be the result's (the promoted dtype: an int tensor with a float bound
gives float), else PyTorch's RuntimeError; an input requiring grad is PyTorch's error."""
import numpy as np
import pytest
import torch

import ember

CASES = [
    ("float32", 0.5, "float32"),
    ("int64", 0.5, "float32"),  # (promoted: int with a float bound)
    ("int64", 2, "int64"),
    ("float64", -1.0, "float64"),
    ("int64", "tensor", "int64"),
    ("float32", "tensor", "float32"),
]


def run(m, name, x_dtype, bound, out_dtype, out_shape):
    x = m.tensor([1, 5, -2, 3], dtype=getattr(m, x_dtype))
    bound = m.tensor([0, 2, 3, 4], dtype=getattr(m, x_dtype)) if bound == "tensor" else bound
    out = m.empty(out_shape, dtype=getattr(m, out_dtype))
    try:
        result = getattr(m, name)(x, bound, out=out)
    except RuntimeError as e:
        return "error", str(e)
    assert result is out
    return result.dtype, result.numpy().copy()


@pytest.mark.parametrize("name", ["clamp_min", "clamp_max"])
@pytest.mark.parametrize("x_dtype, bound, out_dtype", CASES)
@pytest.mark.parametrize("out_shape", [(0,), (4,)])
def test_clamp_min_max_write_out_as_pytorchs(name, x_dtype, bound, out_dtype, out_shape):
    got = run(ember, name, x_dtype, bound, out_dtype, out_shape)
    want = run(torch, name, x_dtype, bound, out_dtype, out_shape)
    assert str(got[0]).split(".")[-1] == str(want[0]).split(".")[-1]
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("name", ["clamp_min", "clamp_max"])
@pytest.mark.parametrize("x_dtype, out_dtype", [("float32", "float64"), ("float32", "int64"), ("int64", "int64")])
def test_clamp_min_max_out_of_another_dtype_is_pytorchs_error(name, x_dtype, out_dtype):
    bound = 0.5  # (int64 input: a float32 result, which an int64 out cannot take)
    got = run(ember, name, x_dtype, bound, out_dtype, (4,))
    want = run(torch, name, x_dtype, bound, out_dtype, (4,))
    assert want[0] == "error"
    assert got == want


@pytest.mark.parametrize("name", ["clamp_min", "clamp_max"])
def test_clamp_min_max_out_refuses_an_input_requiring_grad(name):
    for m in (ember, torch):
        x = m.tensor([1.0, -2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            getattr(m, name)(x, 0.0, out=m.empty(2))

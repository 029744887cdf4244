"""``F.linear`` / ``nn.Linear`` on operands of different dtypes: PyTorch's RuntimeError and its words, which come
from the op its linear hands them to (addmm with a bias, matmul's mm or bmm without one or for a non-contiguous
input of more dimensions)."""

import pytest
import torch

import ember

DTYPES = [("float64", "float32", "float32"), ("float32", "float64", None), ("float32", "float32", "float64"),
          ("float64", "float32", None), ("float64", "float64", "float32"), ("float32", "float64", "float64"),
          ("float32", "float64", "float32"), ("int64", "float32", "float32"), ("float16", "float32", None),
          ("float64", "float32", "float16")]
SHAPES = [(2, 3), (3,), (2, 2, 3), "non-contiguous 3-D"]


def _error(lib, shape, dtypes, weight_requires_grad=False):
    x_dtype, w_dtype, b_dtype = (None if d is None else getattr(lib, d) for d in dtypes)
    if shape == "non-contiguous 3-D":
        x = lib.ones(3, 2, 2, dtype=x_dtype).transpose(0, 2)
    else:
        x = lib.ones(*shape, dtype=x_dtype)
    w = lib.ones(2, 3, dtype=w_dtype, requires_grad=weight_requires_grad)
    b = None if b_dtype is None else lib.ones(2, dtype=b_dtype)
    with pytest.raises(RuntimeError) as info:
        lib.nn.functional.linear(x, w, b)
    return str(info.value)


@pytest.mark.parametrize("dtypes", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_linear_dtype_mismatch_as_pytorch(shape, dtypes):
    if shape == "non-contiguous 3-D" and dtypes[0] == dtypes[1]:
        pytest.skip("PyTorch adds a bias of another floating dtype in place after matmul; ember refuses it")
    assert _error(ember, shape, dtypes) == _error(torch, shape, dtypes)


@pytest.mark.parametrize("dtypes", [("float64", "float32", None), ("float16", "float32", None)])
def test_non_contiguous_input_against_a_weight_that_requires_grad(dtypes):
    # matmul folds the input into a matrix when the weight requires grad: mm's words, not bmm's
    shape = "non-contiguous 3-D"
    assert _error(ember, shape, dtypes, True) == _error(torch, shape, dtypes, True)


def test_nn_linear_module_as_pytorch():
    messages = []
    for lib in (ember, torch):
        layer = lib.nn.Linear(3, 2)
        with pytest.raises(RuntimeError) as info:
            layer(lib.ones(4, 3, dtype=lib.float64))
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "mat1 and mat2 must have the same dtype, but got Double and Float"

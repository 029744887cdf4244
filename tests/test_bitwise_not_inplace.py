"""``Tensor.bitwise_not_`` against PyTorch: integer and bool tensors inverted in place (the same object, its version
bumped, a view writing through to its base), PyTorch's error for floating and complex tensors."""

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_bitwise_not_in_place_as_pytorch(dtype):
    values = np.array([[0, 1, 5], [7, 2, 3]])
    results = []
    for fw in (torch, ember):
        base = fw.tensor(values.astype(dtype))
        view = base[:, 1:]
        version = base._version
        out = view.bitwise_not_()
        assert out is view
        assert base._version == version + 1
        results.append((base.numpy().copy(), str(base.dtype).split(".")[-1]))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    assert results[1][1] == results[0][1]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_bitwise_not_in_place_of_a_floating_tensor_is_pytorchs_error(dtype):
    errors = []
    for fw in (torch, ember):
        with pytest.raises(Exception) as caught:
            fw.ones(3, dtype=getattr(fw, dtype)).bitwise_not_()
        errors.append(caught)
    assert type(errors[1].value) is type(errors[0].value)
    assert str(errors[1].value) == str(errors[0].value)

"""``dtype.to_real()`` and ``dtype.to_complex()`` for every dtype, against PyTorch (``torch.can_cast`` is in
test_dtype_can_cast.py)."""

import pytest
import torch

import ember

PARTS = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
         "complex64", "complex128", "complex32"]  # (named by ember, which has no tensors of it)


@pytest.mark.parametrize("name", PARTS)
@pytest.mark.parametrize("method", ["to_real", "to_complex"])
def test_dtype_to_real_and_to_complex_are_pytorchs(name, method):
    """ember's dtypes had neither method (AttributeError); float16's complex type is complex32, an integer or bool
    dtype has no complex type (PyTorch's RuntimeError)."""
    def outcome(fw):
        try:
            return repr(getattr(getattr(fw, name), method)()).replace("torch.", "ember.")
        except RuntimeError as e:
            return f"RuntimeError: {e}"

    assert outcome(ember) == outcome(torch)

"""``torch.can_cast`` over every pair of the dtypes both frameworks have, and its TypeError for a non-dtype;
``dtype.to_real()`` and ``dtype.to_complex()`` for every dtype."""

import pytest
import torch

import ember

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
         "complex64", "complex128"]
PARTS = NAMES + ["complex32"]  # (named by ember, which has no tensors of it)


def test_can_cast_table_matches_torch():
    for a in NAMES:
        for b in NAMES:
            expected = torch.can_cast(getattr(torch, a), getattr(torch, b))
            assert ember.can_cast(getattr(ember, a), getattr(ember, b)) is expected, (a, b)


@pytest.mark.parametrize("args", [(1, "int32"), ("int32", "x")])
def test_can_cast_refuses_what_is_not_a_dtype(args):
    def build(fw):
        return [getattr(fw, a) if a in NAMES else a for a in args]

    with pytest.raises(TypeError) as expected:
        torch.can_cast(*build(torch))
    with pytest.raises(TypeError) as got:
        ember.can_cast(*build(ember))
    assert str(got.value) == str(expected.value)


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

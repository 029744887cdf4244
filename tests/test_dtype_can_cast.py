"""``torch.can_cast`` (PyTorch's casting rule of in-place ops and ``out=``) against PyTorch, every pair of dtypes."""

import pytest
import torch

import ember
from tests.oracle import assert_same_error

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
         "complex64", "complex128"]


@pytest.mark.parametrize("src", NAMES)
def test_can_cast_matches_pytorch(src):
    """ember had no can_cast (a MissingFeatureError)."""
    for dst in NAMES:
        assert ember.can_cast(getattr(ember, src), getattr(ember, dst)) == torch.can_cast(
            getattr(torch, src), getattr(torch, dst)), (src, dst)
    assert ember.can_cast(from_=getattr(ember, src), to=ember.int64) == torch.can_cast(
        from_=getattr(torch, src), to=torch.int64)


@pytest.mark.parametrize("args", [(1, "int32"), (1, 2.5), ("float32", 2.5)])
def test_can_cast_of_a_non_dtype_is_pytorchs_typeerror(args):
    def call(m):
        return m.can_cast(*(getattr(m, a) if isinstance(a, str) else a for a in args))
    assert_same_error(call)

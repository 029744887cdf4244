"""``torch.tensor`` of Python ints past int64 among others: PyTorch reads each int as an int64 (its ValueError past
that) unless a float among them, or a floating ``dtype=``, makes it read them as doubles. NumPy makes
``[1, 2**63]`` a float64 array, which ember took as floats."""

import pytest

from tests.oracle import assert_same_outcome


@pytest.mark.parametrize("data", [[[1, 2**63]], [1, 2**63], [-1, 2**63], [True, 2**63], [1, -2**63 - 1],
                                  [[1, 2], [3, 2**63]], [2**63, 1.5], [[1, 2], [2**63, 1.5]], [1.0, 2**63],
                                  [1, 2**63 - 1], [-2**63, 1]])
def test_ints_past_int64_as_pytorch(data):
    assert_same_outcome(lambda m: m.tensor(data))
    assert_same_outcome(lambda m: m.tensor(str(m.tensor(data).dtype).endswith(("float32", "int64"))))


@pytest.mark.parametrize("dtype", ["float64", "int64", "float32"])
def test_ints_past_int64_with_a_dtype(dtype):
    assert_same_outcome(lambda m: m.tensor([1, 2**63], dtype=getattr(m, dtype)))
    assert_same_outcome(lambda m: m.tensor([1, 2**63], dtype=getattr(m, dtype)).dtype.is_floating_point)

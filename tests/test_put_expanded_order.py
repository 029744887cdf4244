"""``put_`` into an expanded tensor: PyTorch checks the index dtype, the source's dtype and element count first, then
refuses the overlapping input, then the indices' range."""

from __future__ import annotations

import pytest

from tests.oracle import assert_same_error


def _expanded(m):
    return m.ones(3).expand(2, 3)


CALLS = {
    "valid": lambda m: _expanded(m).put_(m.tensor([0, 1]), m.tensor([5.0, 6.0])),
    "out of range": lambda m: _expanded(m).put_(m.tensor([10]), m.tensor([1.0])),
    "numel": lambda m: _expanded(m).put_(m.tensor([0, 1]), m.tensor([1.0])),
    "index dtype": lambda m: _expanded(m).put_(m.tensor([0.0, 1.0]), m.tensor([5.0, 6.0])),
    "source dtype": lambda m: _expanded(m).put_(m.tensor([0, 1]), m.tensor([5.0, 6.0], dtype=m.float64)),
    "accumulate numel": lambda m: _expanded(m).put_(m.tensor([0]), m.tensor([5.0, 6.0]), accumulate=True),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_put_into_an_expanded_tensor_as_pytorch(call):
    assert_same_error(CALLS[call])

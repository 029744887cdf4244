"""Strides as PyTorch reports them where NumPy's differ: tensors with no elements (NumPy makes every stride 0,
PyTorch computes contiguous ones, a size-0 dimension counted as 1) and views of them, and nonzero's column-major
result."""

import numpy as np
import pytest
import torch

import ember

CASES = {
    "empty": lambda m: m.empty(0, 3),
    "zeros_3d": lambda m: m.zeros(2, 0, 3),
    "tensor_1d": lambda m: m.tensor([]),
    "ones_trailing_zero": lambda m: m.ones(4, 0),
    "transpose": lambda m: m.zeros(0, 3).t(),
    "transpose_contiguous": lambda m: m.zeros(0, 3).t().contiguous(),
    "permute": lambda m: m.empty(2, 0, 3).permute(2, 0, 1),
    "op_result": lambda m: m.zeros(0, 3) + 1,
    "cat": lambda m: m.cat([m.zeros(0, 3), m.zeros(0, 3)]),
    "slice_rows": lambda m: m.zeros(4, 3)[2:2],
    "reshape": lambda m: m.zeros(0, 6).reshape(0, 2, 3),
    "expand": lambda m: m.zeros(1, 3).expand(0, 3),
    "nonzero": lambda m: m.nonzero(m.tensor([[1, 0], [1, 1]])),
    "nonzero_none": lambda m: m.nonzero(m.zeros(2, 3)),
    "nonzero_1d": lambda m: m.nonzero(m.tensor([1, 0, 1])),
    "nonzero_0d": lambda m: m.nonzero(m.tensor(1)),
    "argwhere": lambda m: m.argwhere(m.tensor([[0, 2, 0], [1, 1, 0]])),
    "nonzero_method": lambda m: m.tensor([[0.0, 2.0], [3.0, 0.0]]).nonzero(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_strides_match_pytorch(name):
    t, e = CASES[name](torch), CASES[name](ember)
    assert e.shape == t.shape
    assert e.stride() == t.stride()
    assert e.is_contiguous() == t.is_contiguous()
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_nonzero_result_is_usable_as_indices():
    x = np.arange(12.0).reshape(3, 4) % 3
    t, e = torch.tensor(x), ember.tensor(x)
    ti, ei = torch.nonzero(t), ember.nonzero(e)
    np.testing.assert_array_equal(e[ei[:, 0], ei[:, 1]].numpy(), t[ti[:, 0], ti[:, 1]].numpy())
    np.testing.assert_array_equal((ei * 2).numpy(), (ti * 2).numpy())
    ei[0, 0] = 7  # writable, as PyTorch's
    assert ei[0, 0].item() == 7

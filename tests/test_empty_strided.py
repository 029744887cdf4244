"""``torch.empty_strided`` and ``Tensor.new_empty_strided``: a tensor of the given sizes and strides on storage just
large enough for it, with PyTorch's checks and errors, on the CPU and the meta device."""

import pytest
import torch

import ember
from tests.oracle import assert_same_error


def _described(t):
    return tuple(t.shape), t.stride(), str(t.dtype).split(".")[1], t.is_contiguous(), t.requires_grad, t.is_meta


@pytest.mark.parametrize("size, stride", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ([2, 3], [3, 1]), ((2, 0), (5, 7)),
                                          ((), ()), ((3,), (0,)), ((2, 3, 4), (1, 8, 2))])
def test_empty_strided_is_pytorchs(size, stride):
    got = []
    for m in (ember, torch):
        t = m.empty_strided(size, stride)
        got.append((_described(t), t.fill_(2).tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("size, stride", [((2, 3), (3,)), ((2, 3), (-1, 1)), ((2, -3), (3, 1)), (2, 1), ((2, 3), 1)])
def test_empty_strided_refuses_as_pytorch(size, stride):
    assert_same_error(lambda m: m.empty_strided(size, stride))


def test_empty_strided_keywords_and_values_written():
    got = []
    for m in (ember, torch):
        t = m.empty_strided((4, 3), (1, 4), dtype=m.float16, requires_grad=True)
        u = m.empty_strided((4, 3), (1, 4)).copy_(m.arange(12.0).reshape(4, 3))
        got.append((_described(t), u.tolist(), u.t().is_contiguous(), _described(
            m.empty_strided((2, 3), (1, 2), device="meta"))))
    assert got[0] == got[1]


def test_new_empty_strided_takes_its_tensors_dtype_and_device():
    got = []
    for m in (ember, torch):
        x = m.ones(2, dtype=m.int32)
        got.append((_described(x.new_empty_strided((2, 3), (1, 2))),
                    _described(x.new_empty_strided((2, 3), (1, 2), dtype=m.float64, requires_grad=True)),
                    _described(m.empty(1, device="meta").new_empty_strided((3, 2), (1, 3)))))
    assert got[0] == got[1]

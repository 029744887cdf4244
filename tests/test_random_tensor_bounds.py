"""The integer bounds of ``randint``, ``randint_like`` and ``random_`` given as 0-d integer tensors, as PyTorch's
argument parser reads an ``int`` (HashNeRF's total-variation loss draws ``torch.randint(0, resolution - cube_size,
(3,))`` of 0-d tensors): the same draws as with Python ints; a floating tensor, or one with a dimension, is still
refused by random_."""

import pytest
import torch

import ember

DRAWS = [
    lambda m: m.randint(0, m.tensor(7), (3,)),
    lambda m: m.randint(m.tensor(2), m.tensor(9), (3,)),
    lambda m: m.randint(m.tensor(9), (3,)),
    lambda m: m.randint(0, m.tensor(7, dtype=m.int32), (3,)),
    lambda m: m.randint(0, m.tensor(7, dtype=m.uint8), (3,)),
    lambda m: m.empty(3).random_(0, m.tensor(5)),
    lambda m: m.empty(3).random_(m.tensor(5)),
    lambda m: m.empty(3, dtype=m.int64).random_(m.tensor(-3), m.tensor(4)),
    lambda m: m.randint_like(m.empty(3), m.tensor(5)),
    lambda m: m.randint_like(m.empty(3), 0, m.tensor(5)),
]


@pytest.mark.parametrize("k", range(len(DRAWS)))
def test_one_element_integer_tensor_bounds_draw_as_ints(k):
    out = []
    for m in (torch, ember):
        m.manual_seed(0)
        r = DRAWS[k](m)
        out.append((r.tolist(), str(r.dtype).split(".")[1]))
    assert out[0] == out[1]


@pytest.mark.parametrize("bad", [lambda m: m.randint(0, m.tensor(7.0), (3,)),
                                 lambda m: m.empty(3).random_(0, m.tensor(5.0)),
                                 lambda m: m.empty(3).random_(0, m.tensor([5, 6])),
                                 lambda m: m.empty(3).random_(m.tensor([1]), 4)])
def test_floating_or_many_element_tensor_bounds_are_refused(bad):
    for m in (torch, ember):
        with pytest.raises(TypeError):
            bad(m)


def test_randint_takes_a_one_element_tensor_bound_as_pytorch():
    out = []
    for m in (torch, ember):
        m.manual_seed(0)
        out.append(m.randint(m.tensor([9]), (3,)).tolist())
        out.append(m.randint(m.tensor([1]), m.tensor([[5]]), (4,)).tolist())
        out.append(m.randint(2, m.tensor([7], dtype=m.uint8), (4,)).tolist())
    assert out[:3] == out[3:]


@pytest.mark.parametrize("bound", [[9.5], [2, 9], []])
def test_randint_refuses_other_tensor_bounds_as_pytorch(bound):
    for m in (torch, ember):
        with pytest.raises(TypeError, match="argument 'high' \\(position 1\\) must be int, not Tensor"):
            m.randint(m.tensor(bound), (3,))
        with pytest.raises(TypeError, match="invalid combination of arguments - got \\(int, Tensor, tuple\\)"):
            m.randint(0, m.tensor(bound), (3,))

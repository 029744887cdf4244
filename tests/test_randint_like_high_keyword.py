"""``torch.randint_like(t, high=...)`` without ``low`` (jettify/pytorch-optimizer's Adahessian draws its
Rademacher vectors as ``2 * torch.randint_like(p, high=2, memory_format=torch.preserve_format) - 1``): PyTorch's
overload ``randint_like(input, high)`` takes ``high`` by keyword too."""

import pytest
import torch

import ember


def test_randint_like_high_keyword_alone():
    for m in (torch, ember):
        x = m.zeros(2, 3)
        m.manual_seed(0)
        r = m.randint_like(x, high=2, memory_format=m.preserve_format)
        assert tuple(r.shape) == (2, 3) and str(r.dtype).endswith("float32")
        assert ((r == 0) | (r == 1)).all()


def test_randint_like_without_bounds_is_a_type_error():
    for m in (torch, ember):
        with pytest.raises(TypeError):
            m.randint_like(m.zeros(2))

"""lp_pool1d/2d/3d and LPPool1d/2d/3d against PyTorch: values and gradients for p = 1, 2, 3 (odd p on signed input
clamps negative window sums to zero), fractional p, +-inf (max pooling of |x|), stride and ceil_mode, repr."""

import numpy as np
import pytest
import torch
from oracle import check

import ember

CASES = [
    (1, (2, 3, 9), 2.0, dict(kernel_size=3)),
    (1, (3, 10), 3, dict(kernel_size=2, stride=1)),
    (2, (2, 3, 8, 8), 2, dict(kernel_size=2)),
    (2, (2, 3, 7, 9), 1.5, dict(kernel_size=(2, 3), stride=(1, 2), ceil_mode=True)),
    (2, (2, 3, 6, 6), float("inf"), dict(kernel_size=2)),
    (2, (2, 3, 6, 6), float("-inf"), dict(kernel_size=3, stride=1)),
    (3, (1, 2, 4, 6, 4), 2, dict(kernel_size=2)),
]


@pytest.mark.parametrize("nd,shape,p,kwargs", CASES)
def test_functional(nd, shape, p, kwargs):
    positive = p not in (3, float("inf"), float("-inf"))  # x^p of a negative x is nan for fractional p
    check(lambda m, x: getattr(m.nn.functional, f"lp_pool{nd}d")(x, p, **kwargs), [shape], dtype=np.float64,
          positive=positive)


@pytest.mark.parametrize("nd,shape,p,kwargs", CASES[:4])
def test_module(nd, shape, p, kwargs):
    check(lambda m, x: getattr(m.nn, f"LPPool{nd}d")(p, **kwargs)(x), [shape], positive=p != 3)


def test_repr():
    assert repr(ember.nn.LPPool2d(2, (2, 3), stride=1)) == repr(torch.nn.LPPool2d(2, (2, 3), stride=1))

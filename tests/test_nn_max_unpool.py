"""max_unpool1d/2d/3d and MaxUnpool1d/2d/3d against PyTorch: SegNet's pool-then-unpool with the pooling indices,
values and gradients, output_size (spatial or full), unbatched input, module attributes, errors."""

import numpy as np
import pytest
import torch
from oracle import check
from test_data_samplers import raises_like_torch

CASES = [
    (1, (2, 3, 9), dict(kernel_size=2), {}),
    (1, (3, 8), dict(kernel_size=3, stride=2, padding=1), dict(output_size=[8])),  # unbatched
    (2, (2, 3, 8, 8), dict(kernel_size=2), {}),
    (2, (2, 3, 7, 9), dict(kernel_size=2, stride=2), dict(output_size=(7, 9))),  # odd sizes need output_size
    (2, (2, 3, 7, 9), dict(kernel_size=2, stride=2), dict(output_size=(2, 3, 7, 9))),
    (2, (3, 6, 6), dict(kernel_size=3, stride=2, padding=1), dict(output_size=(6, 6))),  # unbatched
    (3, (1, 2, 4, 6, 4), dict(kernel_size=2), {}),
]


@pytest.mark.parametrize("nd,shape,pool,extra", CASES)
def test_unpool_after_pool(nd, shape, pool, extra):
    def run(m, x):
        F = m.nn.functional
        pooled, idx = getattr(F, f"max_pool{nd}d")(x, return_indices=True, **pool)
        return getattr(F, f"max_unpool{nd}d")(pooled * 2, idx, **pool, **extra)

    check(run, [shape], dtype=np.float64)


@pytest.mark.parametrize("nd,shape,pool,extra", CASES)
def test_module(nd, shape, pool, extra):
    def run(m, x):
        pool_layer = getattr(m.nn, f"MaxPool{nd}d")(return_indices=True, **pool)
        unpool = getattr(m.nn, f"MaxUnpool{nd}d")(**pool)
        pooled, idx = pool_layer(x)
        return unpool(pooled, idx, **extra)

    check(run, [shape])


def test_module_attributes_and_repr():
    for m in (torch, __import__("ember")):
        layer = m.nn.MaxUnpool2d(3, padding=1)
        assert (layer.kernel_size, layer.stride, layer.padding) == ((3, 3), (3, 3), (1, 1))
    assert repr(__import__("ember").nn.MaxUnpool3d(2)) == repr(torch.nn.MaxUnpool3d(2))


@pytest.mark.parametrize("make", [
    lambda m: m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 2, dtype=m.int64), 2,
                                           output_size=(9, 9)),
    lambda m: m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 2, dtype=m.int64), 2,
                                           output_size=(4,)),
])
def test_errors_like_torch(make):
    raises_like_torch(make)

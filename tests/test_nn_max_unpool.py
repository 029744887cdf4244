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


def _invalid_index(m, nd: int, bad: tuple):
    """Unpooling with indices outside the output: the first invalid one in order is named."""
    indices = m.zeros((2, 2) + (2,) * nd, dtype=m.int64)
    flat = indices.view(-1)
    for position, value in zip((3, 5, 7), bad):
        flat[position] = value
    return getattr(m.nn.functional, f"max_unpool{nd}d")(m.ones((2, 2) + (2,) * nd), indices, 2)


@pytest.mark.parametrize("bad", [(-2, 1, 2), (70, 99, -3), (1, 2, 70)])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_invalid_index_message_names_an_invalid_index(bad, nd):
    """An invalid index is named (a negative one, not the largest valid one), in PyTorch's message (a 1-d input's
    volume reads Nx1, as its 2-d kernel's). Which of several PyTorch names depends on its threads' order."""
    got, want = raises_like_torch(lambda m: _invalid_index(m, nd, bad))
    assert got.startswith("Found an invalid max index: ") and got.endswith(want[want.index(" (output"):])
    assert int(got.split(": ")[1].split(" ")[0]) in [b for b in bad if not 0 <= b < 4 ** nd]


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_indices_must_be_int64(dtype):
    got, want = raises_like_torch(lambda m: m.nn.functional.max_unpool1d(
        m.ones(1, 1, 2), m.tensor([[[1, 2]]]).to(getattr(m, dtype)), 2))
    assert got == want

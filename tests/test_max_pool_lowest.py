"""Max pooling where a window's maximum is the padding's value (every element inside the input -inf, or the lowest
integer): PyTorch's output, its indices (the window's first element inside the input) and its gradient, through
max_pool1d/2d/3d, the MaxPool layers, ceil_mode, dilation, and in the layouts that take the compiled kernels."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close

NEG = -np.inf


def _input(shape, seed, lowest=NEG):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    a[rng.random(shape) < 0.7] = lowest  # most elements at the lowest value: whole windows of it
    return a


CASES = [
    ("max_pool2d", (2, 3, 5, 6), dict(kernel_size=3, stride=1, padding=1)),
    ("max_pool2d", (1, 2, 4, 4), dict(kernel_size=2, stride=1, padding=1)),  # 2x2: the compiled planes kernel
    ("max_pool2d", (1, 2, 7, 5), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool2d", (1, 1, 7, 7), dict(kernel_size=3, stride=2, padding=1, dilation=2)),
    ("max_pool1d", (2, 2, 9), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
    ("max_pool1d", (1, 3, 6), dict(kernel_size=3, stride=1, padding=1, dilation=2)),
    ("max_pool3d", (1, 2, 4, 5, 3), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name,shape,kwargs", CASES)
def test_windows_of_the_lowest_value_as_pytorchs(name, shape, kwargs, seed):
    a = _input(shape, seed)
    a.flat[seed] = 1.0 if seed else NEG
    res = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        out, idx = getattr(m.nn.functional, name)(x, return_indices=True, **kwargs)
        g = m.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)) + 1)
        out.backward(g)
        with m.no_grad():  # the indices computed again, no graph
            _, idx_plain = getattr(m.nn.functional, name)(x, return_indices=True, **kwargs)
        res.append((out, idx, x.grad, idx_plain))
    for e, t in zip(*res):
        assert_close(e, t)


@pytest.mark.parametrize("layout", ["channels_last", "batch_last"])
def test_other_layouts_take_the_same_indices(layout):
    """Channels-last, and batch-last (N innermost in memory: ember's compiled 2-d kernel)."""
    a = _input((2, 3, 6, 6), 5)
    res = []
    for m in (ember, torch):
        if layout == "channels_last":
            x = m.tensor(a, dtype=m.float32).contiguous(memory_format=m.channels_last).requires_grad_()
        else:
            x = m.tensor(a.transpose(1, 2, 3, 0).copy(), dtype=m.float32).permute(3, 0, 1, 2).requires_grad_()
        out, idx = m.nn.functional.max_pool2d(x, 3, stride=1, padding=1, return_indices=True)
        out.sum().backward()
        res.append((out, idx, x.grad))
    for e, t in zip(*res):
        assert_close(e, t)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_windows_of_the_lowest_integer(dtype):
    a = _input((1, 2, 5, 5), 1, lowest=np.iinfo(dtype).min).astype(dtype)
    res = []
    for m in (ember, torch):
        out, idx = m.nn.functional.max_pool2d(m.tensor(a), 3, stride=2, padding=1, ceil_mode=True,
                                              return_indices=True)
        res.append((out, idx))
    for e, t in zip(*res):
        assert_close(e, t)


@pytest.mark.parametrize("layer,shape", [("MaxPool1d", (2, 7)), ("MaxPool2d", (1, 2, 6, 7)), ("MaxPool3d", (2, 5, 4, 3))])
def test_max_pool_layers_with_ceil_mode(layer, shape):
    a = _input(shape, 2)
    res = []
    for m in (ember, torch):
        pool = getattr(m.nn, layer)(3, stride=2, padding=1, ceil_mode=True, return_indices=True)
        x = m.tensor(a, requires_grad=True)
        out, idx = pool(x)
        out.sum().backward()
        res.append((out, idx, x.grad))
    for e, t in zip(*res):
        assert_close(e, t)

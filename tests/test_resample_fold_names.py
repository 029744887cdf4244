"""interpolate, unfold and fold record their nodes under PyTorch's names (the upsample kernel's, adaptive
average pooling's, im2col's and col2im's), with PyTorch's values and gradients."""

import numpy as np
import pytest
import torch
from oracle import assert_close, assert_same_grads

import ember

CASES = [
    ((1, 2, 5), dict(scale_factor=2)),
    ((1, 2, 5), dict(scale_factor=2, mode="nearest-exact")),
    ((1, 2, 5), dict(scale_factor=2, mode="linear")),
    ((1, 2, 4, 5), dict(scale_factor=2)),
    ((1, 2, 4, 5), dict(size=(3, 7), mode="bilinear", align_corners=True)),
    ((1, 2, 4, 5), dict(scale_factor=2, mode="bicubic")),
    ((1, 2, 6, 6), dict(scale_factor=0.5, mode="bilinear", antialias=True)),
    ((1, 2, 6, 6), dict(scale_factor=0.5, mode="bicubic", antialias=True)),
    ((1, 2, 6, 6), dict(size=(4, 3), mode="area")),
    ((1, 2, 3, 4, 4), dict(scale_factor=2, mode="trilinear")),
    ((1, 2, 3, 4, 4), dict(scale_factor=2)),
    ((1, 2, 4, 4, 4), dict(size=(2, 3, 2), mode="area")),
]


@pytest.mark.parametrize("shape,kwargs", CASES)
def test_interpolate_node_name(shape, kwargs):
    res = []
    for m in (ember, torch):
        x = m.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
        y = m.nn.functional.interpolate(x, **kwargs)
        (y * y).sum().backward()
        res.append((y, x))
    assert res[0][0].grad_fn.name() == res[1][0].grad_fn.name()
    assert type(res[0][0].grad_fn).__name__ == type(res[1][0].grad_fn).__name__
    assert_close(res[0][0], res[1][0])
    assert_same_grads([res[0][1]], [res[1][1]])


@pytest.mark.parametrize("op", ["unfold", "fold"])
def test_unfold_fold_node_names(op):
    res = []
    for m in (ember, torch):
        F = m.nn.functional
        if op == "unfold":
            x = m.tensor(np.arange(32.0).reshape(1, 2, 4, 4), requires_grad=True)
            y = F.unfold(x, 2, stride=1)
        else:
            x = m.tensor(np.arange(36.0).reshape(1, 4, 9), requires_grad=True)
            y = F.fold(x, (4, 4), 2, stride=1)
        (y * y).sum().backward()
        res.append((y, x))
    assert res[0][0].grad_fn.name() == res[1][0].grad_fn.name()
    assert_close(res[0][0], res[1][0])
    assert_same_grads([res[0][1]], [res[1][1]])


@pytest.mark.parametrize("op", ["pixel_shuffle", "pixel_unshuffle"])
def test_pixel_shuffle_node_names(op):
    res = []
    for m in (ember, torch):
        x = m.tensor(np.arange(64.0).reshape(1, 4, 4, 4), requires_grad=True)
        y = getattr(m.nn.functional, op)(x, 2)
        (y * y).sum().backward()
        res.append((y, x))
    assert res[0][0].grad_fn.name() == res[1][0].grad_fn.name()
    assert_close(res[0][0], res[1][0])
    assert_same_grads([res[0][1]], [res[1][1]])

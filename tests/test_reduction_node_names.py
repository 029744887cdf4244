"""Each reduction's graph node against PyTorch's, in each of its call forms (all elements, a dim, dims, keepdim):
the name of the node that made every output needing a gradient, and the gradient it gives.

A node that serves several reductions (max and min of all elements share one) names itself from what it
computes; a mistake there leaves every value right, so only the name tells it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

X = np.array([[0.5, -1.0, 2.0, 2.0], [3.0, 0.25, -0.5, 1.0], [1.0, 1.0, -2.0, 0.75]])

CASES = {
    "sum": lambda m, x: m.sum(x),
    "sum dim": lambda m, x: x.sum(1),
    "sum dims keepdim": lambda m, x: x.sum((0, 1), keepdim=True),
    "mean": lambda m, x: m.mean(x),
    "mean dim": lambda m, x: x.mean(0),
    "prod": lambda m, x: m.prod(x),
    "prod dim": lambda m, x: x.prod(1),
    "max": lambda m, x: m.max(x),
    "min": lambda m, x: m.min(x),
    "max method": lambda m, x: x.max(),
    "min method": lambda m, x: x.min(),
    "max dim": lambda m, x: m.max(x, 1),
    "min dim": lambda m, x: m.min(x, 0),
    "max dim keepdim": lambda m, x: x.max(1, keepdim=True),
    "max dim of 0-d": lambda m, x: m.max(x[1, 2], 0),
    "min dim of 0-d": lambda m, x: x[0, 0].min(-1),
    "prod of 0-d dim": lambda m, x: x[1, 1].prod(0),
    "amax": lambda m, x: m.amax(x),
    "amin": lambda m, x: m.amin(x),
    "amax dim": lambda m, x: m.amax(x, 1),
    "amin dims": lambda m, x: m.amin(x, (0, 1)),
    "aminmax": lambda m, x: m.aminmax(x),
    "median": lambda m, x: m.median(x),
    "median dim": lambda m, x: m.median(x, 1),
    "nanmedian": lambda m, x: m.nanmedian(x),
    "kthvalue": lambda m, x: m.kthvalue(x, 2, 1),
    "mode": lambda m, x: m.mode(x, 1),
    "logsumexp": lambda m, x: m.logsumexp(x, 1),
    "std": lambda m, x: m.std(x),
    "var dim": lambda m, x: m.var(x, 0),
    "std_mean": lambda m, x: m.std_mean(x, 1),
    "var_mean": lambda m, x: m.var_mean(x),
    "norm": lambda m, x: m.norm(x),
    "vector_norm dim": lambda m, x: m.linalg.vector_norm(x, 3, 1),
    "cumsum": lambda m, x: m.cumsum(x, 1),
    "cumprod": lambda m, x: m.cumprod(x, 0),
    "cummax": lambda m, x: m.cummax(x, 1),
    "cummin": lambda m, x: m.cummin(x, 0),
    "nansum": lambda m, x: m.nansum(x),
    "nanmean": lambda m, x: m.nanmean(x, 1),
}


def _run(m, case):
    x = m.tensor(X, requires_grad=True)
    out = CASES[case](m, x)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    differentiable = [o for o in outs if o.requires_grad]
    names = [o.grad_fn.name() for o in differentiable]
    weights = [m.tensor(np.linspace(0.5, 1.5, o.numel()).reshape(tuple(o.shape)), dtype=o.dtype)
               for o in differentiable]
    (g,) = m.autograd.grad(differentiable, x, weights)
    return names, g.numpy()


@pytest.mark.parametrize("case", list(CASES))
def test_reduction_node_names_and_gradients_are_pytorchs(case):
    names, grad = _run(ember, case)
    torch_names, torch_grad = _run(torch, case)
    assert names == torch_names
    np.testing.assert_allclose(grad, torch_grad, rtol=1e-12, atol=1e-12)

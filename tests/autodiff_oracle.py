"""Shared by the tests of ``torch.autograd.functional`` and the ``torch.func`` transforms: the same functions
written for either module, inputs for both, and a comparison of nested results (structure, shapes, dtypes, values,
whether each tensor carries a graph)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def both(arrs, requires_grad=False):
    """The same float64 arrays as (torch tensors, ember tensors)."""
    return ([torch.tensor(a, requires_grad=requires_grad) for a in arrs],
            [ember.tensor(a, requires_grad=requires_grad) for a in arrs])


def mlp(m):
    """A small network as a function of its input and weights: linear, tanh, sigmoid, exp, pow, matmul, mean."""
    def f(x, w1, b1, w2):
        h = m.tanh(w1 @ x + b1)
        return (m.sigmoid(w2 @ h) * h[:2].exp()).pow(2).mean()
    return f


def vector_mlp(m):
    """As ``mlp`` with a vector output and two outputs: (vector, scalar)."""
    def f(x, w1):
        h = m.sigmoid(w1 @ x)
        return m.tanh(h) * 2.0 + h.pow(3), (h.exp() * x.sum()).sum()
    return f


def assert_same(mine, theirs, path="result", grad_state=True, atol=1e-10):
    """``mine`` (ember) has ``theirs``'s (torch) structure, and equal tensors at every leaf."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, ember.Tensor), f"{path}: {type(mine).__name__}, PyTorch gives a tensor"
        assert tuple(mine.shape) == tuple(theirs.shape), f"{path}: shape {tuple(mine.shape)} != {tuple(theirs.shape)}"
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], f"{path}: dtype"
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), atol=atol, rtol=1e-7,
                                   err_msg=path)
        if grad_state:
            assert mine.requires_grad == theirs.requires_grad, \
                f"{path}: requires_grad {mine.requires_grad}, PyTorch's {theirs.requires_grad}"
        return
    assert type(mine) is type(theirs), f"{path}: {type(mine).__name__} != {type(theirs).__name__}"
    if isinstance(theirs, dict):
        assert list(mine) == list(theirs), f"{path}: keys {list(mine)} != {list(theirs)}"
        for k in theirs:
            assert_same(mine[k], theirs[k], f"{path}[{k!r}]", grad_state, atol)
    elif isinstance(theirs, (tuple, list)):
        assert len(mine) == len(theirs), f"{path}: length {len(mine)} != {len(theirs)}"
        for i, (a, b) in enumerate(zip(mine, theirs)):
            assert_same(a, b, f"{path}[{i}]", grad_state, atol)
    else:
        assert mine == theirs, f"{path}: {mine!r} != {theirs!r}"


def same_error(call, exc=RuntimeError):
    """``call(torch)`` and ``call(ember)`` raise ``exc`` with the same message (``ember.Size`` for ``torch.Size``)."""
    with pytest.raises(exc) as theirs:
        call(torch)
    with pytest.raises(exc) as mine:
        call(ember)
    assert str(mine.value).replace("ember.", "torch.") == str(theirs.value), f"{mine.value}\n!=\n{theirs.value}"

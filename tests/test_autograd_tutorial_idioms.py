"""Idioms of PyTorch's autograd tutorials, run under ember and PyTorch on the same inputs: the 60-minute blitz's walk
``loss.grad_fn.next_functions[0][0]...`` through a network (linear's AddmmBackward0 lists the bias's, the input's
and the weight's next functions in PyTorch's order), and a custom Function's ``mark_dirty`` on a leaf that requires
grad (PyTorch's in-place error)."""

import numpy as np
import pytest
import torch

import ember


def _blitz_walk(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2))
    x = lib.tensor(np.ones((5, 4), dtype=np.float32))
    loss = lib.nn.MSELoss()(net(x), lib.zeros(5, 2))
    fn, names = loss.grad_fn, []
    while fn is not None:  # the tutorial's chain of first next functions
        names.append(fn.name())
        fn = fn.next_functions[0][0] if fn.next_functions else None
    addmm = loss.grad_fn.next_functions[0][0]
    kinds = [None if f is None else f.name() for f, _ in addmm.next_functions]
    bias_acc = addmm.next_functions[0][0]
    return names, kinds[:2], bias_acc.variable is net[2].bias, addmm.next_functions[1][0].name()


def test_blitz_next_functions_walk_as_torch():
    assert _blitz_walk(ember) == _blitz_walk(torch)


def test_linear_without_bias_next_functions_as_torch():
    for lib in (torch, ember):
        w = lib.ones(2, 3, requires_grad=True)
        x = lib.ones(4, 3, requires_grad=True)
        fn = lib.nn.functional.linear(x * 1, w).grad_fn
        assert fn.name() == "MmBackward0" and len(fn.next_functions) == 2
        assert fn.next_functions[0][0].name() == "MulBackward0"


def _mark_dirty_leaf(lib):
    class AddOne(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError) as err:
        AddOne.apply(lib.ones(3, requires_grad=True))
    through_clone = AddOne.apply(lib.ones(3, requires_grad=True).clone())  # (not a leaf: fine)
    with lib.no_grad():
        AddOne.apply(lib.ones(3, requires_grad=True))  # (nothing recorded: fine)
    return str(err.value), through_clone.grad_fn.name()


def test_mark_dirty_on_a_leaf_that_requires_grad_is_torch_error():
    assert _mark_dirty_leaf(ember) == _mark_dirty_leaf(torch)

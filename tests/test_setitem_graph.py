"""``y[idx] = v`` on a tensor that needs a gradient records PyTorch's nodes: basic indices copy into the view they
make (CopySlices on the base, its edges the base's old history and the value's own, the value viewed and expanded
as PyTorch's copy_to does), indices that narrow nothing copy into the tensor itself (CopyBackwards, FillBackward3),
advanced ones index_put_ (IndexPutBackward0); values and gradients as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import assert_close, assert_same_grads, node_names

import ember

X = np.random.default_rng(0).standard_normal((4, 5))

CASES = {
    "int": lambda m, y, v, w: y.__setitem__(0, v),
    "number": lambda m, y, v, w: y.__setitem__(0, 1.5),
    "zero_dim_index": lambda m, y, v, w: y.__setitem__(m.tensor(2), v),
    "slice_block": lambda m, y, v, w: y.__setitem__((slice(None), slice(1, 3)), w),
    "ellipsis_column": lambda m, y, v, w: y.__setitem__((Ellipsis, 0), 2.0),
    "none_broadcast": lambda m, y, v, w: y.__setitem__((None, 1), v),
    "step_broadcast": lambda m, y, v, w: y.__setitem__(slice(None, None, 2), v),
    "leading_ones": lambda m, y, v, w: y.__setitem__(0, v[None]),
    "zero_dim_value": lambda m, y, v, w: y.__setitem__(1, v.sum()),
    "float32_value": lambda m, y, v, w: y.__setitem__(3, v.float()),
    "whole_slice": lambda m, y, v, w: y.__setitem__(slice(None), v),
    "whole_ellipsis_zero_dim": lambda m, y, v, w: y.__setitem__(Ellipsis, v.sum()),
    "whole_number": lambda m, y, v, w: y.__setitem__(slice(None), 1.0),
    "false": lambda m, y, v, w: y.__setitem__(False, v),
    # a lone True is PyTorch's copy into y.unsqueeze(0) (NumPy's y[True] is a mask, whose result is a copy)
    "true": lambda m, y, v, w: y.__setitem__(True, v),
    "true_number": lambda m, y, v, w: y.__setitem__(True, 2.0),
    "view_of_view": lambda m, y, v, w: y[1:].__setitem__(0, v),
    "self_source": lambda m, y, v, w: y.__setitem__(0, y[2] * 1),
    "mask": lambda m, y, v, w: y.__setitem__(y > 0, 0.5),
    "mask_tensor": lambda m, y, v, w: y.__setitem__(y > 0, v.sum()),
    "advanced": lambda m, y, v, w: y.__setitem__(m.tensor([1, 3]), v),
    "advanced_add": lambda m, y, v, w: exec("y[i] += v", {"y": y, "i": m.tensor([0, 2]), "v": v}),
}


def _run(m, name, cases=CASES):
    x = m.tensor(X, requires_grad=True)
    v = m.tensor(np.arange(5.0), requires_grad=True)
    w = m.tensor(np.full((4, 2), 3.0), requires_grad=True)
    y = x * 2
    cases[name](m, y, v, w)
    return y, (x, v, w)


# a bool among several indices is an index tensor to PyTorch (index_put_ into the view the others make, under its
# CopySlices; ember's IndexPutBackward0): values and gradients as PyTorch's
BOOL_AMONG_OTHERS = {
    "int_true": lambda m, y, v, w: y.__setitem__((0, True), v),
    "ellipsis_true_int": lambda m, y, v, w: y.__setitem__((Ellipsis, True, 1), v.sum()),
    "int_false": lambda m, y, v, w: y.__setitem__((0, False), v),
    "true_slice": lambda m, y, v, w: y.__setitem__((True, slice(1, 3)), v),
}


@pytest.mark.parametrize("name", BOOL_AMONG_OTHERS)
def test_setitem_with_a_bool_among_other_indices_as_pytorch(name):
    (ey, e_in), (ty, t_in) = _run(ember, name, BOOL_AMONG_OTHERS), _run(torch, name, BOOL_AMONG_OTHERS)
    assert_close(ey, ty)
    g = np.cos(np.arange(20.0)).reshape(4, 5)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    assert_same_grads(e_in, t_in)


@pytest.mark.parametrize("name", CASES)
def test_setitem_graph_values_and_gradients_as_pytorch(name):
    (ey, e_in), (ty, t_in) = _run(ember, name), _run(torch, name)
    assert node_names(ey.grad_fn, 4) == node_names(ty.grad_fn, 4)
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__
    assert_close(ey, ty)
    g = np.cos(np.arange(20.0)).reshape(4, 5)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    assert_same_grads(e_in, t_in)


@pytest.mark.parametrize("name", ["int", "step_broadcast", "view_of_view", "zero_dim_value"])
def test_setitem_second_derivatives_as_pytorch(name):
    out = []
    for m in (ember, torch):
        y, (x, v, w) = _run(m, name)
        loss = (y * y).sum()
        gx, gv = m.autograd.grad(loss, (x, v), create_graph=True)
        out.append(m.autograd.grad((gx.sum() + (gv * gv).sum()), (x, v)))
    for e, t in zip(*out):
        assert_close(e, t)


def test_setitem_of_a_view_leaves_its_view_reading_the_new_values():
    for m in (ember, torch):
        x = m.tensor(X, requires_grad=True)
        y = x * 2
        z = y[1:]
        y[1] = m.zeros(5)
        assert node_names(z.grad_fn, 1) == [(0, "AsStridedBackward0"), (1, "CopySlices")]

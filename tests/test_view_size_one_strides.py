"""The stride PyTorch reports for a dimension of size 1 in a view of a non-contiguous tensor (its computeStride): a
view of a column, ``x[:, :, 1:2].view(6, 1)``, steps 1 there, where NumPy's reshape repeated the stride before it.
The values and every other stride were already PyTorch's; a meta tensor's were too."""

import pytest
import torch

import ember


@pytest.mark.parametrize("expr", [
    "x[:, :, 1:2].view(6, 1)", "x[:, :, 1:2].view(2, 3, 1, 1)", "x[:, 1:2, 1:2].view(2, 1)",
    "x[:, 1:2, 1:2].view(1, 2)", "x[:, :, 1:2].unflatten(1, (3, 1))", "x[:, :, 1:2].view(2, 3)",
    "x[:, :, 1:2].view(2, 3, 1)", "x[:, :, 1:2].reshape(6, 1)", "x.narrow(2, 1, 1).view(3, 2, 1)",
    "x.transpose(0, 2)[1:2].view(1, 3, 2, 1)", "x[:, :, ::2].view(2, 3, 1, 2)"])
def test_size_one_strides_of_a_view_are_pytorchs(expr):
    got = []
    for m in (ember, torch):
        y = eval(expr, {"x": m.arange(24.0).reshape(2, 3, 4)})
        got.append((tuple(y.shape), y.stride(), y.tolist()))
    assert got[0] == got[1]


def test_writes_through_such_a_view_reach_the_base():
    got = []
    for m in (ember, torch):
        x = m.zeros(2, 3, 4)
        v = x[:, :, 1:2].view(6, 1)
        v[2] = 5.0
        v.add_(1)
        got.append(x.tolist())
    assert got[0] == got[1]

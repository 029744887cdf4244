"""Indexing with bools among index tensors, several ``...``, and index_put_'s values: PyTorch's recorded steps
(the bools' unsqueezed view, the basic parts' views, then one IndexBackward0), shapes, values and gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import assert_close, assert_same_outcome, node_names

import ember


def _idx(m):
    return m.tensor([0, 2])


GET = {
    "true_tensor": lambda m, x: x[True, _idx(m)],
    "slice_true_tensor": lambda m, x: x[1:, True, _idx(m)],
    "tensor_false_mismatch_shape": lambda m, x: x[_idx(m), True],
    "true_mask": lambda m, x: x[True, m.tensor([True, False, True])],
    "two_ellipses": lambda m, x: x[..., ...],
    "select_between_ellipses": lambda m, x: x[..., 1, ...],
    "none_between_ellipses": lambda m, x: x[..., None, ...],
    "ellipsis_select_ellipsis_select": lambda m, x: x[..., 0, ..., 0],
    "ellipsis_slice_ellipsis": lambda m, x: x[..., 1:, ...],
    "three_ellipses": lambda m, x: x[..., ..., ...],
    "tensors_between_ellipses": lambda m, x: x[..., m.tensor([0, 1]), ..., m.tensor([1, 0])],
    "true_and_ellipses": lambda m, x: x[True, ..., 0, ...],
    "tensor_out_of_range_between_ellipses": lambda m, x: x[..., _idx(m), ...],
}


# an index PyTorch refuses at a later step than ember: the same error type, another message
_ERROR_TYPE_ONLY = {"ellipsis_select_ellipsis_select", "tensors_between_ellipses"}


@pytest.mark.parametrize("name", list(GET))
def test_getitem_steps_as_pytorchs(name):
    got = []
    for m in (ember, torch):
        x = m.tensor(np.arange(24.0).reshape(3, 4, 2), requires_grad=True)
        try:
            y = GET[name](m, x)
        except IndexError as err:
            got.append(("IndexError", "" if name in _ERROR_TYPE_ONLY else str(err).split(" (indexing")[0]))
            continue
        (y * y).sum().backward()
        got.append((tuple(y.shape), node_names(y.grad_fn, 3), y.detach().numpy().tolist(), x.grad.numpy().tolist()))
    assert got[0] == got[1]


def test_setitem_between_ellipses_as_pytorchs():
    def write(m):
        x = m.zeros(3, 4, 2)
        x[..., 1, ...] = 5.0
        x[..., m.tensor([1, 0]), ...] = 7.0
        return x

    assert_same_outcome(write)


@pytest.mark.parametrize("shape", [(1, 2, 4, 2), (1, 1, 2, 4, 2), (1, 4, 2), (2, 4, 2)])
def test_index_put_value_viewed_without_leading_ones(shape):
    """PyTorch's setitem views the value without its leading ones before index_put_ (a ViewBackward0 on its path)."""
    got = []
    for m in (ember, torch):
        x = m.tensor(np.arange(24.0).reshape(3, 4, 2), requires_grad=True)
        v = m.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), requires_grad=True)
        y = x.clone()
        y[_idx(m)] = v
        (y * y).sum().backward()
        got.append((node_names(y.grad_fn, 2), y.detach().numpy().tolist(), x.grad, v.grad))
    assert got[0][:2] == got[1][:2]
    assert_close(got[0][2], got[1][2])
    assert_close(got[0][3], got[1][3])


def test_index_tensor_changed_in_place_before_backward():
    """The index tensors stay saved (version-checked) when bools make views first, as PyTorch's."""
    for m in (ember, torch):
        x = m.tensor(np.arange(24.0).reshape(3, 4, 2), requires_grad=True)
        t = m.tensor([0, 2])
        y = x[1:, True, t]
        t.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()

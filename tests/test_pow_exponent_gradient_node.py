"""The exponent's gradient of ``number ** t`` (``torch.pow(2.0, x)``, PowBackward2) and of ``t ** u``
(PowBackward1) as PyTorch's formula records it (``pow_backward_exponent``): ``grad * (result * log(base)).conj()``,
the zero where the base is 0 (and the exponent real and >= 0) selected inside the product, ``grad * where(...)``
(so an infinite or NaN grad still gives NaN there); under create_graph its nodes are PyTorch's (MulBackward0 of the
grad and MulBackward1 of the result and a number base's log; WhereBackward0 only for a zero base). The node's
``_saved_*`` attributes as PyTorch's: the number base is ``_saved_self`` (no raw saved tensor), the exponent as
given."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import node_names

import ember

EXPONENTS = [-2.0, -0.5, 0.0, 0.5, 1.0, 3.0]
BASES = [2.0, 2, 0.5, 0.0, 0, -2.0, 1.0]


def _saved(node) -> dict:
    """The node's ``_saved_*``/``_raw_saved_*`` attribute names, with the saved numbers (type and value)."""
    names = sorted(a for a in dir(node) if a.startswith(("_saved_", "_raw_saved_")))
    return {a: (type(v).__name__, v) if isinstance(v := getattr(node, a), (int, float, complex)) else "tensor"
            for a in names}


@pytest.mark.parametrize("base", BASES)
def test_number_base_node_and_saved_attributes_as_pytorch(base):
    got = []
    for m in (ember, torch):
        x = m.tensor(EXPONENTS, dtype=m.float64, requires_grad=True)
        out = m.pow(base, x)
        node = out.grad_fn
        got.append((node.name(), _saved(node), node._saved_exponent.detach().numpy(),
                    node._saved_result.detach().numpy()))
    assert got[0][:2] == got[1][:2]
    for ours, theirs in zip(got[0][2:], got[1][2:]):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("base", BASES)
def test_number_base_double_backward_nodes_and_values_as_pytorch(base):
    got = []
    for m in (ember, torch):
        x = m.tensor(EXPONENTS, dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(m.pow(base, x).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        got.append((node_names(g.grad_fn, 3), g.detach().numpy(), gg.numpy()))
    assert got[0][0] == got[1][0]
    for ours, theirs in zip(got[0][1:], got[1][1:]):
        np.testing.assert_array_equal(ours, theirs)


def test_tensor_exponent_double_backward_nodes_as_pytorch():
    got = []
    for m in (ember, torch):
        x = m.tensor([0.0, 0.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([1.0, -1.0, 0.5, 2.0], dtype=m.float64, requires_grad=True)
        (gy,) = m.autograd.grad((x ** y).sum(), y, create_graph=True)
        got.append(node_names(gy.grad_fn, 3))
    assert got[0] == got[1]


@pytest.mark.parametrize("form", ["number ** t", "t ** u"])
def test_a_non_finite_grad_at_a_zero_base_as_pytorch(form):
    """The zero at a zero base is selected before the product with the grad: inf or NaN grads give NaN there."""
    got = []
    for m in (ember, torch):
        e = m.tensor([0.5, 2.0, 1.0, 3.0], dtype=m.float64, requires_grad=True)
        out = m.pow(0.0, e) if form == "number ** t" else m.pow(m.zeros(4, dtype=m.float64), e)
        (g,) = m.autograd.grad(out, e, m.tensor([float("inf"), float("nan"), -float("inf"), 2.0], dtype=m.float64))
        got.append(g.numpy())
    np.testing.assert_array_equal(*got)

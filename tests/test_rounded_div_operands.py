"""``div`` with a ``rounding_mode`` (and ``//``, ``floor_divide``) with a number or a tensor on either side, each
operand requiring grad or not, against PyTorch: the values, the node (DivBackward2 where an operand requires grad,
PyTorch's NotImplemented node for floor_divide) and the zero gradients."""

from __future__ import annotations

import pytest
import torch

import ember

FORMS = {
    "div(x, y, floor)": lambda m, x, y: m.div(x, y, rounding_mode="floor"),
    "div(x, y, trunc)": lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
    "div(5, y, floor)": lambda m, x, y: m.div(5, y, rounding_mode="floor"),
    "div(-5.5, y, trunc)": lambda m, x, y: m.div(-5.5, y, rounding_mode="trunc"),
    "div(x, 2, floor)": lambda m, x, y: m.div(x, 2, rounding_mode="floor"),
    "div(x, -2.5, trunc)": lambda m, x, y: m.div(x, -2.5, rounding_mode="trunc"),
    "method div(y, trunc)": lambda m, x, y: x.div(y, rounding_mode="trunc"),
    "x // y": lambda m, x, y: x // y,
    "7 // y": lambda m, x, y: 7 // y,
    "floor_divide(x, 3)": lambda m, x, y: m.floor_divide(x, 3),
}


@pytest.mark.parametrize("grad", ["none", "x", "y", "both"])
@pytest.mark.parametrize("form", list(FORMS))
def test_rounded_division_of_each_operand_kind_as_pytorch(form, grad):
    got = []
    for m in (ember, torch):
        x = m.tensor([7.5, -7.5, 3.0, -0.5], requires_grad=grad in ("x", "both"))
        y = m.tensor([2.0, 2.0, -4.0, 3.0], requires_grad=grad in ("y", "both"))
        out = FORMS[form](m, x, y)
        got.append((out.tolist(), str(out.dtype).split(".")[-1], out.requires_grad,
                    type(out.grad_fn).__name__ if out.grad_fn is not None else None))
    assert got[0] == got[1]

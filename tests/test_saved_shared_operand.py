"""A node's saved operands when both operands share one array (``x * x.detach()``): PyTorch saves per operand,
only what a gradient to be computed reads, so the operand whose gradient reader is not needed reads as None in
``grad_fn._saved_<name>`` even though the other operand holds the same memory."""

import pytest
import torch

import ember

CASES = {
    "x * x.detach()": lambda x: x * x.detach(),
    "x.detach() * x": lambda x: x.detach() * x,
    "x * x": lambda x: x * x,
    "x / x.detach()": lambda x: x / x.detach(),
    "x.detach() / x": lambda x: x.detach() / x,
    "x * x.detach() (view)": lambda x: x * x.detach().view(3),
}
ATTRIBUTES = ("_saved_self", "_saved_other")


def _saved(lib, make):
    lib.manual_seed(0)
    x = lib.tensor([1.5, -2.0, 3.0], requires_grad=True)
    y = make(x)
    out = {}
    for name in ATTRIBUTES:
        value = getattr(y.grad_fn, name)
        out[name] = None if value is None else (value.tolist(), value.requires_grad, value is x)
    (g,) = lib.autograd.grad(y.sum(), x)
    return y.grad_fn.name(), out, g.tolist()


@pytest.mark.parametrize("name", sorted(CASES))
def test_saved_operands_sharing_memory_as_pytorch(name):
    assert _saved(ember, CASES[name]) == _saved(torch, CASES[name])

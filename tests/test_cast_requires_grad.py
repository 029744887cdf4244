"""A tensor that requires grad cast to each dtype by each spelling (``.to``, ``.long()``, ``.int()``, ``.bool()``,
``.half()``, ``.type()``, ``.type_as``, ``.double()``, complex): PyTorch's result requires grad with a ToCopyBackward0
node only for a floating or complex dtype; an integer or bool result is a tensor without history (requires_grad
False, no grad_fn, a leaf). Its values and dtype, and the gradient through a floating cast, against PyTorch."""

import numpy as np
import pytest
import torch

import ember

CASTS = {
    "to(int64)": lambda m, x: x.to(m.int64),
    "long()": lambda m, x: x.long(),
    "int()": lambda m, x: x.int(),
    "bool()": lambda m, x: x.bool(),
    "to(uint8)": lambda m, x: x.to(m.uint8),
    "byte()": lambda m, x: x.byte(),
    "type(int16)": lambda m, x: x.type(m.int16),
    "type_as(int)": lambda m, x: x.type_as(m.tensor([1])),
    "to(dtype=bool)": lambda m, x: x.to(dtype=m.bool),
    "half()": lambda m, x: x.half(),
    "double()": lambda m, x: x.double(),
    "to(bfloat16)": lambda m, x: x.to(m.bfloat16),
    "to(complex64)": lambda m, x: x.to(m.complex64),
    "float() of float64": lambda m, x: x.double().float(),
    "long() of a non-leaf": lambda m, x: (x * 2).long(),
}


def _run(m, call):
    x = m.tensor(np.array([1.5, -2.25, 0.0, 3.75]), dtype=m.float32, requires_grad=True)
    r = CASTS[call](m, x)
    facts = [str(r.dtype).split(".")[1], r.requires_grad, r.is_leaf, None if r.grad_fn is None else r.grad_fn.name()]
    values = (r.detach().real if r.is_complex() else r.detach()).double().tolist()
    if r.requires_grad:
        ((r.real if r.is_complex() else r).double() * m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)).sum().backward()
        facts.append(x.grad.tolist())
    return facts, values


@pytest.mark.parametrize("call", list(CASTS))
def test_casts_of_a_tensor_that_requires_grad_as_pytorch(call):
    assert _run(ember, call) == _run(torch, call)

"""``torch.positive``, ``Tensor.positive`` and unary ``+``: the input itself (no copy, no view, no node), as PyTorch's;
a bool tensor refused with PyTorch's RuntimeError (unary ``+`` of a bool tensor too)."""

import pytest
import torch
from oracle import assert_same_error

import ember

SPELLINGS = {
    "torch.positive": lambda m, x: m.positive(x),
    "Tensor.positive": lambda m, x: x.positive(),
    "+x": lambda m, x: +x,
}

INPUTS = {
    "float32": lambda m: m.arange(6.0).reshape(2, 3),
    "float16": lambda m: m.ones(3, dtype=m.float16),
    "bfloat16": lambda m: m.ones(3, dtype=m.bfloat16),
    "float64 0-d": lambda m: m.tensor(-1.5, dtype=m.float64),
    "int64": lambda m: m.arange(4),
    "uint8": lambda m: m.arange(4, dtype=m.uint8),
    "complex64": lambda m: m.tensor([1 + 2j, -1j]),
    "empty": lambda m: m.ones(0, 3),
    "non-contiguous": lambda m: m.arange(6.0).reshape(2, 3).t(),
    "requires grad": lambda m: m.ones(2, 3, requires_grad=True),
    "a view": lambda m: m.arange(6.0)[1:4],
    "meta": lambda m: m.ones(2, 3, device="meta"),
}


def _outcome(m, spelling, make):
    x = make(m)
    r = SPELLINGS[spelling](m, x)
    return r is x, r.grad_fn is None, r.dtype == x.dtype


@pytest.mark.parametrize("spelling", list(SPELLINGS))
@pytest.mark.parametrize("make", list(INPUTS))
def test_positive_is_its_input_as_pytorchs(spelling, make):
    assert _outcome(ember, spelling, INPUTS[make]) == _outcome(torch, spelling, INPUTS[make]) == (True, True, True)


@pytest.mark.parametrize("spelling", list(SPELLINGS))
@pytest.mark.parametrize("shape", [(3,), (), (0,)])
def test_positive_refuses_a_bool_tensor_as_pytorch(spelling, shape):
    assert_same_error(lambda m: SPELLINGS[spelling](m, m.ones(shape, dtype=m.bool)))


@pytest.mark.parametrize("call", ["a number", "out="])
def test_positive_arguments_as_pytorchs(call):
    assert_same_error(lambda m: m.positive(3) if call == "a number" else m.positive(m.ones(2), out=m.ones(2)))


def test_the_gradient_flows_to_the_input_itself():
    for m in (ember, torch):
        x = m.ones(2, requires_grad=True)
        (m.positive(x) * 3).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]

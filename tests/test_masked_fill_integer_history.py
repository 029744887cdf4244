"""An integer tensor filled in place from a float value tensor that requires grad: PyTorch's masked_fill_ records
it (MaskedFillBackward1, the result requiring grad), as index_fill_ and fill_ do, while copy_ records nothing and
the out-of-place masked_fill refuses it ("Autograd not support dtype: Long")."""

import pytest
import torch

import ember

CALLS = {
    "masked_fill_": lambda m, x, v: x.masked_fill_(m.tensor([True, False, True]), v),
    "masked_fill_ bool": lambda m, x, v: x.bool().masked_fill_(m.tensor([True, False, True]), v),
    "masked_fill_ float64 value": lambda m, x, v: x.masked_fill_(m.tensor([True, False, True]), v.double()),
    "index_fill_": lambda m, x, v: x.index_fill_(0, m.tensor([0]), v),
    "fill_": lambda m, x, v: x.fill_(v),
    "copy_": lambda m, x, v: x.copy_(v.expand(3)),
    "masked_fill": lambda m, x, v: x.masked_fill(m.tensor([True, False, True]), v),
}


def _outcome(m, name):
    v = m.tensor(2.5, requires_grad=True)
    try:
        r = CALLS[name](m, m.tensor([1, 2, 3]), v)
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return r.tolist(), str(r.dtype).split(".")[-1], r.requires_grad, type(r.grad_fn).__name__


@pytest.mark.parametrize("name", CALLS)
def test_integer_fill_from_a_value_requiring_grad(name):
    assert _outcome(ember, name) == _outcome(torch, name)


def test_float_fill_unchanged():
    for m in (ember, torch):
        v = m.tensor(2.5, requires_grad=True)
        r = m.tensor([1.0, 2.0, 3.0]).masked_fill_(m.tensor([True, False, True]), v)
        r.sum().backward()
        assert type(r.grad_fn).__name__ == "MaskedFillBackward1" and v.grad.item() == 2.0

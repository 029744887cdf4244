"""``x.float_power_(exponent)``: in double precision, as PyTorch's; a base of any other dtype is its RuntimeError
(the result would not fit), and the recorded node is PowBackward0 (a number) or PowBackward1 (a tensor)."""

import pytest
import torch

import ember

CASES = [("float64", 2.5), ("float64", "int tensor"), ("float64", "float tensor"), ("complex128", 2),
         ("float32", 2), ("complex64", 2), ("float64", 1j), ("int64", 2), ("float16", 0.5)]


def _run(m, dtype, exponent):
    x = m.tensor([1.5, 2.0, 0.5], dtype=getattr(m, dtype))
    e = {"int tensor": m.tensor([1, 2, 3]), "float tensor": m.tensor([0.5, -1.0, 2.0])}.get(exponent, exponent)
    try:
        out = x.float_power_(e)
    except RuntimeError as err:
        return "error", str(err)
    return out is x, str(out.dtype).split(".")[-1], out.tolist(), x._version


@pytest.mark.parametrize("dtype, exponent", CASES)
def test_float_power_in_place_is_pytorchs(dtype, exponent):
    assert _run(ember, dtype, exponent) == _run(torch, dtype, exponent)


@pytest.mark.parametrize("tensor_exponent", [False, True])
def test_float_power_in_place_gradients_are_pytorchs(tensor_exponent):
    seen = []
    for m in (ember, torch):
        leaf = m.tensor([1.5, 2.0, 0.5], dtype=m.float64, requires_grad=True)
        e = m.tensor([2.0, 0.5, 3.0], dtype=m.float64, requires_grad=True) if tensor_exponent else 3
        x = leaf * 1
        out = x.float_power_(e)
        out.sum().backward()
        seen.append((out.grad_fn.name(), out.tolist(), leaf.grad.tolist(),
                     e.grad.tolist() if tensor_exponent else None))
    assert seen[0][0] == seen[1][0]
    for got, want in zip(seen[0][1:], seen[1][1:]):
        assert got == want or got == pytest.approx(want, rel=1e-12)

"""``torch.rsub``'s refusals as PyTorch's argument parser words them (its two overloads, ``(Tensor input, Tensor
other, *, Number alpha = 1)`` and ``(Tensor input, Number other, Number alpha = 1)``, listed with the line saying why
the closest did not match), and its results' dtypes with bool, integer and number operands."""

from __future__ import annotations

import pytest
import torch

import ember

CASES = [
    "rsub(2.0, t)", "rsub(2.0, 1.0)", "rsub(True, t)", "rsub(t, 'a')", "rsub(t, None)", "rsub(t, [2.0])",
    "rsub(t, t, alpha=None)", "rsub(t, 'a', alpha=2)", "rsub(t, 2, alpha=None)", "rsub(t, 2, alpha='x')",
    "rsub(t, t, alpha=t)", "rsub(t, 2, alpha=t)", "rsub(t, t, 2)", "rsub(t, 'a', 2)", "rsub(t, 2, None)",
    "rsub(t)", "rsub(t, t, beta=1)", "rsub(t, 2, 3, 4)", "rsub(input=t, other='a')", "rsub(t, other=None)",
    "rsub(input=t, other='a', alpha=2)",
    # accepted: the values and dtypes
    "rsub(t, 2, 3)", "rsub(t, t, alpha=2)", "rsub(input=t, other=t, alpha=3)", "rsub(t, 2.5)", "rsub(i, 3.5)",
    "rsub(i, i, alpha=2)", "rsub(i, 2, alpha=0.5)", "rsub(u8, -3)", "rsub(t, 2j)", "rsub(t, t, alpha=1j)",
    # bool operands, integer alphas of floating operands: PyTorch's errors
    "rsub(b, b)", "rsub(b, True)", "rsub(b, 1)", "rsub(t, True)", "rsub(i, True)", "rsub(i, b)", "rsub(b, i)",
    "rsub(b, t)", "rsub(b, 1.5)", "rsub(t, t, alpha=True)", "rsub(i, i, alpha=2.5)", "rsub(b, b, alpha=True)",
]


def _outcome(m, call: str):
    t, i, b = m.tensor([1.0, 2.0]), m.tensor([1, 2]), m.tensor([True, False])
    u8 = m.tensor([1, 2], dtype=m.uint8)
    try:
        out = eval("m." + call, {"m": m, "t": t, "i": i, "b": b, "u8": u8})  # noqa: S307 (the same call on both)
    except Exception as e:  # noqa: BLE001 (PyTorch's error type and message are compared)
        return type(e).__name__, str(e)
    return str(out.dtype).split(".")[-1], out.tolist()


@pytest.mark.parametrize("call", CASES)
def test_rsub_as_pytorch(call):
    assert _outcome(ember, call) == _outcome(torch, call)


@pytest.mark.parametrize("call", ["rsub(t, t, alpha=m.tensor(3.0))", "rsub(t, 2, alpha=m.tensor(3.0))",
                                  "rsub(t, t, alpha=m.tensor(3.0, requires_grad=True))", "rsub(t, 2, m.tensor([3.0]))"])
def test_a_0d_alpha_tensor_is_a_number_as_pytorch(call):
    """A 0-d tensor that requires no grad is a Number to PyTorch's parser (any other tensor alpha is refused)."""
    assert _outcome(ember, call) == _outcome(torch, call)

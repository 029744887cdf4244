"""A Python number beside a float16 or bfloat16 tensor in every form of the four arithmetic ops, bit for bit
against PyTorch.

PyTorch's kernels read such a number in float32 (or round it to the tensor's dtype, through float32, where the op
takes it so) and round the result once; NumPy would round the number straight from float64 to the half dtype and
compute in it. The numbers include some just past a tie of the half dtype that float32 rounds onto the tie (rounded
twice they fall on the even neighbour, once on the other), ints, the dtype's largest value and one past it; the
tensor holds 0 (the result is then the number as the op read it) and values whose products and sums round
differently in float32 and in the half dtype."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def _past_a_tie(bits: int) -> list[float]:
    """Numbers within 2**-40 of a tie between two neighbours of a dtype of ``bits`` fraction bits (float32 rounds
    each onto the tie)."""
    return [1 + 2.0 ** -(bits + 1) + 2.0 ** -40, -(3 + 2.0 ** -bits + 2.0 ** -40), 1 + 3 * 2.0 ** -(bits + 1) - 2.0 ** -40]


NUMBERS = {"float16": [0.1, 2.0315, 1e-3, -3.3, 7, 3, 65504.0, 65520.0, *_past_a_tie(10)],
           "bfloat16": [0.1, 2.0315, 1e-3, -3.3, 7, 257, *_past_a_tie(7)]}
VALUES = [0.0, 1.0, -1.5, 0.15, 1.35, 2.7, 1e-3, -250.0]

FORMS = {
    "add(x, n)": lambda m, x, n: m.add(x, n),
    "add(n, x)": lambda m, x, n: m.add(n, x),
    "x + n": lambda m, x, n: x + n,
    "n + x": lambda m, x, n: n + x,
    "sub(x, n)": lambda m, x, n: m.sub(x, n),
    "sub(n, x)": lambda m, x, n: m.sub(n, x),
    "x - n": lambda m, x, n: x - n,
    "n - x": lambda m, x, n: n - x,
    "rsub(x, n)": lambda m, x, n: m.rsub(x, n),
    "add(x, n, alpha)": lambda m, x, n: m.add(x, n, alpha=0.3),
    "sub(x, n, alpha)": lambda m, x, n: m.sub(x, n, alpha=0.3),
    "mul(x, n)": lambda m, x, n: m.mul(x, n),
    "mul(n, x)": lambda m, x, n: m.mul(n, x),
    "x * n": lambda m, x, n: x * n,
    "n * x": lambda m, x, n: n * x,
    "div(x, n)": lambda m, x, n: m.div(x, n),
    "x / n": lambda m, x, n: x / n,
    "n / x": lambda m, x, n: n / x,
    "add_": lambda m, x, n: x.clone().add_(n),
    "sub_": lambda m, x, n: x.clone().sub_(n),
    "mul_": lambda m, x, n: x.clone().mul_(n),
    "div_": lambda m, x, n: x.clone().div_(n),
    "x + 0-d tensor": lambda m, x, n: x + m.tensor(n).to(x.dtype),
}

# found by this table, not fixed here (ember/ops/elementwise.py)
DIFFERING = {
    # PyTorch reads a number on the left of mul in the tensor's dtype (rounded first); ember takes it in float32
    "mul(n, x)": "mul(number, half tensor) computes with the number in float32; PyTorch rounds it to the half dtype",
    # PyTorch rounds alpha times the number to the half dtype, then adds; ember computes x + alpha * n in float32
    "add(x, n, alpha)": "add(half tensor, number, alpha=) rounds once; PyTorch rounds alpha * number first",
    "sub(x, n, alpha)": "sub(half tensor, number, alpha=) rounds once; PyTorch rounds alpha * number first",
}


def _outcome(m, form, dtype, number):
    x = m.tensor(VALUES).to(getattr(m, dtype))
    try:
        out = FORMS[form](m, x, number)
    except Exception as err:  # noqa: BLE001 - compared with torch's
        return f"{type(err).__name__}: {err}"
    return str(out.dtype).split(".")[-1], np.asarray(out.float().tolist())


@pytest.mark.parametrize("dtype", list(NUMBERS))
@pytest.mark.parametrize("form", [pytest.param(f, marks=pytest.mark.xfail(strict=True, reason=DIFFERING[f]))
                                  if f in DIFFERING else f for f in FORMS])
def test_a_number_beside_a_half_tensor_as_pytorch_bit_for_bit(form, dtype):
    wrong = []
    for number in NUMBERS[dtype]:
        got, want = (_outcome(m, form, dtype, number) for m in (ember, torch))
        same = got == want if isinstance(want, str) or isinstance(got, str) else \
            got[0] == want[0] and np.array_equal(got[1], want[1], equal_nan=True)
        if not same:
            wrong.append((number, got, want))
    assert not wrong, wrong

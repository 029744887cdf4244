"""A Python number beside a float16 or bfloat16 tensor in every form of the four arithmetic ops, bit for bit
against PyTorch.

PyTorch's kernels read such a number in float32 (or round it to the tensor's dtype, through float32, where the op
takes it so) and round the result once; NumPy would round the number straight from float64 to the half dtype and
compute in it. The numbers include some just past a tie of the half dtype that float32 rounds onto the tie (rounded
twice they fall on the even neighbour, once on the other), ints, the dtype's largest value and one past it; the
tensor holds 0 (the result is then the number as the op read it) and values whose products and sums round
differently in float32 and in the half dtype. A number on the left of ``torch.mul``/``torch.div``/``torch.add``
(wrapped into a 0-d tensor) is rounded to the half dtype first.

The values are repeated to a multiple of PyTorch's vector width: its scalar loop for the last elements of a tensor
rounds ``alpha * number`` (``alpha * tensor`` for a number on the left) to the half dtype before the sum, where its
vectorized loop, the one that computes all but a few elements of any sizeable tensor, rounds the sum once; ember
computes every element as the vectorized loop.

A 0-d float32 or float64 tensor on the right of a half tensor is read as such a number too (its own value in
float32, not rounded to the half dtype first) by mul, div and the in-place add_, sub_, mul_ and div_."""

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
VALUES = [0.0, 1.0, -1.5, 0.15, 1.35, 2.7, 1e-3, -250.0] * 64

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
    "add(n, x, alpha)": lambda m, x, n: m.add(n, x, alpha=0.3),
    "sub(n, x, alpha)": lambda m, x, n: m.sub(n, x, alpha=0.3),
    "rsub(x, n, alpha)": lambda m, x, n: m.rsub(x, n, alpha=0.3),
    "add_(n, alpha)": lambda m, x, n: x.clone().add_(n, alpha=0.3),
    "sub_(n, alpha)": lambda m, x, n: x.clone().sub_(n, alpha=3),
    "mul(x, n)": lambda m, x, n: m.mul(x, n),
    "mul(n, x)": lambda m, x, n: m.mul(n, x),
    "x * n": lambda m, x, n: x * n,
    "n * x": lambda m, x, n: n * x,
    "div(x, n)": lambda m, x, n: m.div(x, n),
    "div(n, x)": lambda m, x, n: m.div(n, x),
    "true_divide(n, x)": lambda m, x, n: m.true_divide(n, x),
    "multiply(n, x)": lambda m, x, n: m.multiply(n, x),
    "x / n": lambda m, x, n: x / n,
    "remainder(n, x)": lambda m, x, n: m.remainder(n, x),
    "remainder(x, n)": lambda m, x, n: m.remainder(x, n),
    "pow(n, x)": lambda m, x, n: m.pow(n, x),
    "n ** x": lambda m, x, n: n ** x,
    "pow(x, n)": lambda m, x, n: m.pow(x, n),
    "n / x": lambda m, x, n: n / x,
    "add_": lambda m, x, n: x.clone().add_(n),
    "sub_": lambda m, x, n: x.clone().sub_(n),
    "mul_": lambda m, x, n: x.clone().mul_(n),
    "div_": lambda m, x, n: x.clone().div_(n),
    "x + 0-d tensor": lambda m, x, n: x + m.tensor(n).to(x.dtype),
}

def _outcome(m, form, dtype, number):
    x = m.tensor(VALUES).to(getattr(m, dtype))
    try:
        out = FORMS[form](m, x, number)
    except Exception as err:  # noqa: BLE001 - compared with torch's
        return f"{type(err).__name__}: {err}"
    return str(out.dtype).split(".")[-1], np.asarray(out.float().tolist())


@pytest.mark.parametrize("dtype", list(NUMBERS))
@pytest.mark.parametrize("form", list(FORMS))
def test_a_number_beside_a_half_tensor_as_pytorch_bit_for_bit(form, dtype):
    wrong = []
    for number in NUMBERS[dtype]:
        got, want = (_outcome(m, form, dtype, number) for m in (ember, torch))
        same = got == want if isinstance(want, str) or isinstance(got, str) else \
            got[0] == want[0] and np.array_equal(got[1], want[1], equal_nan=True)
        if not same:
            wrong.append((number, got, want))
    assert not wrong, wrong


@pytest.mark.parametrize("dtype", list(NUMBERS))
def test_pow_by_a_number_gradient_as_pytorch_bit_for_bit(dtype):
    """pow's half precision gradient as PyTorch's formula computes it: a ** (b - 1), the exponent rounded as the
    forward rounds it, times the number b in float32, times the upstream gradient, each step rounded."""
    values = [0.0, 1.0, 0.15, 1.35, 2.7, 1e-3, 7.5, -1.5]
    wrong = []
    for number in [n for n in NUMBERS[dtype] if n < 65520] + [1e-8, -0.7, 0.3333, 2.0315]:  # (65520: an error)
        seen = []
        for m in (ember, torch):
            x = m.tensor(values).to(getattr(m, dtype)).requires_grad_()
            m.pow(x, number).backward(m.tensor(np.linspace(-2, 2, len(values))).to(getattr(m, dtype)))
            seen.append(np.asarray(x.grad.float().tolist()))
        if not np.array_equal(*seen, equal_nan=True):
            wrong.append((number, *seen))
    assert not wrong, wrong


# a 0-d tensor of another floating dtype on the right of a half tensor: PyTorch's mul and div kernels (and add_,
# sub_, mul_ and div_ in place) read it as a scalar, its own value in float32, where promotion would round it to
# the half dtype first (elementwise.right_scalar)
ZERO_DIM_FORMS = {
    "mul(x, t)": lambda m, x, t: m.mul(x, t),
    "x * t": lambda m, x, t: x * t,
    "div(x, t)": lambda m, x, t: m.div(x, t),
    "x / t": lambda m, x, t: x / t,
    "x + t": lambda m, x, t: x + t,
    "add_(t)": lambda m, x, t: x.clone().add_(t),
    "sub_(t)": lambda m, x, t: x.clone().sub_(t),
    "mul_(t)": lambda m, x, t: x.clone().mul_(t),
    "div_(t)": lambda m, x, t: x.clone().div_(t),
}


@pytest.mark.parametrize("other", ["float32", "float64"])
@pytest.mark.parametrize("dtype", list(NUMBERS))
@pytest.mark.parametrize("form", list(ZERO_DIM_FORMS))
def test_a_zero_dim_tensor_of_another_dtype_right_of_a_half_tensor_as_pytorch_bit_for_bit(form, dtype, other):
    wrong = []
    for number in NUMBERS[dtype]:
        seen = []
        for m in (ember, torch):
            x = m.tensor(VALUES).to(getattr(m, dtype))
            out = ZERO_DIM_FORMS[form](m, x, m.tensor(number, dtype=getattr(m, other)))
            seen.append((str(out.dtype).split(".")[-1], np.asarray(out.float().tolist())))
        (got_dtype, got), (want_dtype, want) = seen
        if got_dtype != want_dtype or not np.array_equal(got, want, equal_nan=True):
            wrong.append((number, got_dtype, want_dtype))
    assert not wrong, wrong

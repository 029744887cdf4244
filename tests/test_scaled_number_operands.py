"""``add``/``sub``/``rsub`` with an ``alpha`` other than 1 beside a Python number, on float32, float64 and complex
tensors, bit for bit against PyTorch.

PyTorch's kernel computes ``a + alpha * b`` with ``b`` and ``alpha`` read in the tensor's dtype and the product
added in one fused step (a single rounding); computing ``alpha * b`` as Python numbers first (one rounding in
float64) and adding that rounds differently in a share of the elements. The numbers are ones whose product with
``alpha`` is not exact in either dtype, ints among them; the values are repeated to a multiple of PyTorch's
vector width (its scalar loop for the last elements of a tensor may round otherwise). Half-precision tensors are
``tests/test_half_number_operands.py``'s; two tensors with an alpha, ``tests/test_add_alpha_node.py``'s."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

NUMBERS = [0.1, 1 / 3, 2.3, -7.7, 3, -5, 1e-3]
ALPHAS = [3.0, 0.7, -1.7, 0.1, 3, -2]
VALUES = [0.0, 1.0, -1.5, 0.15, 1.35, 2.7, 1e-3, -250.0, 0.2, -0.33, 12.5, 7e5, -3e-7, 0.9, 1.1, 4.4] * 16

FORMS = {
    "add(x, n, alpha)": lambda m, x, n, a: m.add(x, n, alpha=a),
    "sub(x, n, alpha)": lambda m, x, n, a: m.sub(x, n, alpha=a),
    "add(n, x, alpha)": lambda m, x, n, a: m.add(n, x, alpha=a),
    "sub(n, x, alpha)": lambda m, x, n, a: m.sub(n, x, alpha=a),
    "rsub(x, n, alpha)": lambda m, x, n, a: m.rsub(x, n, alpha=a),
    "x.add(n, alpha)": lambda m, x, n, a: x.add(n, alpha=a),
    "x.sub(n, alpha)": lambda m, x, n, a: x.sub(n, alpha=a),
    "add_(n, alpha)": lambda m, x, n, a: x.clone().add_(n, alpha=a),
    "sub_(n, alpha)": lambda m, x, n, a: x.clone().sub_(n, alpha=a),
}


def _outcome(m, form, dtype, number, alpha):
    x = m.tensor(VALUES, dtype=getattr(m, dtype))
    if dtype.startswith("complex"):
        x = x * (1 - 0.5j)
    try:
        out = FORMS[form](m, x, number, alpha)
    except Exception as err:  # noqa: BLE001 - compared with torch's
        return f"{type(err).__name__}: {err}"
    return str(out.dtype).split(".")[-1], np.asarray(out.tolist())


def _cases():
    # (a number on the left, n + alpha * x, is one fused multiply-add in PyTorch's vectorized loop; a complex64
    # tensor's alpha * n is rounded to complex64 before the sum: both as PyTorch's here)
    for form in FORMS:
        for dtype in ("float32", "float64", "complex64", "complex128"):
            yield pytest.param(form, dtype, id=f"{form}-{dtype}")


@pytest.mark.parametrize(("form", "dtype"), list(_cases()))
def test_a_number_times_alpha_beside_a_tensor_as_pytorch_bit_for_bit(form, dtype):
    wrong = []
    for number in NUMBERS:
        for alpha in ALPHAS:
            got, want = (_outcome(m, form, dtype, number, alpha) for m in (ember, torch))
            same = got == want if isinstance(want, str) or isinstance(got, str) else \
                got[0] == want[0] and np.array_equal(got[1], want[1], equal_nan=True)
            if not same:
                wrong.append((number, alpha, got if isinstance(got, str) else int((got[1] != want[1]).sum()), want
                              if isinstance(want, str) else want[0]))
    assert not wrong, wrong

"""The exponent's gradient of ``pow`` at a zero base, against PyTorch: zero only where the exponent is real and not
negative (a complex exponent with an imaginary part gives NaN there, as PyTorch's ``result * log(base)``)."""

import pytest
import torch
from oracle import assert_close

import ember

EXPONENTS = [0.39 - 0.85j, 1 + 0j, 0.5j, -1 + 0j, 0j, 2 - 0j]


@pytest.mark.parametrize("base", [[0, 0, 0, 0, 0, 2], [0.0, -0.0, 0.0, 0.0, 0.0, 2.0], 0])
def test_exponent_gradient_at_a_zero_base(base):
    grads = []
    for m in (torch, ember):
        e = m.tensor(EXPONENTS, dtype=m.complex64, requires_grad=True)
        p = m.pow(base if isinstance(base, int) else m.tensor(base), e)
        (p.real * m.tensor([1.0, 2, 3, 4, 5, 6])).sum().add(p.imag.sum()).backward()
        grads.append(e.grad)
    assert_close(grads[1], grads[0])  # (NaN where PyTorch's is NaN: equal)

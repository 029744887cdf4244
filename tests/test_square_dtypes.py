"""``square`` of every dtype kind, requiring grad or not (a plain float32/float64 tensor takes one node at once;
half-precision and complex tensors go through ``pow``, integer and bool ones through ``mul``): values, dtype and
gradient against PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

VALUES = [1.5, -2.0, 3.0, 0.0]


DIFFERENTIABLE = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


# (integer and bool tensors cannot require grad: PyTorch's rule)
@pytest.mark.parametrize("dtype, requires_grad", [(d, True) for d in DIFFERENTIABLE]
                         + [(d, False) for d in DIFFERENTIABLE + ["int64", "uint8", "bool"]])
def test_square_of_each_dtype_as_pytorch(dtype, requires_grad):
    got = []
    for m in (ember, torch):
        x = m.tensor([abs(v) if dtype == "uint8" else v for v in VALUES]).to(getattr(m, dtype))
        if requires_grad:
            x.requires_grad_()
        y = m.square(x)
        method = x.square()
        grad = None
        if requires_grad:
            (y.abs() * m.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward() if dtype.startswith("complex") \
                else (y * m.tensor([1.0, 2.0, 3.0, 4.0]).to(y.dtype)).sum().backward()
            grad = x.grad.to(m.complex128 if dtype.startswith("complex") else m.float64).numpy()
        got.append((str(y.dtype).split(".")[-1], y.detach().to(m.complex128).numpy(),
                    method.detach().to(m.complex128).numpy(), grad))
    assert got[0][0] == got[1][0]
    np.testing.assert_array_equal(got[0][1], got[1][1])
    np.testing.assert_array_equal(got[0][2], got[1][2])
    if requires_grad:
        np.testing.assert_allclose(got[0][3], got[1][3], rtol=1e-2 if "16" in dtype else 1e-6)

"""addr promotes its operands (PyTorch's does, unlike the rest of the addmm family), and each input's gradient
comes back in that input's dtype, the real part for a real input of a complex result, as PyTorch's engine passes a
gradient down an edge. Where PyTorch's own backward runs (the input alone requiring grad) its gradients are the
oracle; where it refuses (its addmv of the vectors' gradients will not mix dtypes), the gradients of PyTorch's addr
of the operands promoted to the result's dtype, each cast back to its input's dtype (ember warned, casting a complex
gradient to a real dtype through NumPy)."""

import numpy as np
import pytest
import torch

import ember

CASES = [  # (input, vec1, vec2) dtypes
    ("float64", "float32", "float32"), ("float32", "float64", "float64"), ("float32", "float32", "float64"),
    ("complex64", "float64", "float32"), ("complex128", "float32", "complex64"), ("float16", "float32", "float32"),
]


def _operands(m, dts, requires):
    rng = np.random.default_rng(3)
    out = []
    for shape, d, r in zip([(2, 3), (2,), (3,)], dts, requires):
        a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if "complex" in d else 0)
        out.append(m.tensor(a, dtype=getattr(m, d)).requires_grad_(r))
    return out


def _grad_out(m, shape, dtype):
    rng = np.random.default_rng(5)
    g = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype.is_complex else 0)
    return m.tensor(g, dtype=dtype)


@pytest.mark.parametrize("dts", CASES)
@pytest.mark.parametrize("requires", [(True, False, False), (False, True, True), (True, True, True)])
def test_addr_of_mixed_dtypes_gives_each_input_its_gradient_in_its_dtype(dts, requires):
    kw = {"beta": 1.5, "alpha": -2.0}
    mine = _operands(ember, dts, requires)
    out = ember.addr(*mine, **kw)
    out.backward(_grad_out(ember, tuple(out.shape), out.dtype))

    theirs = _operands(torch, dts, requires)
    result_dtype = torch.promote_types(torch.promote_types(theirs[0].dtype, theirs[1].dtype), theirs[2].dtype)
    assert str(out.dtype).split(".")[-1] == str(result_dtype).split(".")[-1]
    if requires == (True, False, False):
        want = torch.addr(*theirs, **kw)
        want.backward(_grad_out(torch, tuple(want.shape), want.dtype))
        wanted = [t.grad for t in theirs]
    else:  # (PyTorch refuses here: the gradients of its addr in the result's dtype, cast back)
        promoted = [t.detach().to(result_dtype).requires_grad_(t.requires_grad) for t in theirs]
        want = torch.addr(*promoted, **kw)
        want.backward(_grad_out(torch, tuple(want.shape), want.dtype))
        wanted = [None if p.grad is None else (p.grad if t.is_complex() else p.grad.real).to(t.dtype)
                  for p, t in zip(promoted, theirs)]
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-3)
    for got, w, t in zip((t.grad for t in mine), wanted, theirs):
        assert (got is None) == (w is None)
        if got is not None:
            assert str(got.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
            np.testing.assert_allclose(got.numpy().astype(np.complex128), w.numpy().astype(np.complex128),
                                       rtol=1e-3, atol=1e-3)

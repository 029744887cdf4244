"""An in-place op whose other operand has another dtype than the tensor written (``x32.add_(y64)``,
``clamp_(min=t64)``, ``copy_``, ``copysign_``): each operand's gradient comes back in its own dtype, as PyTorch's
engine casts every input's gradient to that input's dtype. The written tensor's gradient arrives in its dtype,
and formulas that pass it on (add_, sub_, clamp_, copy_) handed the other operand a gradient in the written
tensor's dtype (a float64 leaf's autograd.grad was float32)."""

import numpy as np
import pytest
import torch

import ember

OPS = {
    "add_": lambda x, w: x.add_(w),
    "sub_alpha": lambda x, w: x.sub_(w, alpha=2),
    "mul_": lambda x, w: x.mul_(w),
    "clamp_min": lambda x, w: x.clamp_(min=w),
    "clamp_max": lambda x, w: x.clamp_(max=w),
    "copy_": lambda x, w: x.copy_(w),
    "copy_broadcast": lambda x, w: x.copy_(w[0]),
    "copysign_": lambda x, w: x.copysign_(w),
    "addcmul_": lambda x, w: x.addcmul_(w, w),
}
DTYPES = [("float32", "float64"), ("float16", "float32"), ("bfloat16", "float64"), ("complex64", "float64"),
          ("float64", "float32")]


def _grads(lib, op, x_dtype, w_dtype, view, leaf):
    g = np.random.default_rng(0)
    a = lib.tensor(np.abs(g.standard_normal((4, 5))) + 0.5, dtype=getattr(lib, x_dtype), requires_grad=True)
    w = lib.tensor(np.abs(g.standard_normal((2, 5))) + 0.5, dtype=getattr(lib, w_dtype), requires_grad=True)
    b = a * 1
    x = b[1:3] if view else b[1:3] * 1
    operand = w if leaf else w * 3
    OPS[op](x, operand)
    loss = (b * b).sum() + (x * x).sum()
    loss = loss.real if loss.is_complex() else loss
    return lib.autograd.grad(loss, [a, operand])


@pytest.mark.parametrize("leaf", [False, True], ids=["result", "leaf"])
@pytest.mark.parametrize("view", [False, True], ids=["tensor", "view"])
@pytest.mark.parametrize("dtypes", DTYPES, ids=["-".join(d) for d in DTYPES])
@pytest.mark.parametrize("op", list(OPS))
def test_each_operands_gradient_in_its_own_dtype(op, dtypes, view, leaf):
    if dtypes[0] == "complex64" and op in ("clamp_min", "clamp_max", "copysign_"):
        pytest.skip("complex tensors have no ordering (refused by both)")
    want = _grads(torch, op, *dtypes, view, leaf)
    got = _grads(ember, op, *dtypes, view, leaf)
    for t, e in zip(want, got):
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        wide = torch.complex128 if t.is_complex() else torch.float64
        np.testing.assert_allclose(e.to(getattr(ember, str(wide).split(".")[-1])).numpy(), t.to(wide).numpy(),
                                   rtol=2e-2, atol=2e-2)

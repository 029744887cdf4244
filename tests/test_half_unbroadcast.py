"""Gradients of broadcast half-precision operands against PyTorch: PyTorch sums a broadcast gradient back to the
operand's shape in float32 and rounds once; summing in float16/bfloat16 itself (NumPy's half loops, ml_dtypes'
bfloat16 sum) rounds at every step and drifts by several units in the last place over a few dozen rows."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

OPS = {
    "add": lambda x, w: x + w,
    "sub": lambda x, w: x - w,
    "mul": lambda x, w: x * w,
    "div": lambda x, w: x / (w + 3),
    "expand": lambda x, w: x * 1.5 + w.expand(x.shape),
    "where": lambda x, w: x.where(x > 0, w),
    "maximum": lambda x, w: x.maximum(w),
    "addcmul": lambda x, w: x.addcmul(x, w),
    "lerp": lambda x, w: x.lerp(w, 0.25),
}


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_broadcast_operand_gradient_summed_in_float32(name, dtype, create_graph):
    rng = np.random.default_rng(0)
    x_np = (rng.standard_normal((64, 4)) * 3.7).astype(np.float32)
    w_np = rng.standard_normal(4).astype(np.float32)
    grads = []
    for lib in (torch, ember):
        dt = getattr(lib, dtype)
        x = lib.tensor(x_np).to(dt)
        w = lib.tensor(w_np).to(dt).requires_grad_()
        loss = OPS[name](x, w).pow(2).sum()
        (g,) = lib.autograd.grad(loss, w, create_graph=create_graph)
        assert g.dtype == dt
        grads.append(g.detach().float().numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_divisor_gradient_rounds_as_pytorch(dtype):
    """d(a/b)/db is -g * ((a / b) / b) in PyTorch: the same roundings give the same bits."""
    a_np, b_np, g_np = np.random.default_rng(1).standard_normal((3, 257))
    grads = []
    for lib in (torch, ember):
        dt = getattr(lib, dtype)
        a, b, g = (lib.tensor(v).to(dt) for v in (a_np, b_np, g_np))
        b.requires_grad_()
        (gb,) = lib.autograd.grad(a / b, b, g)
        grads.append(gb.double().numpy())
    np.testing.assert_array_equal(grads[1], grads[0])

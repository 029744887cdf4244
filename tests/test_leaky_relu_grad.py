"""LeakyReLU's gradient against PyTorch's ``leaky_relu_backward`` (g where x > 0, else g * slope), bit for bit: for
contiguous and transposed inputs, non-finite values and zero gradients, slopes of either sign and zero, the in-place
form (its refusal of a negative slope at backward), saved-tensor hooks, second order and two threads. Runs under
``EMBER_KERNELS=numpy`` too."""

import numpy as np
import pytest
import torch

import ember

SHAPES = [(3,), (4, 5, 6), (32, 32, 16, 16)]


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True) and np.array_equal(
        np.signbit(a[~np.isnan(a)]), np.signbit(b[~np.isnan(b)]))


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    x.flat[:5] = [np.nan, np.inf, -np.inf, -0.0, 0.0][:x.size] if x.size >= 5 else x.flat[:5]
    g.flat[-4:] = [np.inf, np.nan, -np.inf, -0.0] if g.size >= 4 else g.flat[-4:]
    if x.size >= 8:  # a zero gradient where x < 0 and where x > 0
        x.flat[5], x.flat[6], g.flat[5], g.flat[6] = -1.0, 1.0, 0.0, 0.0
    return x, g


def _grads(fw, x, g, slope, transposed=False, inplace=False):
    xt = fw.tensor(x).requires_grad_(True)
    h = xt.transpose(0, -1) if transposed else xt
    if inplace:
        h = h * 1
    y = fw.nn.functional.leaky_relu(h, slope, inplace=inplace)
    (gx,) = fw.autograd.grad(y, xt, fw.tensor(np.swapaxes(g, 0, -1).copy() if transposed else g))
    return y, gx


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("slope", [0.2, 0.0, -0.5, 1.5])
@pytest.mark.parametrize("transposed", [False, True])
def test_gradient_is_pytorchs(dtype, shape, slope, transposed):
    x, g = _data(shape, dtype)
    ye, ge = _grads(ember, x, g, slope, transposed)
    yt, gt = _grads(torch, x, g, slope, transposed)
    assert _same(ye.detach().numpy(), yt.detach().numpy())
    assert _same(ge.numpy(), gt.numpy())
    assert ge.stride() == gt.stride()


@pytest.mark.parametrize("slope", [0.2, 1.5])
def test_inplace_form(slope):
    """leaky_relu_ overwrites its input with the result, which its node then reads (``_saved_result``)."""
    x, g = _data((4, 5, 6), np.float32)
    ye, ge = _grads(ember, x, g, slope, inplace=True)
    yt, gt = _grads(torch, x, g, slope, inplace=True)
    assert ye.grad_fn.name() == yt.grad_fn.name() == "LeakyReluBackward1"
    assert _same(ge.numpy(), gt.numpy())


def test_negative_slope_inplace_refused_as_pytorch():
    """PyTorch's in-place LeakyReLU with a negative slope refuses at backward (its result does not tell the two
    branches apart); ember computed a gradient (failed before)."""
    x, g = _data((4, 5, 6), np.float32)
    errors = []
    for fw in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            _grads(fw, x, g, -0.5, inplace=True)
        errors.append(str(info.value))
    assert errors[0].startswith(errors[1].rstrip("."))  # (PyTorch's goes on with where to report it)
    assert "In-place leakyReLu backward calculation is triggered with a negative slope" in errors[1]
    _, ge = _grads(ember, x, g, 0.0, inplace=True)  # a zero slope is not refused (PyTorch's check: slope >= 0)
    assert _same(ge.numpy(), _grads(torch, x, g, 0.0, inplace=True)[1].numpy())


def test_saved_tensor_hooks():
    x, g = _data((32, 32, 16, 16), np.float32)
    outs = []
    for fw in (torch, ember):
        xt = fw.tensor(x).requires_grad_(True)
        packed: list = []
        with fw.autograd.graph.saved_tensors_hooks(lambda t, packed=packed: packed.append(t) or t, lambda t: t):
            y = fw.nn.functional.leaky_relu(xt, 0.2)
        (gx,) = fw.autograd.grad(y, xt, fw.tensor(g))
        outs.append((gx.numpy(), len(packed)))
    assert _same(outs[0][0], outs[1][0]) and outs[0][1] == outs[1][1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_second_order(dtype):
    """create_graph: the gradient of g where x > 0 else g * slope with respect to g is again a LeakyReLU backward
    (PyTorch's LeakyReluBackwardBackward0), and with respect to x zeros."""
    x, _ = _data((8, 16, 4, 4), dtype, seed=1)
    x = x.copy()
    x[~np.isfinite(x)] = 1.0
    rng = np.random.default_rng(2)
    g0, gg = rng.standard_normal(x.shape).astype(dtype), rng.standard_normal(x.shape).astype(dtype)
    outs = []
    for fw in (torch, ember):
        xt, gt = fw.tensor(x).requires_grad_(True), fw.tensor(g0).requires_grad_(True)
        y = fw.nn.functional.leaky_relu(xt, 0.2)
        (gx,) = fw.autograd.grad(y, xt, gt, create_graph=True)
        ggx, ggg = fw.autograd.grad(gx, (xt, gt), fw.tensor(gg), allow_unused=True)
        outs.append((gx.detach().numpy(), ggx.numpy(), ggg.numpy(), gx.grad_fn.name()))
    (a0, a1, a2, an), (b0, b1, b2, bn) = outs
    assert an == bn
    assert _same(a0, b0) and _same(a1, b1) and _same(a2, b2)


def test_two_threads_same_bits():
    x, g = _data((64, 32, 16, 16), np.float32)
    before = ember.get_num_threads()
    try:
        grads = []
        for n in (1, 2):
            ember.set_num_threads(n)
            grads.append(_grads(ember, x, g, 0.2)[1].numpy())
    finally:
        ember.set_num_threads(before)
    assert _same(grads[0], grads[1])
    assert _same(grads[0], _grads(torch, x, g, 0.2)[1].numpy())

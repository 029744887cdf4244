"""torch.copysign / Tensor.copysign(_) and the in-place binary forms atan2_, arctan2_, hypot_, xlogy_, against
PyTorch: values (signed zeros, nan, integers, a number as the sign source, broadcasting), gradients of the first and
second order, and the in-place forms recorded when either operand needs a gradient."""

import numpy as np
import pytest
import torch

import ember

X = np.array([[1.5, -2.0, 0.0, -0.0], [3.0, np.nan, -4.5, 0.25]])
S = np.array([[-1.0, 2.0, -3.0, 0.0], [-0.0, 1.0, np.inf, -np.inf]])


def both(fn, *arrays, grad=False, dtype="float64"):
    out = []
    for fw in (torch, ember):
        ts = [fw.tensor(a, dtype=getattr(fw, dtype), requires_grad=grad) for a in arrays]
        out.append((fw, ts, fn(fw, *ts)))
    return out


@pytest.mark.parametrize("sign", ["tensor", "row", "number", "negative_zero"])
def test_copysign_values_as_pytorch(sign):
    def fn(fw, x, s):
        other = {"tensor": s, "row": s[0], "number": -2.5, "negative_zero": -0.0}[sign]
        return fw.copysign(x, other)

    (_, _, want), (_, _, got) = both(fn, X, S)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert np.array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()))
    assert got.dtype == ember.float64


def test_copysign_of_integers_is_floating_as_pytorch():
    for fw in (torch, ember):
        r = fw.copysign(fw.tensor([1, -2, 3]), -1)
        assert r.dtype == fw.float32 and r.tolist() == [-1.0, -2.0, -3.0]
    assert ember.tensor([1, 2]).copysign(ember.tensor([-1, 1])).tolist() == [-1.0, 2.0]


def test_copysign_gradients_as_pytorch():
    x = np.array([1.5, -2.0, 0.0, -0.0, 3.0])
    s = np.array([-1.0, 2.0, -3.0, 5.0, 0.0])
    grads = []
    for fw in (torch, ember):
        xt = fw.tensor(x, dtype=fw.float64, requires_grad=True)
        st = fw.tensor(s, dtype=fw.float64, requires_grad=True)
        (fw.copysign(xt, st) * fw.arange(1.0, 6.0, dtype=fw.float64)).sum().backward()
        grads.append((xt.grad.numpy(), st.grad.numpy()))
    for g, w in zip(grads[1], grads[0]):
        np.testing.assert_array_equal(g, w)


def test_copysign_second_order_as_pytorch():
    def second(fw):
        x = fw.tensor([1.5, -2.0, 0.5], dtype=fw.float64, requires_grad=True)
        y = (fw.copysign(x, fw.tensor([-1.0, 1.0, -1.0], dtype=fw.float64)) * x).sum()
        (g,) = fw.autograd.grad(y, x, create_graph=True)
        (gg,) = fw.autograd.grad(g.sum(), x)
        return g.detach().numpy(), gg.numpy()

    for got, want in zip(second(ember), second(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("op", ["copysign_", "atan2_", "arctan2_", "hypot_", "xlogy_"])
@pytest.mark.parametrize("needs", ["none", "self", "other"])
def test_inplace_binary_forms_as_pytorch(op, needs):
    x = np.array([0.5, 2.0, 0.0, 3.0])
    o = np.array([-1.5, 0.25, 4.0, 2.0])
    results = []
    for fw in (torch, ember):
        leaf = fw.tensor(x, dtype=fw.float64, requires_grad=needs == "self")
        other = fw.tensor(o, dtype=fw.float64, requires_grad=needs == "other")
        base = leaf * 1.0 if needs == "self" else leaf  # in place on a non-leaf when it needs a gradient
        out = getattr(base, op)(other)
        assert out is base
        grads = None
        if needs != "none":
            assert out.grad_fn is not None
            (out * fw.arange(1.0, 5.0, dtype=fw.float64)).sum().backward()
            grads = (leaf if needs == "self" else other).grad.numpy()
        results.append((out.detach().numpy(), grads))
    (want, want_g), (got, got_g) = results
    np.testing.assert_allclose(got, want, rtol=1e-12)
    if needs != "none":
        np.testing.assert_allclose(got_g, want_g, rtol=1e-12)


def test_inplace_form_into_an_integer_tensor_is_pytorchs_error():
    for fw in (torch, ember):
        with pytest.raises(RuntimeError):
            fw.tensor([1, 2]).copysign_(fw.tensor([-1.0, 1.0]))


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_xlogy_gradients_at_zero_as_pytorch(name):
    """d/dx xlogy(x, y) at x == 0 is log(y) (0 only where y <= 0; for xlog1py y <= -1), as PyTorch's formula: ember
    composed it with a where() that zeroed it (and gave nan where y < 0); d/dy is g * x / y, nan at 0 / 0."""
    x = np.array([0.0, 0.0, 0.5, 0.0, 2.0, 0.0, -1.5])
    y = np.array([4.0, -1.0, 2.0, 0.0, np.nan, -2.0, 3.0])
    got = []
    for fw in (torch, ember):
        fn = getattr(fw.special, name)
        xt = fw.tensor(x, dtype=fw.float64, requires_grad=True)
        yt = fw.tensor(y, dtype=fw.float64, requires_grad=True)
        out = fn(xt, yt)
        (out * fw.arange(1.0, 8.0, dtype=fw.float64)).sum().backward()
        got.append((out.detach().numpy(), xt.grad.numpy(), yt.grad.numpy(), type(out.grad_fn).__name__))
    (w_out, w_gx, w_gy, w_name), (e_out, e_gx, e_gy, e_name) = got
    np.testing.assert_allclose(e_out, w_out, rtol=1e-14)
    np.testing.assert_allclose(e_gx, w_gx, rtol=1e-14)
    np.testing.assert_allclose(e_gy, w_gy, rtol=1e-14)
    assert e_name == w_name


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_xlogy_second_order_as_pytorch(name):
    def second(fw):
        fn = getattr(fw.special, name)
        x = fw.tensor([0.0, 0.5, 2.0], dtype=fw.float64, requires_grad=True)
        y = fw.tensor([3.0, 2.0, 0.5], dtype=fw.float64, requires_grad=True)
        gx, gy = fw.autograd.grad((fn(x, y) * y).sum(), (x, y), create_graph=True)
        return [g.numpy() for g in fw.autograd.grad((gx * gy).sum(), (x, y))]

    for got, want in zip(second(ember), second(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-12)

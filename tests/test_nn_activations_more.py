"""The less common activations against PyTorch: values and gradients (kinks included) in float32 and float64,
reprs, inplace=, PReLU's weight gradient, GLU's halves, RReLU's eval exactness and training distribution, errors."""

import numpy as np
import pytest
import torch
from nn_oracle import compare_module
from oracle import assert_close, check

import ember
import ember.nn as nn

ACTIVATIONS = [
    ("Hardswish", {}), ("Hardsigmoid", {}), ("Mish", {}), ("Softsign", {}), ("Tanhshrink", {}),
    ("Softshrink", {}), ("Softshrink", {"lambd": 1.0}), ("Hardshrink", {}), ("Hardshrink", {"lambd": 1.0}),
    ("Threshold", {"threshold": 0.5, "value": -2.0}), ("Threshold", {"threshold": -1.0, "value": 3.0}),
    ("RReLU", {}), ("RReLU", {"lower": 0.05, "upper": 0.5}), ("CELU", {}), ("CELU", {"alpha": 0.5}), ("SELU", {}),
    ("GLU", {}), ("GLU", {"dim": 0}), ("Softmin", {"dim": 1}), ("PReLU", {}), ("PReLU", {"num_parameters": 6}),
    ("PReLU", {"init": -0.5}),
]
KINKS = [0.0, 1.0, -1.0, 3.0, -3.0, 0.5, -0.5]  # where the pieces of these functions meet


def inputs(dtype):
    x = (np.random.default_rng(0).standard_normal((4, 6)) * 3).astype(dtype)
    x[0, :len(KINKS) - 1], x[1, 0] = KINKS[:-1], KINKS[-1]
    x[2, :2] = [40.0, -40.0]  # saturation: exp and softplus must not overflow
    return x


@pytest.mark.parametrize("name,kwargs", ACTIVATIONS)
def test_activation(name, kwargs):
    em, tm = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    em.eval(), tm.eval()  # RReLU: the fixed mean slope
    compare_module(em, tm, inputs(np.float32), train=False, atol=2e-6)
    compare_module(em.double(), tm.double(), inputs(np.float64), train=False, atol=1e-12)
    assert repr(em) == repr(tm)


@pytest.mark.parametrize("name,kwargs", [("Hardswish", {}), ("Hardsigmoid", {}), ("Mish", {}), ("SELU", {}),
                                         ("CELU", {"alpha": 2.0}), ("Threshold", {"threshold": 0.1, "value": 2.0}),
                                         ("RReLU", {"lower": 0.1, "upper": 0.3})])
def test_activation_inplace(name, kwargs):
    x = inputs(np.float32)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eh, th = ex * 2, tx * 2
    em, tm = getattr(nn, name)(inplace=True, **kwargs).eval(), getattr(torch.nn, name)(inplace=True, **kwargs).eval()
    eo, to = em(eh), tm(th)
    assert eo is eh
    assert_close(eh, th, atol=1e-6)
    eo.sum().backward()
    to.sum().backward()
    assert_close(ex.grad, tx.grad, atol=1e-6)
    assert repr(em) == repr(tm)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.nn.functional.hardswish(x), lambda m, x: m.nn.functional.hardsigmoid(x),
    lambda m, x: m.nn.functional.mish(x), lambda m, x: m.nn.functional.softsign(x),
    lambda m, x: m.nn.functional.tanhshrink(x), lambda m, x: m.nn.functional.softshrink(x, 0.2),
    lambda m, x: m.nn.functional.hardshrink(x, 0.2), lambda m, x: m.nn.functional.threshold(x, 0.0, 0.5),
    lambda m, x: m.nn.functional.selu(x), lambda m, x: m.nn.functional.celu(x, 1.5),
    lambda m, x: m.nn.functional.rrelu(x, 0.2, 0.4), lambda m, x: m.nn.functional.glu(x, 1),
    lambda m, x: m.nn.functional.softmin(x, dim=-1), lambda m, x: m.nn.Softmax2d()(x),
])
def test_functional_3d(fn):
    check(fn, [(2, 4, 3, 2)], dtype=np.float64, atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("x,w", [((2, 3, 4, 5), (3,)), ((2, 3), (3,)), ((4,), (1,)), ((), (1,)), ((2, 3, 4), ())])
def test_prelu_functional(x, w):
    check(lambda m, x, w: m.nn.functional.prelu(x, w), [x, w], dtype=np.float64, atol=1e-12, rtol=1e-10)


def test_rrelu_training_draws_a_slope_per_negative_element():
    ember.manual_seed(0)
    x = ember.tensor(-np.ones((200, 100), np.float32), requires_grad=True)
    out = nn.RReLU(0.1, 0.3)(x)  # a module is in training mode
    slopes = -out.detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.005 and abs(slopes.std() - 0.2 / np.sqrt(12)) < 0.005  # U(0.1, 0.3)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), slopes)  # the gradient is each element's own slope
    pos = ember.tensor(np.arange(1, 5, dtype=np.float32))
    np.testing.assert_array_equal(nn.RReLU()(pos).numpy(), pos.numpy())


def test_errors():
    F = nn.functional
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 5"):
        F.glu(ember.randn(3, 5))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="lambda must be in range"):
        F.softshrink(ember.randn(3), -1)
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
        F.prelu(ember.randn(2, 3), ember.randn(2))
    with pytest.raises(RuntimeError, match="Expected `weight` to be a scalar or 1D tensor"):
        F.prelu(ember.randn(2, 3), ember.randn(3, 1))
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(ember.randn(2, 3))
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(ember.randn(3), 0.0)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(ember.randn(3), 0.5, 0.1)


def test_prelu_module():
    m, t = nn.PReLU(4, init=0.1), torch.nn.PReLU(4, init=0.1)
    assert list(m.state_dict()) == ["weight"] and m.weight.shape == t.weight.shape
    np.testing.assert_array_equal(m.weight.detach().numpy(), t.weight.detach().numpy())
    compare_module(m, t, np.random.default_rng(1).standard_normal((3, 4, 5)).astype(np.float32))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("case", ["dim 0", "dim 1 of 3", "transposed", "channels_last dim 1", "float16 dim 0"])
def test_softmax_result_contiguous_as_pytorch(fn, case):
    # PyTorch's softmax lays its result out contiguous whatever the dim and the input's layout: along a dim other
    # than the last, ember's was the computed rows' view with the dim moved back (softmax(x, 0).view(-1) raised)
    def run(lib):
        x, dim = {"dim 0": (lib.ones(4, 33), 0), "dim 1 of 3": (lib.ones(2, 3, 4), 1),
                  "transposed": (lib.ones(4, 33).t(), 0),
                  "channels_last dim 1": (lib.ones(2, 3, 4, 5).to(memory_format=lib.channels_last), 1),
                  "float16 dim 0": (lib.ones(4, 33, dtype=lib.float16), 0)}[case]
        x.requires_grad_()
        y = getattr(lib.nn.functional, fn)(x, dim)
        (y.view(-1) * lib.arange(y.numel(), dtype=y.dtype)).sum().backward()
        return y.stride(), np.array(x.grad.tolist())

    (got, got_grad), (want, want_grad) = run(ember), run(torch)
    assert got == want
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["softsign", "tanhshrink"])
def test_composed_activations_round_each_step_in_half_precision(name, dtype):
    # PyTorch composes these (x / (|x| + 1), x - tanh(x)), rounding each step to the half dtype: one float32
    # computation rounded once gives other last bits
    a = np.random.default_rng(0).standard_normal(400).astype(np.float32) * 0.5
    e, t = (m.tensor(a).to(getattr(m, dtype)).requires_grad_() for m in (ember, torch))
    ye, yt = getattr(ember.nn.functional, name)(e), getattr(torch.nn.functional, name)(t)
    np.testing.assert_array_equal(ye.detach().float().numpy(), yt.detach().float().numpy())
    ye.sum().backward()
    yt.sum().backward()
    assert_close(e.grad.float(), t.grad.float(), atol=2e-2, rtol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
@pytest.mark.parametrize("grad", [True, False])
def test_hard_activations_of_a_0d_tensor_as_pytorch(name, dtype, grad):
    # (a 0-d input's intermediate sum is a NumPy scalar, which cannot be clipped in place)
    for v in (1.5, -4.0, 3.0):
        results = []
        for m in (ember, torch):
            x = m.tensor(v, dtype=getattr(m, dtype), requires_grad=grad)
            y = getattr(m.nn.functional, name)(x)
            if grad:
                y.backward()
            results.append((y.detach(), x.grad))
        assert_close(results[0][0], results[1][0])
        if grad:
            assert_close(results[0][1], results[1][1])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", ["elu", "celu", "selu"])
@pytest.mark.parametrize("inplace", [False, True])
def test_exponential_linear_units_of_a_0d_tensor_as_pytorch(name, dtype, inplace):
    # (a 0-d input's fmin and maximum are NumPy scalars, which the kernel cannot write into)
    for v in (1.5, -0.7, 0.0):
        results = []
        for m in (ember, torch):
            leaf = m.tensor(v, dtype=getattr(m, dtype), requires_grad=True)
            x = leaf * 1 if inplace else leaf  # (a leaf needing grad cannot be changed in place)
            y = getattr(m.nn.functional, name)(x, inplace=inplace)
            y.backward()
            results.append((y.detach().float(), leaf.grad.float()))  # (assert_close takes no bfloat16)
        assert_close(results[0][0], results[1][0])
        assert_close(results[0][1], results[1][1])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["elu", "celu", "selu", "hardswish", "hardsigmoid", "softshrink", "leaky_relu",
                                  "relu6", "softplus", "gelu", "silu", "mish"])
def test_activations_of_an_expanded_half_tensor_are_laid_out_as_pytorch(name, dtype):
    # (computed through float32: NumPy's copy of an expanded array orders it by its zero strides, PyTorch does not)
    results = []
    for m in (ember, torch):
        plain = m.arange(10, dtype=getattr(m, dtype)).reshape(2, 1, 5) / 4 - 1
        permuted = m.arange(10, dtype=getattr(m, dtype)).reshape(5, 1, 2).permute(2, 1, 0) / 4 - 1
        results.append([getattr(m.nn.functional, name)(x.expand(2, 4, 5)) for x in (plain, permuted)])
    for e, t in zip(*results):
        assert e.stride() == t.stride()
        assert_close(e.float(), t.float())


def test_hardswish_forward_is_pytorchs_to_the_last_bit():
    """hardswish(x) = x * relu6(x + 3) / 6 with PyTorch's division (x * (1/6) differs in the last bit)."""
    rng = np.random.default_rng(0)
    for dtype in ("float32", "float64"):
        x = rng.uniform(-4, 4, 5000).astype(dtype)
        want = torch.nn.functional.hardswish(torch.tensor(x)).numpy()
        np.testing.assert_array_equal(ember.nn.functional.hardswish(ember.tensor(x)).numpy(), want)
        t = ember.tensor(x)
        ember.nn.functional.hardswish(t, inplace=True)
        np.testing.assert_array_equal(t.numpy(), want)

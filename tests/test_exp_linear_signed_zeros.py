"""ELU, CELU and SELU (PyTorch's one ELU kernel) bit for bit against PyTorch at the points where a sum of the two
branches would lose a zero's sign: -0.0 at x = -0.0, -0.0 for x < 0 with alpha 0, the gradient's -0.0 at -inf with
a negative alpha (``torch.signbit``); and the numbers their nodes save, ints where PyTorch's defaults are."""
import numpy as np
import pytest
import torch

import ember

BASES = [-float("inf"), -0.0, 0.0, float("inf"), -1.0, 4.0, -1e-30, float("nan"), -50.0, -2.5, 0.75]
CALLS = [("elu", {}), ("elu", {"alpha": 0.0}), ("elu", {"alpha": -1.0}), ("elu", {"alpha": 2.0}),
         ("celu", {}), ("celu", {"alpha": -1.0}), ("celu", {"alpha": 0.5}), ("selu", {})]


def assert_same(got, want, what):
    got, want = got.detach().double().numpy(), want.detach().double().numpy()
    # At a NaN input PyTorch's gradient is NaN from its vectorised loop and scale from its scalar loop, which takes
    # a tensor's last elements (fewer than two vectors: on an AVX-512 CPU all eleven here, on AVX2 three): ember's
    # is the vectorised loop's NaN (test_exp_linear_gradient_at_nan_is_nan_as_pytorchs_vectorised_kernel)
    at_nan = np.isnan(np.asarray(BASES)) if got.shape == (len(BASES),) else np.zeros(got.shape, bool)
    if "gradient" in what:
        assert np.isnan(got[at_nan]).all(), what
        got, want = got[~at_nan], want[~at_nan]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0, err_msg=what)
    signed = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]), err_msg=what)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, kwargs", CALLS)
def test_exp_linear_values_and_gradients_keep_pytorchs_signed_zeros(name, kwargs, dtype):
    results = []
    for m in (ember, torch):
        x = m.tensor(BASES, dtype=getattr(m, dtype), requires_grad=True)
        y = getattr(m.nn.functional, name)(x, **kwargs)
        (g,) = m.autograd.grad(y.sum(), x)
        inplace = getattr(m.nn.functional, name)(x.detach().clone(), inplace=True, **kwargs)
        results.append((y, g, inplace))
    for got, want, what in zip(results[0], results[1], ("value", "gradient", "in place")):
        assert_same(got, want, f"{name}({kwargs}) {what}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, kwargs", CALLS)
def test_exp_linear_gradient_at_nan_is_nan_as_pytorchs_vectorised_kernel(name, kwargs, dtype):
    """NaN inputs among 64 elements, where PyTorch's vectorised loop takes the first 32 on any CPU: NaN gradients
    there, in and out of place and under create_graph; the other elements' gradients unchanged."""
    base = np.resize(np.asarray(BASES), 64)
    base[40:] = 1.5  # (NaNs only where the vectorised loop runs on every vector width)
    for create_graph in (False, True):
        results = []
        for m in (ember, torch):
            x = m.tensor(base, dtype=getattr(m, dtype), requires_grad=True)
            (g,) = m.autograd.grad(getattr(m.nn.functional, name)(x, **kwargs).sum(), x, create_graph=create_graph)
            y = x.detach().clone().requires_grad_()
            z = y * 1
            getattr(m.nn.functional, name)(z, inplace=True, **kwargs)
            # (a negative alpha's in-place backward is refused, by both)
            gi = m.autograd.grad(z.sum(), y)[0] if kwargs.get("alpha", 1) >= 0 else g
            results.append((g, gi))
        (g, gi), (tg, tgi) = results
        for grad in (tg, tgi, gi):  # (PyTorch's, the premise; the in-place form's elsewhere differs: PyTorch's
            # reads the result, x = -50's 0 where ember's is 1.9e-22)
            assert np.isnan(grad.detach().numpy()[np.isnan(base)]).all()
        np.testing.assert_allclose(g.detach().double().numpy(), tg.detach().double().numpy(), rtol=1e-6, atol=0,
                                   err_msg=f"{name}({kwargs}) create_graph={create_graph}")


def test_exp_linear_recorded_gradient_keeps_the_signs():
    """Under create_graph the formula is recorded (selects): the same signs, and its second derivative."""
    results = []
    for m in (ember, torch):
        x = m.tensor(BASES, dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(m.nn.functional.elu(x, alpha=-1.0).sum(), x, create_graph=True)
        results.append(g)
    assert_same(results[0], results[1], "elu(alpha=-1) gradient under create_graph")


def saved(m, call):
    x = m.tensor([-1.0, 2.0], requires_grad=True)
    node = call(m.nn.functional, x).grad_fn
    return {k: getattr(node, k) for k in dir(node) if k.startswith("_saved_") and k != "_saved_self"}


@pytest.mark.parametrize("call", [
    lambda F, x: F.elu(x), lambda F, x: F.elu(x, 2), lambda F, x: F.selu(x), lambda F, x: F.celu(x),
    lambda F, x: F.softplus(x), lambda F, x: F.softplus(x, 2, 3), lambda F, x: F.softplus(x, 2.0, 3.0),
], ids=["elu", "elu-int-alpha", "selu", "celu", "softplus", "softplus-ints", "softplus-floats"])
def test_exp_linear_and_softplus_saved_numbers_are_pytorchs_types(call):
    got, want = saved(ember, call), saved(torch, call)
    assert want  # (the numbers are there to compare)
    assert {k: (type(v), v) for k, v in got.items()} == {k: (type(v), v) for k, v in want.items()}


@pytest.mark.parametrize("name, kwargs", CALLS)
def test_exp_linear_second_derivative_at_nan_is_nan_as_pytorchs(name, kwargs):
    """The gradient of the create_graph gradient at a NaN input (among 64 elements, where PyTorch's vectorised loop
    runs): NaN, as PyTorch's; the other elements' second derivatives unchanged."""
    base = np.resize(np.asarray(BASES), 64)
    base[40:] = 1.5
    results = []
    for m in (ember, torch):
        x = m.tensor(base, dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(getattr(m.nn.functional, name)(x, **kwargs).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        results.append(gg.detach().numpy())
    assert np.isnan(results[1][np.isnan(base)]).all()  # (PyTorch's, the premise)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=0, err_msg=f"{name}({kwargs})")

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

"""In-place ELU, CELU and SELU (``F.elu(x, inplace=True)``, ``elu_`` ...) take their gradient from the result, as
PyTorch's ``EluBackward1`` does (``elu_backward(..., is_result=True)``): g * input_scale * (result + alpha * scale)
for result <= 0, g * scale above. Where the result has rounded to -alpha * scale (x = -50 in float32) that gradient
is exactly 0, where one from the input (exp(-50)) is not; the out-of-place forms keep the input's formula."""
import numpy as np
import pytest
import torch

import ember

GRID = [-50.0, -20.0, -1e-30, -0.0, 0.0, 1.0, float("inf"), -float("inf"), -1.0, -3.0, 2.5, -0.5, -88.0, -700.0]
CALLS = [("elu", {}), ("elu", {"alpha": 0.5}), ("elu", {"alpha": 2.0}), ("celu", {}), ("celu", {"alpha": 2.0}),
         ("celu", {"alpha": 0.25}), ("selu", {})]


def inplace_gradient(m, name, kwargs, dtype, grad_output):
    x = m.tensor(GRID, dtype=getattr(m, dtype), requires_grad=True)
    y = getattr(m.nn.functional, name)(x * 1, inplace=True, **kwargs)  # (in place on a non-leaf)
    y.backward(m.tensor(grad_output, dtype=getattr(m, dtype)))
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, kwargs", CALLS)
@pytest.mark.parametrize("grad_output", ["ones", "mixed"])
def test_inplace_exp_linear_gradient_is_pytorchs_from_the_result(name, kwargs, dtype, grad_output):
    g = [1.0] * len(GRID) if grad_output == "ones" else [(-1.0) ** k * (k + 1) / 3 for k in range(len(GRID))]
    got_y, got = inplace_gradient(ember, name, kwargs, dtype, g)
    want_y, want = inplace_gradient(torch, name, kwargs, dtype, g)
    # (the forward within one float32 ulp: NumPy's float32 expm1 takes a vector-math routine of up to an ulp's error
    # on CPUs with AVX-512, as PyTorch's own vectorised exp does on others; float64 bit for bit)
    np.testing.assert_allclose(got_y, want_y, rtol=1.2e-7 if dtype == "float32" else 0, atol=0)
    rtol = 2e-7 if dtype == "float32" else 1e-15  # (g times f', where PyTorch's kernel multiplies g by each factor)
    # (and in float32 the forward's ulp, which g * input_scale * (result + alpha * scale) carries through its
    # cancellation: |result| <= alpha * scale, so at most |g| * input_scale * alpha * scale * 2 ** -22 apart)
    reach = {"elu": kwargs.get("alpha", 1.0), "celu": 1.0, "selu": 1.0507 * 1.6733}[name]
    allowed = rtol * np.abs(want) + (np.abs(g) * reach * 2.0 ** -22 if dtype == "float32" else 0)
    assert (np.abs(got - want) <= allowed).all(), (name, kwargs, dtype, got, want)
    zero = np.asarray(want) == 0  # (-50 in float32, -inf: exactly 0, with PyTorch's sign)
    np.testing.assert_array_equal(got[zero], 0.0)  # (from the input, exp(-50) would not be)
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))


@pytest.mark.parametrize("name", ["elu", "celu", "selu"])
def test_inplace_exp_linear_gradient_at_nan_is_nan(name):
    # PyTorch's vectorised loop (all but a tensor's last few elements) selects on result > 0: NaN takes the
    # negative branch, NaN (as the out-of-place form's, tests/test_exp_linear_signed_zeros.py)
    for m in (ember, torch):
        x = m.full((64,), float("nan"), requires_grad=True)
        getattr(m.nn.functional, name)(x * 1, inplace=True).sum().backward()
        assert np.isnan(x.grad.numpy()[:8]).all(), m.__name__


def test_out_of_place_exp_linear_gradient_stays_the_inputs():
    # the out-of-place node reads the input: exp(-50) in float64, not the result's 0
    for m in (ember, torch):
        x = m.tensor([-50.0], dtype=m.float64, requires_grad=True)
        m.nn.functional.elu(x).sum().backward()
        assert x.grad.item() == pytest.approx(np.exp(-50.0), rel=1e-12), m.__name__


@pytest.mark.parametrize("call", [
    lambda m, x: m.nn.functional.elu_(x, alpha=-1.0),
    lambda m, x: m.nn.functional.elu(x, alpha=-0.5, inplace=True),
    lambda m, x: m.nn.ELU(alpha=-0.5, inplace=True)(x),
    lambda m, x: m.nn.functional.celu_(x, alpha=-1.0),
    lambda m, x: m.nn.CELU(alpha=-2.0, inplace=True)(x),
    lambda m, x: m.nn.functional.elu_(x, alpha=0.0),  # (zero is no negative slope: its gradient)
    lambda m, x: m.nn.functional.elu(x, alpha=-1.0),  # (out of place: the input's formula)
], ids=["elu_", "elu_inplace", "ELU_module", "celu_", "CELU_module", "elu_zero_alpha", "elu_out_of_place"])
def test_inplace_exp_linear_backward_with_a_negative_alpha_is_refused_as_pytorch(call):
    """PyTorch's in-place ELU/CELU with a negative alpha runs forward, then refuses the backward that would read f'
    from the result (a positive result of the negative branch); out of place, or alpha 0, it differentiates."""
    outcomes = []
    for m in (ember, torch):
        x = m.tensor([-2.0, 0.5, 7.0, -0.5, -0.0], requires_grad=True)
        y = call(m, x * 1)
        try:
            y.backward(m.tensor([1.0, -2.0, 0.5, 3.0, 1.0]))
            outcomes.append((y.detach().numpy(), x.grad.numpy()))
        except RuntimeError as err:
            outcomes.append((y.detach().numpy(), str(err)))
    (got_y, got), (want_y, want) = outcomes
    np.testing.assert_allclose(got_y, want_y, rtol=1e-6)
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6)

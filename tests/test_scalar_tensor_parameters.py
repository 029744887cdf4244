"""A tensor given where PyTorch takes a Scalar (an activation's parameter, a fill value) or a double (``isclose``'s
tolerances): a 0-d tensor that does not require grad is read as its number; one that requires grad, or one of any
other shape, is PyTorch's TypeError."""

import pytest

from tests.oracle import assert_close, outcomes

X = [-1.5, -0.25, 0.3, 2.0]
# name -> f(module, x, t): t given where the parameter is expected
CALLS = {
    "hardtanh_min_val": lambda m, x, t: m.nn.functional.hardtanh(x, min_val=-t),
    "hardtanh_max_val": lambda m, x, t: m.nn.functional.hardtanh(x, max_val=t),
    "hardtanh_": lambda m, x, t: m.nn.functional.hardtanh_(x.clone(), 0.0, t),
    "threshold_threshold": lambda m, x, t: m.nn.functional.threshold(x, t, 0.0),
    "threshold_value": lambda m, x, t: m.nn.functional.threshold(x, 0.0, t),
    "hardshrink": lambda m, x, t: m.nn.functional.hardshrink(x, t),
    "softshrink": lambda m, x, t: m.nn.functional.softshrink(x, t),
    "leaky_relu": lambda m, x, t: m.nn.functional.leaky_relu(x, negative_slope=t),
    "leaky_relu_inplace": lambda m, x, t: m.nn.functional.leaky_relu(x.clone(), t, inplace=True),
    "elu": lambda m, x, t: m.nn.functional.elu(x, alpha=t),
    "celu": lambda m, x, t: m.nn.functional.celu(x, alpha=t),
    "rrelu_lower": lambda m, x, t: m.nn.functional.rrelu(x, t, 0.6),
    "softplus_beta": lambda m, x, t: m.nn.functional.softplus(x, beta=t),
    "softplus_threshold": lambda m, x, t: m.nn.functional.softplus(x, threshold=t),
    "ELU_module": lambda m, x, t: m.nn.ELU(alpha=t)(x),
    "full": lambda m, x, t: m.full((2,), t),
    "full_like": lambda m, x, t: m.full_like(x, t),
    "new_full": lambda m, x, t: x.new_full((2,), t),
    "isclose_rtol": lambda m, x, t: m.isclose(x, x + 0.1, rtol=t),
    "isclose_atol": lambda m, x, t: m.isclose(x, x + 0.1, atol=t),
    "allclose_atol": lambda m, x, t: m.allclose(x, x + 0.1, atol=t),
}
TENSORS = {
    "0-d": lambda m: m.tensor(0.5),
    "0-d_int": lambda m: m.tensor(1),
    "0-d_requires_grad": lambda m: m.tensor(0.5, requires_grad=True),
    "1-element": lambda m: m.tensor([0.5]),
}


@pytest.mark.parametrize("tensor", TENSORS)
@pytest.mark.parametrize("call", CALLS)
def test_tensor_as_parameter(call, tensor):
    (got, _), (want, _) = outcomes(lambda m: CALLS[call](m, m.tensor(X), TENSORS[tensor](m)))
    if isinstance(want, Exception):
        assert type(got) is type(want), (got, want)
        if isinstance(want, TypeError):  # (the call and the argument named)
            assert str(got).split("'")[:2] == str(want).split("'")[:2], (got, want)
            assert str(got).endswith("not Tensor"), got
        else:
            assert str(got) == str(want)
        return
    assert not isinstance(got, Exception), got
    if isinstance(want, bool):
        assert got == want
    else:
        assert str(got.dtype)[6:] == str(want.dtype)[6:]
        assert_close(got, want)

"""A tensor given where PyTorch takes a Scalar (a fill value, an activation's parameter, a tolerance, ``alpha=``):
the TypeError names the argument, and its position where the argument has one, as PyTorch's argument parser."""

import pytest
import torch

import ember

# (name, call(lib, x, t)) with t a tensor PyTorch refuses as a Scalar; every argument given by position, or
# keyword-only (alpha=, value=: no position), or through torch.nn.functional (which passes them by position).
CASES = [
    ("add alpha", lambda lib, x, t: lib.add(x, x, alpha=t)),
    ("Tensor.sub alpha", lambda lib, x, t: x.sub(x, alpha=t)),
    ("addcmul value", lambda lib, x, t: lib.addcmul(x, x, x, value=t)),
    ("index_add alpha", lambda lib, x, t: lib.index_add(x, 0, lib.tensor([0]), lib.ones(1), alpha=t)),
    ("isclose rtol", lambda lib, x, t: lib.isclose(x, x, t)),
    ("isclose atol", lambda lib, x, t: lib.isclose(x, x, 1e-5, t)),
    ("allclose atol", lambda lib, x, t: lib.allclose(x, x, 1e-5, t)),
    ("allclose rtol", lambda lib, x, t: lib.allclose(x, x, t)),
    ("isclose rtol=", lambda lib, x, t: lib.isclose(x, x, rtol=t)),
    # (a method's positions leave out its input: x.isclose(y, t) names rtol's position 2)
    ("Tensor.isclose rtol", lambda lib, x, t: x.isclose(x, t)),
    ("Tensor.isclose atol", lambda lib, x, t: x.isclose(x, 1e-5, t)),
    ("Tensor.isclose rtol=", lambda lib, x, t: x.isclose(x, rtol=t)),
    ("Tensor.isclose atol=", lambda lib, x, t: x.isclose(x, 1e-5, atol=t)),
    ("Tensor.allclose rtol", lambda lib, x, t: x.allclose(x, t)),
    ("Tensor.allclose atol", lambda lib, x, t: x.allclose(x, 1e-5, t)),
    ("Tensor.allclose atol=", lambda lib, x, t: x.allclose(x, atol=t)),
    ("full", lambda lib, x, t: lib.full((2,), t)),
    ("full_like", lambda lib, x, t: lib.full_like(x, t)),
    ("new_full", lambda lib, x, t: x.new_full((2,), t)),
    ("scalar_tensor", lambda lib, x, t: lib.scalar_tensor(t)),
    ("arange end", lambda lib, x, t: lib.arange(t)),
    ("arange end=", lambda lib, x, t: lib.arange(end=t)),
    ("dist p", lambda lib, x, t: lib.dist(x, x, t)),
    ("Tensor.dist p", lambda lib, x, t: x.dist(x, t)),
    ("Tensor.dist p=", lambda lib, x, t: x.dist(x, p=t)),
    ("leaky_relu", lambda lib, x, t: lib.nn.functional.leaky_relu(x, t)),
    ("leaky_relu keyword", lambda lib, x, t: lib.nn.functional.leaky_relu(x, negative_slope=t)),
    ("leaky_relu_", lambda lib, x, t: lib.nn.functional.leaky_relu(x.clone(), t, True)),
    ("elu", lambda lib, x, t: lib.nn.functional.elu(x, t)),
    ("softplus beta", lambda lib, x, t: lib.nn.functional.softplus(x, t)),
    ("softplus threshold", lambda lib, x, t: lib.nn.functional.softplus(x, 1, t)),
    ("softshrink", lambda lib, x, t: lib.nn.functional.softshrink(x, t)),
    ("hardshrink", lambda lib, x, t: lib.nn.functional.hardshrink(x, t)),
    ("threshold", lambda lib, x, t: lib.nn.functional.threshold(x, t, 0.0)),
    ("threshold value", lambda lib, x, t: lib.nn.functional.threshold(x, 0.0, t)),
    ("threshold_ value", lambda lib, x, t: lib.nn.functional.threshold(x.clone(), 0.0, t, True)),
    ("celu", lambda lib, x, t: lib.nn.functional.celu(x, t)),
    ("rrelu lower", lambda lib, x, t: lib.nn.functional.rrelu(x, t)),
    ("rrelu upper", lambda lib, x, t: lib.nn.functional.rrelu(x, 0.1, t)),
]
# the tensors a Scalar argument refuses: one with dimensions, a 0-d one that requires grad (hardtanh's bounds are
# compared in Python first, so only the latter reaches its parser; both bounds at once: min_val's error)
REFUSED = {"1-d": lambda lib: lib.ones(2), "0-d requires grad": lambda lib: lib.tensor(0.5, requires_grad=True)}
HARDTANH = [
    ("hardtanh min_val", lambda lib, x, t: lib.nn.functional.hardtanh(x, t)),
    ("hardtanh max_val", lambda lib, x, t: lib.nn.functional.hardtanh(x, -1.0, t)),
    ("hardtanh both", lambda lib, x, t: lib.nn.functional.hardtanh(x, t, t)),
]


def _error(lib, call, refused):
    with pytest.raises(TypeError) as info:
        call(lib, lib.ones(3), REFUSED[refused](lib))
    return str(info.value)


@pytest.mark.parametrize("refused", list(REFUSED))
@pytest.mark.parametrize("name, call", CASES, ids=[c[0] for c in CASES])
def test_message_as_pytorchs(name, call, refused):
    assert _error(ember, call, refused) == _error(torch, call, refused)


@pytest.mark.parametrize("name, call", HARDTANH, ids=[c[0] for c in HARDTANH])
def test_hardtanh_bounds(name, call):
    assert _error(ember, call, "0-d requires grad") == _error(torch, call, "0-d requires grad")


@pytest.mark.parametrize("call", [lambda lib, t: lib.arange(0, t), lambda lib, t: lib.arange(0, 5, t),
                                  lambda lib, t: lib.arange(0, end=t)])
def test_arange_other_overloads_match_none(call):
    """``arange(start, end)`` with a refused tensor matches no overload of PyTorch's: its combination error."""
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            call(lib, lib.ones(2))


@pytest.mark.parametrize("name, call", CASES, ids=[c[0] for c in CASES])
def test_zero_dim_tensor_is_its_number(name, call):
    """A 0-d tensor that does not require grad is read as its number, as PyTorch's parser."""
    if name.removeprefix("Tensor.").startswith("dist p"):
        t = 2.0
    elif name.removeprefix("Tensor.").startswith(("rrelu", "softplus threshold", "isclose", "allclose")):
        t = 0.2
    else:
        t = 1.5
    x = [1.0, -2.0, 3.0]
    got = call(ember, ember.tensor(x), ember.tensor(t))
    want = call(torch, torch.tensor(x), torch.tensor(t))
    if isinstance(want, torch.Tensor):
        if name.startswith("rrelu"):
            return  # (random slopes)
        assert got.dtype.__repr__().split(".")[-1] == str(want.dtype).split(".")[-1]
        assert got.tolist() == pytest.approx(want.tolist())
    else:
        assert got == want

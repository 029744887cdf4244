"""``Tensor.polygamma_`` and ``Tensor.mvlgamma_`` (PyTorch has them; no top-level forms), and the int arguments of
the polygamma family as PyTorch's parser reads them: a float or a bool ``n`` is its TypeError ("polygamma():
argument 'n' (position 1) must be int, not float"), a 0-d integer tensor an int."""

import pytest
import torch
from oracle import assert_close, outcomes

import ember

DTYPES = ["float32", "float64", "float16", "int32", "uint8", "bool", "complex64"]
CALLS = {
    "polygamma_ 1": lambda m, x: x.polygamma_(1),
    "polygamma_ 0": lambda m, x: x.polygamma_(0),
    "polygamma_ 3": lambda m, x: x.polygamma_(3),
    "polygamma_ float n": lambda m, x: x.polygamma_(1.0),
    "polygamma_ negative n": lambda m, x: x.polygamma_(-1),
    "mvlgamma_ 2": lambda m, x: x.mvlgamma_(2),
    "mvlgamma_ keyword": lambda m, x: x.mvlgamma_(p=3),
    "mvlgamma_ p 0": lambda m, x: x.mvlgamma_(0),
    "mvlgamma_ float p": lambda m, x: x.mvlgamma_(2.0),
    "polygamma float n": lambda m, x: m.polygamma(1.0, x),
    "polygamma bool n": lambda m, x: m.polygamma(True, x),
    "polygamma tensor n": lambda m, x: m.polygamma(m.tensor(2), x),
    "polygamma swapped": lambda m, x: m.polygamma(x, 1),
    "method polygamma float n": lambda m, x: x.polygamma(1.5),
    "method mvlgamma float p": lambda m, x: x.mvlgamma(2.0),
    "polygamma complex": lambda m, x: m.polygamma(1, x.to(m.complex64)),
    "polygamma 2 complex": lambda m, x: m.polygamma(2, x.to(m.complex64)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CALLS)
def test_gamma_family_in_place_and_arguments(name, dtype):
    def call(m):
        x = m.tensor([1.5, 2.0, 3.25]).to(getattr(m, dtype))
        r = CALLS[name](m, x)
        return r, x

    (got, got_warnings), (want, want_warnings) = outcomes(call)
    assert got_warnings == want_warnings
    if isinstance(want, Exception):
        assert (type(got).__name__, str(got)) == (type(want).__name__, str(want))
        return
    (r, x), (tr, tx) = got, want
    tol = 1e-2 if dtype == "float16" else 1e-5
    assert_close(r, tr, atol=tol, rtol=tol)
    if "_ " in name:  # (in place: the result is the tensor itself)
        assert r is x and tr is tx


@pytest.mark.parametrize("name", ["polygamma_", "mvlgamma_"])
def test_in_place_recorded(name):
    """Recorded on a tensor that requires grad: the values and the gradient as PyTorch's."""
    results = []
    for m in (ember, torch):
        a = m.tensor([1.5, 2.0, 3.25], dtype=m.float64, requires_grad=True)
        x = a.clone()
        getattr(x, name)(2)
        x.sum().backward()
        results.append((x.detach(), a.grad))
    for got, want in zip(*results):
        assert_close(got, want, atol=1e-10, rtol=1e-10)

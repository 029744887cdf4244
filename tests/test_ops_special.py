"""The special functions of ``ember/ops/special_fns.py`` against PyTorch: values and gradients in float64 (tight) and
float32, over the ranges where each changes method (the Bessel series/asymptotic switch at |x| = 30, erfcx's at 4,
log_ndtr's at -1, ndtri's tails), at 0, +-inf and nan; the spellings (torch, torch.special, Tensor methods, the
in-place ones); renorm and rsub."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember

RNG = np.random.default_rng(0)
X = np.concatenate([RNG.standard_normal(40) * 3, [0, -0.0, 1e-30, 1e-8, -1e-8, 29.9, 30.1, -31, 100, -100, 700,
                                                 -1000, 3.9, 4.1, -4.1, 26.7, -26, -27, 1e5, np.inf, -np.inf, np.nan]])
P = np.concatenate([RNG.uniform(0, 1, 40), [0, 1, 0.5, 1e-300, 1e-20, 1e-10, 1 - 1e-10, 0.9999999, -0.1, 1.1, np.nan,
                                            0.25, 0.75]])
X32 = np.concatenate([RNG.standard_normal(40) * 3, [0, 1e-8, -1e-8, 29.9, 30.1, -31, 3.9, 4.1, -4.1, 8, -8]])
P32 = np.concatenate([RNG.uniform(0.001, 0.999, 40), [0, 1, 0.5, 0.01, 0.99]])

SPECIAL = ["i0", "i0e", "i1", "i1e", "erfcx", "log_ndtr", "ndtri", "entr", "sinc"]
TOP = {"sinc": "sinc", "deg2rad": "deg2rad", "rad2deg": "rad2deg", "i0": "i0"}


def values_and_grads(m, fn, data, dtype):
    x = m.tensor(data, dtype=dtype, requires_grad=True)
    y = fn(m)(x)
    (g,) = m.autograd.grad(y.sum(), x)
    return y.detach().numpy().astype(np.float64), g.numpy().astype(np.float64), type(y.grad_fn).__name__


def compare(fn, data, dtype, rtol, atol):
    ev, eg, en = values_and_grads(ember, fn, data, getattr(ember, dtype))
    tv, tg, tn = values_and_grads(torch, fn, data, getattr(torch, dtype))
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(ev, tv, rtol=rtol, atol=atol)
        np.testing.assert_allclose(eg, tg, rtol=rtol, atol=atol)
    assert en == tn


@pytest.mark.parametrize("name", SPECIAL)
def test_special_float64_values_and_gradients_match_torch(name):
    data = P if name == "ndtri" else X
    # (the gradients of i0e, i1e (i1e(x) - i0e(x)) and erfcx (2x erfcx(x) - 2/sqrt(pi)) cancel at x = 1e5: both
    # libraries use these formulas; their values 1e-13 apart there)
    compare(lambda m: getattr(m.special, name), data, "float64", rtol=1e-9 if name != "erfcx" else 1e-5, atol=1e-300)


@pytest.mark.parametrize("name", SPECIAL)
def test_special_float32_values_and_gradients_match_torch(name):
    data = P32 if name == "ndtri" else X32
    # (PyTorch computes erfcx's and log_ndtr's gradients in float32, where 2x erfcx(x) - 2/sqrt(pi) cancels: ember's,
    # from float64, are the closer to the exact ones)
    compare(lambda m: getattr(m.special, name), data, "float32", rtol=5e-4 if name in ("erfcx", "log_ndtr") else 2e-5,
            atol=1e-30)


@pytest.mark.parametrize("name", ["sinc", "deg2rad", "rad2deg", "i0"])
def test_torch_namespace_and_methods_match_torch(name):
    compare(lambda m: getattr(m, name), X, "float64", rtol=1e-11, atol=1e-300)
    compare(lambda m: (lambda t: getattr(t, name)()), X32, "float32", rtol=2e-5, atol=1e-30)


@pytest.mark.parametrize("name", ["sinc", "deg2rad", "rad2deg", "i0"])
def test_integer_input_gives_the_default_float_dtype(name):
    e, t = getattr(ember, name)(ember.tensor([0, 1, 180])), getattr(torch, name)(torch.tensor([0, 1, 180]))
    assert e.dtype is ember.float32 and t.dtype is torch.float32
    assert_close(e, t)


@pytest.mark.parametrize("name", ["sinc", "deg2rad", "rad2deg", "i0"])
def test_in_place_methods_match_torch(name):
    e, t = ember.tensor(X32[:40].astype(np.float32)), torch.tensor(X32[:40].astype(np.float32))
    assert getattr(e, name + "_")() is e
    getattr(t, name + "_")()
    assert_close(e, t, rtol=2e-5)
    leaf = ember.ones(3, requires_grad=True)
    y = leaf * 2
    getattr(y, name + "_")()
    y.sum().backward()
    tleaf = torch.ones(3, requires_grad=True)
    ty = tleaf * 2
    getattr(ty, name + "_")()
    ty.sum().backward()
    assert_close(leaf.grad, tleaf.grad, rtol=1e-5)


def test_complex_input_refused_as_torch():
    for name in ("i0e", "erfcx", "ndtri"):
        with pytest.raises(NotImplementedError):
            getattr(torch.special, name)(torch.ones(2, dtype=torch.complex64))
        with pytest.raises(NotImplementedError):
            getattr(ember.special, name)(ember.ones(2, dtype=ember.complex64))


@pytest.mark.parametrize("p,dim,maxnorm", [(2, 0, 1.0), (1, 1, 0.5), (3.0, -1, 2.0), (2, 2, 0.1), (2, 0, 100.0)])
def test_renorm_values_and_gradients_match_torch(p, dim, maxnorm):
    data = RNG.standard_normal((3, 4, 2))
    outs = []
    for m in (torch, ember):
        x = m.tensor(data, requires_grad=True)
        y = m.renorm(x, p, dim, maxnorm)
        (y * m.tensor(np.arange(24.0).reshape(3, 4, 2))).sum().backward()
        z = m.tensor(data)
        assert z.renorm_(p, dim, maxnorm) is z
        outs.append((y, x.grad, z, x.renorm(p, dim, maxnorm)))
    for a, b in zip(outs[1], outs[0]):
        assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", [lambda m: m.renorm(m.ones(3), 2, 0, 1.0), lambda m: m.renorm(m.ones(2, 2), 0, 0, 1.0),
                                  lambda m: m.renorm(m.ones(2, 2), 2, 0, -1.0)])
def test_renorm_errors_match_torch(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError):
        call(ember)


@pytest.mark.parametrize("other", [3, 2.5, "tensor"])
@pytest.mark.parametrize("alpha", [1, 2])
def test_rsub_matches_torch(other, alpha):
    outs = []
    for m in (torch, ember):
        x = m.tensor([1.0, -2.0, 4.0], requires_grad=True)
        o = m.tensor([0.5, 1.0, 2.0]) if other == "tensor" else other
        y = m.rsub(x, o, alpha=alpha)
        y.sum().backward()
        outs.append((y, x.grad))
    for a, b in zip(outs[1], outs[0]):
        assert_close(a, b)
    assert ember.rsub(ember.tensor([1, 2]), 5).dtype is ember.int64


@pytest.mark.parametrize("name", SPECIAL)
def test_second_derivatives_match_torch(name):
    data = [0.1, 0.5, 0.9] if name == "ndtri" else [0.5, 1.5, 2.0] if name == "entr" else [0.5, 1.5, -2.0, 0.0, 35.0]
    if name == "sinc":
        data = data[:3] + data[4:]  # (at 0 PyTorch's second derivative is nan: its formula masks only the first)
    outs = []
    for m in (torch, ember):
        x = m.tensor(data, dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(getattr(m.special, name)(x).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        outs.append(gg)
    assert_close(outs[1], outs[0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["log_ndtr", "erfcx"])
def test_log_ndtr_and_erfcx_gradients_at_huge_inputs_as_pytorch(name):
    """PyTorch's gradients of log_ndtr and erfcx are formulas in the input's dtype on the result it returned:
    where x * x overflows float32 (log_ndtr at -1e30) the gradient is NaN, and where exp(-x^2/2 - log_ndtr(x))
    cancels (log_ndtr at -1e5) it is PyTorch's 1/sqrt(2 pi), not the float64 derivative. (erfcx at 1e30: 2 x
    erfcx(x) - 2/sqrt(pi) cancels to within a float32 step of 1.13, hence the tolerance.)"""
    values = [-3e38, -1e30, -1e5, -20.0, -1.0, 0.0, 1.0, 20.0, 1e5, 1e8, 1e30, 1e38, 3e38,
              float("inf"), float("-inf"), float("nan")]
    grads = []
    for m in (torch, ember):
        x = m.tensor(values, requires_grad=True)
        getattr(m.special, name)(x).sum().backward()
        grads.append(x.grad)
    assert_close(grads[1], grads[0], atol=2.5e-7, rtol=1e-6)

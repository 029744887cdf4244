"""lgamma, digamma, polygamma, xlogy, mvlgamma against torch: values (float64 and float32) and gradients."""

import numpy as np
import pytest
import torch
from oracle import check

import ember

X = np.concatenate([np.linspace(-7.7, 30.3, 401), [1e-6, 1e-3, 0.5, 1.0, 2.0, 3.0, 170.5, 1e4]])


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_and_gradients(name, dtype):
    x = X if dtype == np.float64 else X[X > 0]  # float32 near the negative poles: PyTorch computes in float32
    check(lambda m, x: getattr(m, name)(x), [x.astype(dtype)], dtype=dtype, atol=1e-9 if dtype == np.float64 else 1e-4,
          rtol=1e-9 if dtype == np.float64 else 1e-5)
    check(lambda m, x: getattr(x, name)(), [x.astype(dtype)], dtype=dtype, atol=1e-4, rtol=1e-5)


def test_poles_and_integers():
    x = np.array([0.0, -1.0, -2.0, 1.0, 2.0, 5.0])
    for name in ("lgamma", "digamma"):
        e, t = getattr(ember, name)(ember.tensor(x)), getattr(torch, name)(torch.tensor(x))
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12, atol=1e-14)
    assert ember.lgamma(ember.tensor([3, 4])).dtype == ember.float32  # integers compute in the default dtype


def test_polygamma():
    check(lambda m, x: m.polygamma(1, x), [X], dtype=np.float64, atol=1e-8, rtol=1e-8, grad=False)
    check(lambda m, x: m.polygamma(0, x), [X], dtype=np.float64, atol=1e-9, rtol=1e-9)
    check(lambda m, x: x.polygamma(1), [np.abs(X) + 0.1], dtype=np.float64, atol=1e-8, rtol=1e-8, grad=False)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_polygamma_higher_orders_and_their_gradients(n):
    x = X[np.abs(X - np.round(X)) > 1e-3]  # off the poles
    check(lambda m, x: m.polygamma(n, x), [x], dtype=np.float64, atol=1e-9, rtol=1e-9)
    check(lambda m, x: m.polygamma(n, x), [x[x > 0].astype(np.float32)], dtype=np.float32, atol=1e-4, rtol=1e-5)
    poles = np.array([0.0, -1.0, -3.0])
    e, t = ember.polygamma(n, ember.tensor(poles)), torch.polygamma(n, torch.tensor(poles))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="does not support negative n"):
        ember.polygamma(-1, ember.tensor(poles))
    assert ember.polygamma(2, ember.tensor([1, 2])).dtype == ember.float32


def test_xlogy_and_mvlgamma():
    x = np.array([0.0, 0.0, 1.5, 2.0, 0.0, -1.0])
    y = np.array([0.0, np.inf, 2.0, 0.5, np.nan, 3.0])
    e, t = ember.xlogy(ember.tensor(x), ember.tensor(y)), torch.xlogy(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(e.numpy(), t.numpy())
    check(lambda m, a, b: m.xlogy(a, b), [(3, 4), np.abs(np.random.default_rng(1).standard_normal((3, 4)))],
          dtype=np.float64)
    check(lambda m, a: m.mvlgamma(a, 3), [np.abs(X[:50]) + 2], dtype=np.float64, atol=1e-9, rtol=1e-9)
    check(lambda m, a: a.mvlgamma(p=2), [np.abs(X[:50]) + 2], dtype=np.float64, atol=1e-9, rtol=1e-9)


def test_special_names():
    x = np.array([0.0, 0.0, 1.5, 2.0, 0.0, -1.0, 2.0])
    y = np.array([-1.0, np.inf, 2.0, -0.5, np.nan, 3.0, -1.0])
    e, t = ember.special.xlog1py(ember.tensor(x), ember.tensor(y)), torch.special.xlog1py(torch.tensor(x),
                                                                                           torch.tensor(y))
    np.testing.assert_allclose(e.numpy(), t.numpy())
    pos = np.abs(X) + 0.1
    for fn in (lambda m, a: m.special.gammaln(a), lambda m, a: m.special.psi(a), lambda m, a: m.special.digamma(a),
               lambda m, a: m.special.polygamma(2, a), lambda m, a: m.special.multigammaln(a + 1, 2),
               lambda m, a: m.special.ndtr(a - 3)):
        check(fn, [pos], dtype=np.float64, atol=1e-9, rtol=1e-9)
        check(fn, [pos.astype(np.float32)], dtype=np.float32, atol=1e-4, rtol=1e-5)
    check(lambda m, a, b: m.special.xlog1py(a, b), [(3, 4), np.abs(np.random.default_rng(1).standard_normal((3, 4)))],
          dtype=np.float64)


def test_in_place_forms():
    for name in ("lgamma", "digamma"):
        e, t = ember.tensor(np.abs(X[:20]) + 0.1), torch.tensor(np.abs(X[:20]) + 0.1)
        getattr(e, name + "_")()
        getattr(t, name + "_")()
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-9)


@pytest.mark.parametrize("call", [
    lambda m: m.mvlgamma(m.tensor([2.5]), p=0),
    lambda m: m.mvlgamma(m.tensor([2.5]), -1),
    lambda m: m.tensor([2.5]).mvlgamma(0),
    lambda m: m.special.multigammaln(m.tensor([2.5]), 0),
    lambda m: m.mvlgamma(m.tensor([True]), 0),  # (the bool input's refusal first)
    lambda m: m.mvlgamma(m.tensor([2.5], requires_grad=True), 0, out=m.empty(0)),  # (autograd's first)
    lambda m: m.mvlgamma(m.tensor([2.5]), 0, out=m.empty(0, dtype=m.long)),  # (before out's dtype)
], ids=["p0", "p_negative", "method", "special", "bool", "out_grad", "out_long"])
def test_mvlgamma_refuses_p_below_one_as_pytorch(call):
    errors = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as err:
            call(m)
        errors.append(str(err.value))
    assert errors[0] == errors[1]


def test_mvlgamma_below_its_old_domain_and_of_integers_as_pytorch():
    """PyTorch no longer refuses elements at or below (p - 1) / 2: the formula's value (inf at a pole of lgamma)
    and gradient; an integer tensor's result is in the default float dtype. A float p is its TypeError."""
    results = []
    for m in (ember, torch):
        x = m.tensor([0.2, 0.5, 0.75, -0.3, 1.0], dtype=m.float64, requires_grad=True)
        y = m.mvlgamma(x, 2)
        y.sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), str(m.mvlgamma(m.tensor([2, 3]), 2).dtype)))
        with pytest.raises(TypeError, match="argument 'p'"):
            m.mvlgamma(m.tensor([2.5]), 1.5)
    (ey, eg, ed), (ty, tg, td) = results
    np.testing.assert_allclose(ey, ty, rtol=1e-9)
    np.testing.assert_allclose(eg, tg, rtol=1e-9)
    assert ed.split(".")[-1] == td.split(".")[-1]

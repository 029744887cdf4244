"""ember.distributions against torch.distributions: scores (log_prob, entropy, cdf, icdf), moments, shapes and
parameter gradients in float64 on the same inputs; samples by their statistics (the random streams differ)."""

import math

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
F64 = np.float64


def pos(*shape):
    return np.abs(RNG.standard_normal(shape)) + 0.5


def unit(*shape):
    return RNG.uniform(0.1, 0.9, shape)


def simplex(*shape):
    p = pos(*shape)
    return p / p.sum(-1, keepdims=True)


def spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


# name: (args as numpy arrays (parameters: gradients checked) or plain values, kwargs names, values to score)
CASES = {
    "Normal": (lambda: [RNG.standard_normal((3, 2)), pos(3, 2)], RNG.standard_normal((4, 3, 2))),
    "Uniform": (lambda: [np.array([-1.0, 0.0]), np.array([1.0, 3.0])], np.array([[0.5, 2.9], [-0.5, 0.1]])),
    "Laplace": (lambda: [RNG.standard_normal(3), pos(3)], RNG.standard_normal((2, 3))),
    "Cauchy": (lambda: [RNG.standard_normal(3), pos(3)], RNG.standard_normal((2, 3))),
    "Exponential": (lambda: [pos(4)], pos(2, 4)),
    "Gamma": (lambda: [pos(4), pos(4)], pos(2, 4)),
    "Chi2": (lambda: [pos(4) * 3], pos(2, 4)),
    "Beta": (lambda: [pos(3), pos(3)], unit(2, 3)),
    "Dirichlet": (lambda: [pos(2, 4)], simplex(3, 2, 4)),
    "LogNormal": (lambda: [RNG.standard_normal(3), pos(3)], pos(2, 3)),
    "StudentT": (lambda: [pos(3) * 3, RNG.standard_normal(3), pos(3)], RNG.standard_normal((2, 3))),
    "Poisson": (lambda: [pos(3) * 2], np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 7.0]])),
    "Geometric": (lambda: [unit(3)], np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 7.0]])),
    "HalfNormal": (lambda: [pos(3)], pos(2, 3)),
    "Gumbel": (lambda: [RNG.standard_normal(3), pos(3)], RNG.standard_normal((2, 3))),
}
DISCRETE_PROBS = {  # (constructor, probs-or-logits array, values)
    "Bernoulli": (unit(2, 3), np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])),
    "Categorical": (simplex(2, 4), np.array([[0, 3], [2, 1], [1, 1]])),
    "OneHotCategorical": (simplex(2, 4), np.eye(4)[np.array([[0, 3], [2, 1]])]),
    "Geometric": (unit(3), np.array([[0.0, 1.0, 4.0]])),
}


def _build(m, name, arrays, values):
    params = [m.tensor(a, requires_grad=True) for a in arrays]
    return getattr(m.distributions, name)(*params), params, m.tensor(values)


def _close(e, t, atol=1e-9, rtol=1e-9, msg=""):
    e = e.detach().numpy() if hasattr(e, "detach") else np.asarray(e)
    t = t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)
    assert e.shape == t.shape, f"{msg}: shape {e.shape} != {t.shape}"
    np.testing.assert_allclose(e, t, atol=atol, rtol=rtol, err_msg=msg)


def _compare_scores(name, e_dist, t_dist, e_params, t_params, e_val, t_val, entropy_atol=1e-8):
    assert tuple(e_dist.batch_shape) == tuple(t_dist.batch_shape)
    assert tuple(e_dist.event_shape) == tuple(t_dist.event_shape)
    e_lp, t_lp = e_dist.log_prob(e_val), t_dist.log_prob(t_val)
    _close(e_lp, t_lp, msg=f"{name}.log_prob")
    g = RNG.standard_normal(tuple(t_lp.shape))
    e_lp.backward(ember.tensor(g))
    t_lp.backward(torch.tensor(g))
    for i, (ep, tp) in enumerate(zip(e_params, t_params)):
        _close(ep.grad, tp.grad, atol=1e-8, rtol=1e-7, msg=f"{name}.log_prob grad of parameter {i}")
    for attr in ("mean", "variance", "stddev", "mode"):
        try:
            t_v = getattr(t_dist, attr)
        except NotImplementedError:
            continue
        _close(getattr(e_dist, attr), t_v, msg=f"{name}.{attr}")
    try:
        t_h = t_dist.entropy()
    except NotImplementedError:
        t_h = None
    if t_h is not None:
        _close(e_dist.entropy(), t_h, atol=entropy_atol, msg=f"{name}.entropy")


@pytest.mark.parametrize("name", sorted(CASES))
def test_continuous_scores_moments_gradients(name):
    make, values = CASES[name]
    arrays = make()
    e_dist, e_params, e_val = _build(ember, name, arrays, values)
    t_dist, t_params, t_val = _build(torch, name, arrays, values)
    _compare_scores(name, e_dist, t_dist, e_params, t_params, e_val, t_val)


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Laplace", "Cauchy", "Exponential", "LogNormal", "Gamma",
                                  "HalfNormal"])
def test_cdf_icdf(name):
    make, values = CASES[name]
    arrays = make()
    e_dist, _, e_val = _build(ember, name, arrays, values)
    t_dist, _, t_val = _build(torch, name, arrays, values)
    _close(e_dist.cdf(e_val), t_dist.cdf(t_val), atol=1e-10, msg=f"{name}.cdf")
    if name != "Gamma":  # PyTorch's Gamma has no icdf
        q = unit(*t_val.shape)
        _close(e_dist.icdf(ember.tensor(q)), t_dist.icdf(torch.tensor(q)), atol=1e-9, msg=f"{name}.icdf")


@pytest.mark.parametrize("name", sorted(DISCRETE_PROBS))
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_discrete_probs_and_logits(name, param):
    probs, values = DISCRETE_PROBS[name]
    arr = probs if param == "probs" else np.log(probs) - (0 if name in ("Categorical", "OneHotCategorical")
                                                          else np.log1p(-probs))
    e_p, t_p = ember.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
    e_dist = getattr(ember.distributions, name)(**{param: e_p})
    t_dist = getattr(torch.distributions, name)(**{param: t_p})
    _compare_scores(name, e_dist, t_dist, [e_p], [t_p], ember.tensor(values), torch.tensor(values))
    _close(e_dist.probs, t_dist.probs, msg=f"{name}.probs")
    _close(e_dist.logits, t_dist.logits, msg=f"{name}.logits")


def test_binomial():
    n, p = np.array([5.0, 10.0, 3.0]), unit(3)
    values = np.array([[0.0, 4.0, 3.0], [5.0, 10.0, 1.0]])
    for kw in ("probs", "logits"):
        arr = p if kw == "probs" else np.log(p) - np.log1p(-p)
        e_p, t_p = ember.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
        e_d = ember.distributions.Binomial(ember.tensor(n), **{kw: e_p})
        t_d = torch.distributions.Binomial(torch.tensor(n), **{kw: t_p})
        e_lp, t_lp = e_d.log_prob(ember.tensor(values)), t_d.log_prob(torch.tensor(values))
        _close(e_lp, t_lp, msg="Binomial.log_prob")
        e_lp.sum().backward()
        t_lp.sum().backward()
        _close(e_p.grad, t_p.grad, msg="Binomial grad")
        for attr in ("mean", "variance", "mode"):
            _close(getattr(e_d, attr), getattr(t_d, attr), msg=f"Binomial.{attr}")
    same = ember.distributions.Binomial(4, ember.tensor(p)), torch.distributions.Binomial(4, torch.tensor(p))
    _close(same[0].entropy(), same[1].entropy(), msg="Binomial.entropy")


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal(param):
    loc = RNG.standard_normal((2, 3))
    cov = spd(3, (2,))
    mat = {"covariance_matrix": cov, "precision_matrix": np.linalg.inv(cov),
           "scale_tril": np.linalg.cholesky(cov)}[param]
    values = RNG.standard_normal((4, 2, 3))
    dists, params = [], []
    for m in (ember, torch):
        p = [m.tensor(loc, requires_grad=True), m.tensor(mat, requires_grad=True)]
        dists.append(m.distributions.MultivariateNormal(p[0], **{param: p[1]}))
        params.append(p)
    e_d, t_d = dists
    _compare_scores("MultivariateNormal", e_d, t_d, params[0], params[1], ember.tensor(values),
                    torch.tensor(values))
    for attr in ("covariance_matrix", "precision_matrix", "scale_tril"):
        _close(getattr(e_d, attr), getattr(t_d, attr), atol=1e-9, msg=f"MVN.{attr}")


def test_independent_and_expand():
    loc, scale = RNG.standard_normal((3, 2)), pos(3, 2)
    e = ember.distributions.Independent(ember.distributions.Normal(ember.tensor(loc), ember.tensor(scale)), 1)
    t = torch.distributions.Independent(torch.distributions.Normal(torch.tensor(loc), torch.tensor(scale)), 1)
    assert tuple(e.batch_shape) == (3,) and tuple(e.event_shape) == (2,)
    x = RNG.standard_normal((5, 3, 2))
    _close(e.log_prob(ember.tensor(x)), t.log_prob(torch.tensor(x)))
    _close(e.entropy(), t.entropy())
    ex, tx = e.expand((4, 3)), t.expand((4, 3))
    assert tuple(ex.batch_shape) == tuple(tx.batch_shape) == (4, 3)
    _close(ex.log_prob(ember.tensor(x[:4])), tx.log_prob(torch.tensor(x[:4])))
    assert tuple(ex.sample((6,)).shape) == tuple(tx.sample((6,)).shape) == (6, 4, 3, 2)
    c = ember.distributions.Categorical(probs=ember.tensor(simplex(4))).expand((2, 3))
    assert tuple(c.batch_shape) == (2, 3) and tuple(c.sample((5,)).shape) == (5, 2, 3)


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Beta", "Dirichlet", "Categorical", "Bernoulli", "Poisson",
                                  "MultivariateNormal", "Exponential", "Laplace"])
def test_sample_shapes(name):
    ctor = {
        "Normal": lambda m: m.distributions.Normal(m.zeros(3), m.ones(3)),
        "Gamma": lambda m: m.distributions.Gamma(m.ones(3), m.ones(3)),
        "Beta": lambda m: m.distributions.Beta(m.ones(3), m.ones(3)),
        "Dirichlet": lambda m: m.distributions.Dirichlet(m.ones(2, 4)),
        "Categorical": lambda m: m.distributions.Categorical(logits=m.zeros(2, 4)),
        "Bernoulli": lambda m: m.distributions.Bernoulli(probs=m.full((3,), 0.3)),
        "Poisson": lambda m: m.distributions.Poisson(m.ones(3)),
        "MultivariateNormal": lambda m: m.distributions.MultivariateNormal(m.zeros(2, 3), m.eye(3)),
        "Exponential": lambda m: m.distributions.Exponential(m.ones(3)),
        "Laplace": lambda m: m.distributions.Laplace(m.zeros(3), m.ones(3)),
    }[name]
    for shape in ((), (5,), (2, 4)):
        e, t = ctor(ember).sample(shape), ctor(torch).sample(shape)
        assert tuple(e.shape) == tuple(t.shape), f"{name} sample{shape}"
        assert e.dtype.is_floating_point == t.dtype.is_floating_point


N = 200_000


@pytest.mark.parametrize("name, make", [
    ("Normal", lambda D, T: D.Normal(T([1.0, -2.0]), T([0.5, 2.0]))),
    ("Uniform", lambda D, T: D.Uniform(T([0.0, -1.0]), T([1.0, 3.0]))),
    ("Exponential", lambda D, T: D.Exponential(T([0.5, 2.0]))),
    ("Laplace", lambda D, T: D.Laplace(T([0.0, 1.0]), T([1.0, 0.5]))),
    ("Gamma", lambda D, T: D.Gamma(T([0.3, 4.0]), T([1.0, 2.0]))),
    ("Beta", lambda D, T: D.Beta(T([0.5, 3.0]), T([2.0, 1.5]))),
    ("Poisson", lambda D, T: D.Poisson(T([0.7, 12.0]))),
    ("Binomial", lambda D, T: D.Binomial(T([10.0, 3.0]), T([0.3, 0.8]))),
    ("Geometric", lambda D, T: D.Geometric(T([0.3, 0.8]))),
    ("Bernoulli", lambda D, T: D.Bernoulli(T([0.3, 0.8]))),
    ("StudentT", lambda D, T: D.StudentT(T([5.0, 9.0]), T([0.0, 1.0]), T([1.0, 2.0]))),
    ("LogNormal", lambda D, T: D.LogNormal(T([0.0, 0.5]), T([0.25, 0.5]))),
    ("HalfNormal", lambda D, T: D.HalfNormal(T([0.5, 2.0]))),
    ("Gumbel", lambda D, T: D.Gumbel(T([0.0, 1.0]), T([1.0, 0.5]))),
])
def test_sample_moments(name, make):
    """Means and variances of many draws agree with the distribution's (5 standard errors)."""
    ember.manual_seed(0)
    d = make(ember.distributions, lambda v: ember.tensor(v, dtype=ember.float64))
    x = d.sample((N,)).numpy()
    mean, var = d.mean.numpy(), d.variance.numpy()
    se = np.sqrt(var / N)
    assert np.all(np.abs(x.mean(0) - mean) < 5 * se + 1e-12), (x.mean(0), mean)
    assert np.all(np.abs(x.var(0) - var) < 0.05 * var + 1e-12), (x.var(0), var)


def test_categorical_sample_frequencies():
    ember.manual_seed(1)
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]])
    x = ember.distributions.Categorical(probs=ember.tensor(p)).sample((N,)).numpy()
    assert x.dtype == np.int64
    freq = np.stack([(x == k).mean(0) for k in range(3)], -1)
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / N) + 1e-12)
    assert not (x[:, 1] == 1).any()  # a zero-probability category is never drawn


def test_mvn_and_dirichlet_sample_moments():
    ember.manual_seed(2)
    cov = spd(3)
    d = ember.distributions.MultivariateNormal(ember.tensor([1.0, 0.0, -1.0], dtype=ember.float64),
                                               ember.tensor(cov))
    x = d.sample((N,)).numpy()
    np.testing.assert_allclose(np.cov(x.T), cov, rtol=0.05, atol=0.05)
    alpha = np.array([0.5, 2.0, 3.0])
    x = ember.distributions.Dirichlet(ember.tensor(alpha)).sample((N,)).numpy()
    np.testing.assert_allclose(x.mean(0), alpha / alpha.sum(), atol=3e-3)
    np.testing.assert_allclose(x.sum(-1), 1.0, atol=1e-12)


def test_rsample_is_reparameterised():
    """Location-scale rsample: d sum(x) / d loc = the number of draws, d sum(x) / d scale = sum of the noise."""
    for name in ("Normal", "Laplace", "Cauchy"):
        loc = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
        scale = ember.tensor([2.0, 0.5], dtype=ember.float64, requires_grad=True)
        x = getattr(ember.distributions, name)(loc, scale).rsample((7,))
        x.sum().backward()
        np.testing.assert_allclose(loc.grad.numpy(), [7.0, 7.0])
        np.testing.assert_allclose(scale.grad.numpy(), ((x.detach() - loc.detach()) / scale.detach()).sum(0).numpy())
    loc = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
    tril = ember.tensor(np.linalg.cholesky(spd(2)), requires_grad=True)
    x = ember.distributions.MultivariateNormal(loc, scale_tril=tril).rsample((5,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [5.0, 5.0])
    eps = np.linalg.solve(tril.detach().numpy(), (x.detach() - loc.detach()).numpy().T).T
    np.testing.assert_allclose(tril.grad.numpy(), np.ones((2, 1)) * eps.sum(0)[None, :], atol=1e-10)


def test_gamma_rsample_gradient_is_pytorchs_implicit_gradient():
    """The implicit reparameterisation gradient dx/dalpha matches PyTorch's at the same draws (PyTorch's is an
    approximation good to about 1e-4; ember's is within 1e-8 of the exact derivative)."""
    ember.manual_seed(3)
    alpha = ember.tensor([0.3, 1.0, 2.5, 10.0, 40.0], dtype=ember.float64, requires_grad=True)
    x = ember.distributions.Gamma(alpha, ember.ones(5, dtype=ember.float64)).rsample()
    x.sum().backward()
    expected = torch._standard_gamma_grad(torch.tensor(alpha.detach().numpy()), torch.tensor(x.detach().numpy()))
    np.testing.assert_allclose(alpha.grad.numpy(), expected.numpy(), rtol=5e-4)


def test_gamma_pathwise_gradient_is_unbiased():
    """E[d x / d alpha] over many Beta draws equals d E[x] / d alpha."""
    ember.manual_seed(4)
    a = ember.tensor([2.0], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([3.0], dtype=ember.float64)
    ember.distributions.Beta(a, b).rsample((N,)).mean().backward()
    np.testing.assert_allclose(a.grad.item(), 3.0 / 25.0, rtol=0.03)  # d/da a/(a+b) = b/(a+b)^2


@pytest.mark.parametrize("p, q", [
    ("Normal", "Normal"), ("Laplace", "Laplace"), ("Exponential", "Exponential"), ("Gamma", "Gamma"),
    ("Beta", "Beta"), ("Cauchy", "Cauchy"), ("Poisson", "Poisson"), ("Geometric", "Geometric"),
    ("Exponential", "Gamma"), ("Gamma", "Exponential"), ("Laplace", "Normal"), ("Normal", "Laplace"),
    ("Exponential", "Normal"), ("Gamma", "Normal"), ("Beta", "Normal"), ("Normal", "Gamma"),
    ("Gumbel", "Gumbel"), ("HalfNormal", "HalfNormal"),
])
def test_kl_divergence_pairs(p, q):
    cp, cq = CASES[p][0](), CASES[q][0]()
    cp, cq = [a.reshape(-1)[:2] for a in cp], [a.reshape(-1)[:2] for a in cq]
    e = ember.distributions.kl_divergence(_build(ember, p, cp, 0.0)[0], _build(ember, q, cq, 0.0)[0])
    t = torch.distributions.kl_divergence(_build(torch, p, cp, 0.0)[0], _build(torch, q, cq, 0.0)[0])
    _close(e, t, atol=1e-8, msg=f"KL({p} || {q})")


def test_kl_discrete_mvn_dirichlet_uniform_independent_transformed():
    D, T = ember.distributions, torch.distributions
    pairs = []
    p1, p2 = simplex(2, 4), simplex(2, 4)
    p1[0, 0] = 0.0  # a zero-probability category contributes 0
    pairs.append((lambda m: m.distributions.Categorical(probs=m.tensor(p1)),
                  lambda m: m.distributions.Categorical(probs=m.tensor(p2))))
    pairs.append((lambda m: m.distributions.OneHotCategorical(probs=m.tensor(p2)),
                  lambda m: m.distributions.OneHotCategorical(probs=m.tensor(p1))))
    b1, b2 = unit(3), unit(3)
    pairs.append((lambda m: m.distributions.Bernoulli(m.tensor(b1)), lambda m: m.distributions.Bernoulli(m.tensor(b2))))
    c1, c2 = spd(3, (2,)), spd(3)
    l1, l2 = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    pairs.append((lambda m: m.distributions.MultivariateNormal(m.tensor(l1), m.tensor(c1)),
                  lambda m: m.distributions.MultivariateNormal(m.tensor(l2), m.tensor(c2))))
    a1, a2 = pos(2, 4), pos(2, 4)
    pairs.append((lambda m: m.distributions.Dirichlet(m.tensor(a1)), lambda m: m.distributions.Dirichlet(m.tensor(a2))))
    pairs.append((lambda m: m.distributions.Uniform(m.tensor([0.0, 0.2], dtype=m.float64), m.tensor([1.0, 0.5])),
                  lambda m: m.distributions.Uniform(m.tensor([-1.0, 0.3], dtype=m.float64), m.tensor([2.0, 0.9]))))
    for q in ("Normal", "Beta", "Gamma", "Exponential"):
        args = [a[:2] for a in CASES[q][0]()]
        pairs.append((lambda m: m.distributions.Uniform(m.tensor([0.1, 0.2], dtype=m.float64), m.tensor([0.9, 0.5])),
                      lambda m, q=q, args=args: getattr(m.distributions, q)(*[m.tensor(a) for a in args])))
    s1, s2 = pos(3, 2), pos(3, 2)
    pairs.append((lambda m: m.distributions.Independent(m.distributions.Normal(m.zeros(3, 2, dtype=m.float64),
                                                                                 m.tensor(s1)), 1),
                  lambda m: m.distributions.Independent(m.distributions.Normal(m.ones(3, 2, dtype=m.float64),
                                                                                 m.tensor(s2)), 1)))
    pairs.append((lambda m: m.distributions.LogNormal(m.tensor(l2), m.tensor(b1)),
                  lambda m: m.distributions.LogNormal(m.tensor(-l2), m.tensor(b2))))
    for make_p, make_q in pairs:
        e = D.kl_divergence(make_p(ember), make_q(ember))
        t = T.kl_divergence(make_p(torch), make_q(torch))
        _close(e, t, atol=1e-8, msg=type(make_p(torch)).__name__)


def test_register_kl_and_missing_pair():
    D = ember.distributions

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return p.loc * 0 + 42.0

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 42.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 2.0)).item() > 0  # falls back to Normal-Normal
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Categorical(probs=ember.ones(2) / 2), D.Normal(0.0, 1.0))


def test_transforms_and_transformed_distribution():
    D, T = ember.distributions, torch.distributions
    x = RNG.standard_normal((5, 3))
    specs = [
        lambda m: [m.distributions.AffineTransform(m.tensor([0.5, -1.0, 2.0]), m.tensor([2.0, 0.5, -3.0]))],
        lambda m: [m.distributions.ExpTransform(), m.distributions.PowerTransform(m.tensor(2.0))],
        lambda m: [m.distributions.SigmoidTransform()],
        lambda m: [m.distributions.TanhTransform(), m.distributions.AffineTransform(1.0, 3.0)],
        lambda m: [m.distributions.SoftplusTransform()],
        lambda m: [m.distributions.ComposeTransform([m.distributions.AffineTransform(0.1, 0.7),
                                                     m.distributions.TanhTransform()])],
        lambda m: [m.distributions.StickBreakingTransform()],
        lambda m: [m.distributions.AffineTransform(m.zeros(3), 2.0, event_dim=1)],
    ]
    for make in specs:
        outs = []
        for m in (ember, torch):
            loc = m.tensor(x[0], requires_grad=True)
            base = m.distributions.Normal(loc, m.ones(3, dtype=m.float64))
            d = m.distributions.TransformedDistribution(base, make(m))
            y = d.transforms[0](m.tensor(x))
            for t in d.transforms[1:]:
                y = t(y)
            lp = d.log_prob(y)
            lp.sum().backward()
            inv = y
            for t in reversed(d.transforms):
                inv = t.inv(inv)
            outs.append((y, lp, loc.grad, inv, tuple(d.batch_shape), tuple(d.event_shape), d.sample((2,)).shape))
        (ey, elp, eg, einv, eb, ee, es), (ty, tlp, tg, tinv, tb, te, ts) = outs
        name = [type(t).__name__ for t in make(torch)]
        _close(ey, ty, msg=f"{name} forward")
        _close(elp, tlp, atol=1e-8, msg=f"{name} log_prob")
        _close(eg, tg, atol=1e-8, msg=f"{name} log_prob gradient")
        _close(einv, tinv, atol=1e-7, msg=f"{name} inverse")
        assert (eb, ee, tuple(es)) == (tb, te, tuple(ts))
    s = D.SoftmaxTransform()
    _close(s(ember.tensor(x)), T.SoftmaxTransform()(torch.tensor(x)))
    assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform().inv.inv == D.ExpTransform()
    t = D.ExpTransform().with_cache(1)
    y = t(ember.tensor(x))
    assert t.inv(y) is not None and t.inv(y) is t.inv(y)


def test_relaxed_and_straight_through():
    D, T = ember.distributions, torch.distributions
    temp, probs = np.array(0.7), simplex(2, 3)
    v = simplex(2, 3)
    for cls in ("RelaxedOneHotCategorical", "ExpRelaxedCategorical"):
        val = v if cls.startswith("Relaxed") else np.log(v)
        e_mod, t_mod = (D, T) if cls.startswith("Relaxed") else (D.relaxed_categorical, T.relaxed_categorical)
        e = getattr(e_mod, cls)(ember.tensor(temp), probs=ember.tensor(probs)).log_prob(ember.tensor(val))
        t = getattr(t_mod, cls)(torch.tensor(temp), probs=torch.tensor(probs)).log_prob(torch.tensor(val))
        _close(e, t, atol=1e-8, msg=cls)
    b = unit(3)
    for cls, val in (("RelaxedBernoulli", unit(3)), ("LogitRelaxedBernoulli", RNG.standard_normal(3))):
        e_mod, t_mod = (D, T) if cls.startswith("Relaxed") else (D.relaxed_bernoulli, T.relaxed_bernoulli)
        e = getattr(e_mod, cls)(ember.tensor(temp), probs=ember.tensor(b)).log_prob(ember.tensor(val))
        t = getattr(t_mod, cls)(torch.tensor(temp), probs=torch.tensor(b)).log_prob(torch.tensor(val))
        _close(e, t, atol=1e-8, msg=cls)
    x = D.RelaxedOneHotCategorical(ember.tensor(0.5), logits=ember.zeros(4, requires_grad=True)).rsample((3,))
    assert tuple(x.shape) == (3, 4) and np.allclose(x.detach().numpy().sum(-1), 1)
    logits = ember.tensor([0.1, 0.5, -0.2], requires_grad=True)
    s = D.OneHotCategoricalStraightThrough(logits=logits).rsample()
    (s * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert logits.grad is not None and np.allclose(s.detach().numpy().sum(), 1.0)


def test_mixture_same_family():
    w, loc, scale = simplex(2, 3), RNG.standard_normal((2, 3)), pos(2, 3)
    x = RNG.standard_normal((4, 2))

    def make(m):
        return m.distributions.MixtureSameFamily(m.distributions.Categorical(probs=m.tensor(w)),
                                                 m.distributions.Normal(m.tensor(loc), m.tensor(scale)))

    e, t = make(ember), make(torch)
    _close(e.log_prob(ember.tensor(x)), t.log_prob(torch.tensor(x)), msg="mixture log_prob")
    _close(e.mean, t.mean)
    _close(e.variance, t.variance)
    _close(e.cdf(ember.tensor(x)), t.cdf(torch.tensor(x)), atol=1e-10)
    assert tuple(e.sample((5,)).shape) == tuple(t.sample((5,)).shape) == (5, 2)


def test_validation_errors():
    D = ember.distributions
    cases = [
        lambda m: m.distributions.Normal(m.tensor([0.0]), m.tensor([-1.0])),
        lambda m: m.distributions.Categorical(probs=m.tensor([-0.1, 1.1])),
        lambda m: m.distributions.Bernoulli(probs=m.tensor([1.5])),
        lambda m: m.distributions.Categorical(),
        lambda m: m.distributions.Categorical(probs=m.tensor(0.5)),
        lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.tensor([[1.0, 2.0], [2.0, 1.0]])),
        lambda m: m.distributions.MultivariateNormal(m.zeros(2)),
        lambda m: m.distributions.Normal(0.0, 1.0).log_prob(m.zeros(2, 3)).shape and
        m.distributions.Normal(m.zeros(3), 1.0).log_prob(m.zeros(2)),
        lambda m: m.distributions.Exponential(m.ones(2)).log_prob(m.tensor([-1.0, 1.0])),
        lambda m: m.distributions.Dirichlet(m.ones(3)).log_prob(m.ones(2)),
        lambda m: m.distributions.Uniform(m.tensor([1.0]), m.tensor([0.0])),
        lambda m: m.distributions.Categorical(logits=m.zeros(3)).log_prob([1]),
    ]
    for i, make in enumerate(cases):
        with pytest.raises(ValueError) as te:
            make(torch)
        with pytest.raises(ValueError) as ee:
            make(ember)
        t_msg, e_msg = str(te.value), str(ee.value)
        # The same message up to the framework's names (torch.Size / tensor reprs).
        assert e_msg.split(":")[0].split("(")[0] == t_msg.split(":")[0].split("(")[0], (i, e_msg, t_msg)
    assert D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]), validate_args=False).scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]))  # no error
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_constraints():
    C, TC = ember.distributions.constraints, torch.distributions.constraints
    x = RNG.standard_normal((3, 4))
    for name in ("real", "positive", "nonnegative", "unit_interval", "simplex", "boolean", "nonnegative_integer",
                 "real_vector", "lower_cholesky", "positive_definite", "lower_triangular", "one_hot"):
        for v in (x, np.abs(x), simplex(3, 4), np.eye(4), np.round(np.abs(x)), spd(4), np.tril(np.abs(x[:, :3]))):
            _close(getattr(C, name).check(ember.tensor(v)).numpy(), getattr(TC, name).check(torch.tensor(v)).numpy(),
                   msg=name)
    assert repr(C.interval(0.0, 1.0)) == repr(TC.interval(0.0, 1.0))
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    assert C.independent(C.real, 1).event_dim == 1
    _close(C.interval(-1.0, 0.5).check(ember.tensor(x)).numpy(), TC.interval(-1.0, 0.5).check(torch.tensor(x)).numpy())


def test_enumerate_support_and_perplexity():
    p, q = simplex(2, 3), unit(2)
    for m in (ember, torch):
        c = m.distributions.Categorical(probs=m.tensor(p))
        b = m.distributions.Bernoulli(m.tensor(q))
        if m is ember:
            e = (c.enumerate_support().numpy(), b.enumerate_support().numpy(), c.perplexity().numpy())
        else:
            _close(e[0], c.enumerate_support().numpy())
            _close(e[1], b.enumerate_support().numpy())
            _close(e[2], c.perplexity().numpy())


def test_reachable_under_compat_names():
    import ember.distributions as d

    assert ember.distributions is d
    assert isinstance(ember.distributions.Normal(0.0, 1.0).log_prob(ember.tensor(0.0)).item(), float)
    assert math.isclose(ember.distributions.Normal(0.0, 1.0).log_prob(ember.tensor(0.0)).item(),
                        -0.5 * math.log(2 * math.pi), rel_tol=1e-6)
    assert ember.distributions.wishart.Wishart is ember.distributions.Wishart


@pytest.mark.parametrize("kw", ["probs", "logits"])
def test_negative_binomial(kw):
    n, p = pos(3) * 3, unit(3)
    arr = p if kw == "probs" else np.log(p) - np.log1p(-p)
    values = np.array([[0.0, 4.0, 3.0], [5.0, 10.0, 1.0]])
    e_n, t_n = ember.tensor(n, requires_grad=True), torch.tensor(n, requires_grad=True)
    e_p, t_p = ember.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
    e_d = ember.distributions.NegativeBinomial(e_n, **{kw: e_p})
    t_d = torch.distributions.NegativeBinomial(t_n, **{kw: t_p})
    _compare_scores("NegativeBinomial", e_d, t_d, [e_n, e_p], [t_n, t_p], ember.tensor(values), torch.tensor(values))
    ember.manual_seed(6)
    x = ember.distributions.NegativeBinomial(ember.tensor(n), ember.tensor(p)).sample((N,)).numpy()
    mean = n * p / (1 - p)
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(mean / (1 - p) / N))


def test_multinomial():
    p = simplex(2, 4)
    values = np.array([[[1.0, 0.0, 2.0, 2.0], [0.0, 5.0, 0.0, 0.0]], [[0.0, 0.0, 0.0, 5.0], [2.0, 1.0, 1.0, 1.0]]])
    for kw, arr in (("probs", p), ("logits", np.log(p))):
        e_p, t_p = ember.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
        e_d, t_d = ember.distributions.Multinomial(5, **{kw: e_p}), torch.distributions.Multinomial(5, **{kw: t_p})
        # PyTorch's entropy takes lgamma(n + 1) of an integer tensor, in float32: 1e-7 off the float64 value
        _compare_scores("Multinomial", e_d, t_d, [e_p], [t_p], ember.tensor(values), torch.tensor(values),
                        entropy_atol=1e-6)
    ember.manual_seed(5)
    x = ember.distributions.Multinomial(10, ember.tensor(p)).sample((N // 10,))
    assert tuple(x.shape) == (N // 10, 2, 4) and np.all(x.numpy().sum(-1) == 10)
    np.testing.assert_allclose(x.numpy().mean(0), 10 * p, atol=0.03)


def test_biject_to_and_transform_to():
    x = RNG.standard_normal((3, 4))
    D, T = ember.distributions, torch.distributions
    for which in ("biject_to", "transform_to"):
        for make in (lambda m: m.distributions.constraints.real, lambda m: m.distributions.constraints.positive,
                     lambda m: m.distributions.constraints.greater_than(1.5),
                     lambda m: m.distributions.constraints.less_than(-2.0),
                     lambda m: m.distributions.constraints.unit_interval,
                     lambda m: m.distributions.constraints.interval(-1.0, 3.0),
                     lambda m: m.distributions.constraints.simplex,
                     lambda m: m.distributions.constraints.independent(m.distributions.constraints.positive, 1)):
            e_t, t_t = getattr(D, which)(make(ember)), getattr(T, which)(make(torch))
            ey, ty = e_t(ember.tensor(x)), t_t(torch.tensor(x))
            _close(ey, ty, msg=f"{which}({make(torch)})")
            assert bool(make(ember).check(ey).all())
            if e_t.bijective:
                _close(e_t.log_abs_det_jacobian(ember.tensor(x), ey), t_t.log_abs_det_jacobian(torch.tensor(x), ty),
                       atol=1e-8)
                _close(e_t.inv(ey), x, atol=1e-7)
    e = D.transform_to(D.constraints.lower_cholesky)(ember.tensor(x[:3, :3]))
    t = T.transform_to(T.constraints.lower_cholesky)(torch.tensor(x[:3, :3]))
    _close(e, t)
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(D.constraints.boolean)


@pytest.mark.parametrize("shapes", [((2, 4), (4, 2), (4,)), ((4,), (3, 4, 1), (2, 1, 4))])
def test_lowrank_multivariate_normal(shapes):
    """Scores, moments and matrices (by Woodbury, never the full covariance) and their parameter gradients."""
    loc, factor, diag = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1]), pos(*shapes[2])
    dists, params = [], []
    for m in (ember, torch):
        p = [m.tensor(loc, requires_grad=True), m.tensor(factor, requires_grad=True), m.tensor(diag, requires_grad=True)]
        dists.append(m.distributions.LowRankMultivariateNormal(*p))
        params.append(p)
    e_d, t_d = dists
    values = RNG.standard_normal((5,) + tuple(t_d.batch_shape) + (4,))
    _compare_scores("LowRankMultivariateNormal", e_d, t_d, params[0], params[1], ember.tensor(values),
                    torch.tensor(values))
    for attr in ("covariance_matrix", "precision_matrix", "scale_tril"):
        _close(getattr(e_d, attr), getattr(t_d, attr), atol=1e-9, msg=f"LowRankMVN.{attr}")
    ex, tx = e_d.expand((6,) + tuple(t_d.batch_shape)), t_d.expand((6,) + tuple(t_d.batch_shape))
    _close(ex.log_prob(ember.tensor(values[:1])), tx.log_prob(torch.tensor(values[:1])))
    assert tuple(ex.rsample((2,)).shape) == tuple(tx.rsample((2,)).shape)


def test_lowrank_multivariate_normal_samples_and_errors():
    ember.manual_seed(3)
    factor, diag = RNG.standard_normal((3, 1)), pos(3)
    d = ember.distributions.LowRankMultivariateNormal(ember.zeros(3, dtype=ember.float64), ember.tensor(factor),
                                                      ember.tensor(diag))
    x = d.sample((N,)).numpy()
    np.testing.assert_allclose(np.cov(x.T), factor @ factor.T + np.diag(diag), rtol=0.05, atol=0.05)
    for m in (torch, ember):
        with pytest.raises(ValueError):
            m.distributions.LowRankMultivariateNormal(m.zeros(3), m.zeros(2, 1), m.ones(3))  # factor not 3 x m
        with pytest.raises(ValueError):
            m.distributions.LowRankMultivariateNormal(m.zeros(3), m.zeros(3, 1), m.ones(2))
        with pytest.raises(ValueError):
            m.distributions.LowRankMultivariateNormal(m.zeros(()), m.zeros(3, 1), m.ones(3))


@pytest.mark.parametrize("pair", ["lowrank-lowrank", "mvn-lowrank", "lowrank-mvn"])
def test_kl_low_rank_multivariate_normal(pair):
    """KL with a LowRankMultivariateNormal on either side (a low-rank variational posterior against a full-covariance
    prior, or the reverse): PyTorch's closed forms, values and gradients."""
    rng = np.random.default_rng(7)
    loc_p, loc_q = rng.standard_normal((2, 4)), rng.standard_normal(4)
    factor_p, factor_q = rng.standard_normal((2, 4, 2)), rng.standard_normal((4, 3))
    diag_p, diag_q = rng.uniform(0.5, 2.0, (2, 4)), rng.uniform(0.5, 2.0, 4)
    cov = spd(4)

    def run(m):
        D = m.distributions
        lp, lq, fp = m.tensor(loc_p, requires_grad=True), m.tensor(loc_q), m.tensor(factor_p, requires_grad=True)
        low_p = D.LowRankMultivariateNormal(lp, fp, m.tensor(diag_p))
        low_q = D.LowRankMultivariateNormal(lq, m.tensor(factor_q), m.tensor(diag_q))
        full_p, full_q = D.MultivariateNormal(lp, m.tensor(cov)), D.MultivariateNormal(lq, m.tensor(cov))
        p, q = {"lowrank-lowrank": (low_p, low_q), "mvn-lowrank": (full_p, low_q), "lowrank-mvn": (low_p, full_q)}[pair]
        kl = D.kl_divergence(p, q)
        kl.sum().backward()
        return kl, lp.grad, fp.grad

    (ek, elg, efg), (tk, tlg, tfg) = run(ember), run(torch)
    _close(ek, tk, atol=1e-10, msg=pair)
    _close(elg, tlg, atol=1e-10, msg=pair)
    if tfg is not None:
        _close(efg, tfg, atol=1e-10, msg=pair)


def test_weibull_scores_moments_and_expand():
    """Weibull(scale, concentration) against PyTorch: log_prob with its gradients, cdf/icdf, mean/mode/variance/
    entropy, expand, and a reparameterised draw's gradient (same exponential draws for the same seed)."""
    scale, conc = np.array([0.5, 1.0, 2.0]), np.array([0.7, 1.5, 3.0])
    x = np.array([0.3, 1.2, 2.5])

    def run(m):
        s, k = m.tensor(scale, requires_grad=True), m.tensor(conc, requires_grad=True)
        d = m.distributions.Weibull(s, k)
        lp = d.log_prob(m.tensor(x))
        lp.sum().backward()
        e = d.expand((2, 3))
        m.manual_seed(5)
        s2, k2 = m.tensor(scale, requires_grad=True), m.tensor(conc, requires_grad=True)
        draw = m.distributions.Weibull(s2, k2).rsample((4,))
        draw.sum().backward()
        return [lp, s.grad, k.grad, d.cdf(m.tensor(x)), d.icdf(m.tensor([0.1, 0.5, 0.9])), d.mean, d.mode, d.variance,
                d.entropy(), e.log_prob(m.tensor(x)), draw, s2.grad, k2.grad]

    for i, (e, t) in enumerate(zip(run(ember), run(torch))):
        _close(e, t, atol=1e-10, rtol=1e-9, msg=f"item {i}")
    assert isinstance(ember.distributions.Weibull(1.0, 2.0).expand((2,)), ember.distributions.Weibull)


def test_half_cauchy_scores_moments_and_expand():
    """HalfCauchy(scale) against PyTorch: log_prob (-inf below zero without validation) and its gradient, cdf/icdf,
    mean (inf), mode, variance, entropy, expand."""
    scale, x = np.array([0.5, 1.0, 3.0]), np.array([0.2, 1.5, 4.0])

    def run(m):
        s = m.tensor(scale, requires_grad=True)
        d = m.distributions.HalfCauchy(s)
        lp = d.log_prob(m.tensor(x))
        lp.sum().backward()
        loose = m.distributions.HalfCauchy(s.detach(), validate_args=False)
        return [lp, s.grad, d.cdf(m.tensor(x)), d.icdf(m.tensor([0.1, 0.5, 0.9])), d.mean, d.mode, d.variance,
                d.entropy(), d.expand((2, 3)).log_prob(m.tensor(x)), loose.log_prob(m.tensor([-1.0, 0.0, 1.0]))]

    for i, (e, t) in enumerate(zip(run(ember), run(torch))):
        _close(e, t, atol=1e-10, rtol=1e-9, msg=f"item {i}")
    assert isinstance(ember.distributions.HalfCauchy(1.0).expand((2,)), ember.distributions.HalfCauchy)

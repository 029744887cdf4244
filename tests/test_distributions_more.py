"""Pareto, Kumaraswamy, ContinuousBernoulli and FisherSnedecor against torch.distributions in float64: log_prob
and its parameter gradients, moments, entropy, cdf/icdf, expand, shapes, validation, the KL pairs PyTorch
registers for them, and draws (PyTorch's own numbers where the draw is a transform of uniform or exponential
draws; the statistics of FisherSnedecor's, whose gamma draws are ember's)."""

import math

import numpy as np
import pytest
import torch

import ember

# name: (parameter arrays, values to score, quantiles for icdf); the ContinuousBernoulli probs straddle the
# Taylor-expanded region around 1/2, the values include the support's ends
CASES = {
    "Pareto": ([np.array([0.5, 1.0, 2.0]), np.array([0.7, 2.5, 3.5])], np.array([0.6, 1.5, 4.0])),
    "Kumaraswamy": ([np.array([0.5, 1.5, 3.0]), np.array([0.7, 2.0, 0.9])], np.array([0.2, 0.5, 0.9])),
    "ContinuousBernoulli": ([np.array([0.1, 0.4995, 0.5, 0.7, 0.999])], np.array([0.2, 0.5, 0.9, 0.0, 1.0])),
    "FisherSnedecor": ([np.array([1.5, 3.0, 6.0]), np.array([2.5, 5.0, 9.0])], np.array([0.2, 1.0, 3.0])),
    "InverseGamma": ([np.array([0.7, 1.5, 3.0]), np.array([0.5, 2.0, 1.0])], np.array([0.2, 1.0, 3.0])),
    "LogisticNormal": ([np.array([0.3, -1.0, 0.5]), np.array([0.5, 1.0, 2.0])],
                       np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]])),
    # concentration 0 (the exponential limit), positive, and negative (a bounded support)
    "GeneralizedPareto": ([np.array([0.0, 1.0, -1.0, 0.5]), np.array([1.0, 2.0, 0.5, 1.0]),
                           np.array([0.0, 0.3, -0.4, 0.6])], np.array([0.5, 2.0, -0.5, 1.0])),
}
QUANTILES = np.array([0.1, 0.5, 0.9, 0.3, 0.7])
DRAWN_AS_PYTORCH = ["Pareto", "Kumaraswamy", "ContinuousBernoulli", "GeneralizedPareto", "LogisticNormal"]


def _numpy(t):
    if isinstance(t, (torch.Tensor, ember.Tensor)):
        return t.detach().numpy()
    return np.asarray(t)


def _close(e, t, msg, atol=1e-10, rtol=1e-9):
    e, t = _numpy(e), _numpy(t)
    assert e.shape == t.shape, f"{msg}: shape {e.shape} != {t.shape}"
    assert e.dtype == t.dtype, f"{msg}: dtype {e.dtype} != {t.dtype}"
    np.testing.assert_allclose(e, t, rtol=rtol, atol=atol, err_msg=msg, equal_nan=True)


def _optional(fn):
    """fn()'s value, or the string "not implemented" (PyTorch's FisherSnedecor has no entropy, cdf or icdf)."""
    try:
        return fn()
    except NotImplementedError:
        return "not implemented"


# PyTorch's GeneralizedPareto.log_prob refuses float64 parameters (isclose against a float32 zero): compared in
# float32 (ember's float64 scores are checked against them in test_generalized_pareto_float64)
FLOAT32 = {"GeneralizedPareto"}


def _scores(m, name):
    arrays, x = CASES[name]
    if name in FLOAT32:
        arrays, x = [a.astype(np.float32) for a in arrays], x.astype(np.float32)
    params = [m.tensor(a, requires_grad=True) for a in arrays]
    d = getattr(m.distributions, name)(*params)
    lp = d.log_prob(m.tensor(x))
    lp.sum().backward()
    e = d.expand((2, len(x)))
    q = m.tensor(QUANTILES[:len(x)])
    return {"log_prob": lp, **{f"grad {i}": p.grad for i, p in enumerate(params)},
            **{attr: _optional(lambda attr=attr: getattr(d, attr)) for attr in ("mean", "variance", "stddev", "mode")},
            "entropy": _optional(d.entropy), "cdf": _optional(lambda: d.cdf(m.tensor(x))),
            "icdf": _optional(lambda: d.icdf(q)), "expanded log_prob": e.log_prob(m.tensor(x)),
            "shapes": (tuple(d.batch_shape), tuple(d.event_shape), tuple(e.batch_shape), tuple(d.sample((4,)).shape),
                       tuple(d.rsample((2, 1)).shape), d.has_rsample, type(e).__name__)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_scores_moments_gradients_and_shapes(name):
    t, e = _scores(torch, name), _scores(ember, name)
    assert e.keys() == t.keys()
    for key in t:
        if isinstance(t[key], (str, tuple)):
            assert e[key] == t[key], f"{name} {key}"
        else:
            _close(e[key], t[key], f"{name} {key}", **({"atol": 1e-6, "rtol": 1e-6} if name in FLOAT32 else {}))


def test_generalized_pareto_float64():
    """ember's GeneralizedPareto scores float64 parameters (PyTorch's raises); they agree with float32's."""
    arrays, x = CASES["GeneralizedPareto"]
    d64 = ember.distributions.GeneralizedPareto(*[ember.tensor(a) for a in arrays])
    d32 = ember.distributions.GeneralizedPareto(*[ember.tensor(a, dtype=ember.float32) for a in arrays])
    for method in ("log_prob", "cdf", "log_survival_function"):
        lp64, lp32 = getattr(d64, method)(ember.tensor(x)), getattr(d32, method)(ember.tensor(x, dtype=ember.float32))
        assert lp64.dtype == ember.float64
        np.testing.assert_allclose(lp64.numpy(), lp32.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", DRAWN_AS_PYTORCH)
def test_draws_are_pytorchs_and_reparameterised(name):
    """Transforms of uniform (Kumaraswamy, ContinuousBernoulli, GeneralizedPareto), exponential (Pareto) or
    normal (LogisticNormal) draws: the same seed gives PyTorch's numbers, and their gradients with respect to
    the parameters."""
    out = []
    for m in (torch, ember):
        params = [m.tensor(a, requires_grad=True) for a in CASES[name][0]]
        m.manual_seed(3)
        draw = getattr(m.distributions, name)(*params).rsample((5,))
        (draw * m.arange(1.0, 6.0, dtype=m.float64).reshape(5, *[1] * (draw.dim() - 1))).sum().backward()
        m.manual_seed(4)
        plain = getattr(m.distributions, name)(*params).sample((2,))
        out.append([draw, plain, plain.requires_grad, *[p.grad for p in params]])
    t, e = out
    assert e[2] is t[2] is False
    for i in (0, 1, *range(3, len(t))):
        _close(e[i], t[i], f"{name} item {i}")


@pytest.mark.parametrize("name, params", [("Cauchy", [np.array([0.0, 1.5, -2.0]), np.array([0.5, 2.0, 1.0])]),
                                           ("HalfCauchy", [np.array([0.5, 2.0, 1.0])])])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cauchy_draws_are_pytorchs(name, params, dtype):
    """Cauchy and HalfCauchy draw through cauchy_() as PyTorch's do: the same seed gives PyTorch's samples (and
    leaves the generator where PyTorch's leaves it), with PyTorch's gradients with respect to the parameters."""
    out = []
    for m in (torch, ember):
        tensors = [m.tensor(a.astype(dtype), requires_grad=True) for a in params]
        m.manual_seed(7)
        draw = getattr(m.distributions, name)(*tensors).rsample((4,))
        (draw * m.arange(1.0, 5.0, dtype=getattr(m, dtype)).reshape(4, 1)).sum().backward()
        plain = getattr(m.distributions, name)(*tensors).sample((2,))
        out.append([draw, plain, m.rand(3), *[p.grad for p in tensors]])
    t, e = out
    for i, (a, b) in enumerate(zip(e, t)):
        _close(a, b, f"{name} item {i}", rtol=1e-6 if dtype == "float32" else 1e-12)


def test_float32_parameters_and_logits():
    """float32 parameters give float32 scores (the same ones); ContinuousBernoulli from logits as from probs."""
    out = []
    for m in (torch, ember):
        D = m.distributions
        x = m.tensor([0.2, 0.6], dtype=m.float32)
        cb = D.ContinuousBernoulli(logits=m.tensor([-1.5, 0.0], dtype=m.float64))
        out.append([D.Pareto(m.tensor([0.1, 0.5]), m.tensor([2.0, 3.0])).log_prob(x),
                    D.Kumaraswamy(m.tensor([1.5, 2.0]), m.tensor([2.0, 0.5])).log_prob(x),
                    D.ContinuousBernoulli(m.tensor([0.3, 0.8])).log_prob(x),
                    D.FisherSnedecor(m.tensor([3.0, 4.0]), m.tensor([5.0, 6.0])).log_prob(x),
                    cb.log_prob(x.double()), cb.probs, cb.mean, cb.entropy(), cb.cdf(x.double()),
                    D.ContinuousBernoulli(0.3).log_prob(m.tensor(0.4)), D.Pareto(1.0, 2.0).mean])
    for i, (e, t) in enumerate(zip(out[1], out[0])):
        _close(e, t, f"item {i}", atol=1e-6 if i < 4 or i == 9 else 1e-10)


def test_fisher_snedecor_draws_follow_the_distribution():
    """FisherSnedecor's draws (from ember's gamma stream): their mean and median, and a reparameterised
    gradient whose average is d E[X] / d df2 = -2 / (df2 - 2)^2."""
    n = 200_000
    ember.manual_seed(0)
    df1, df2 = ember.tensor([3.0, 8.0], dtype=ember.float64), ember.tensor([10.0, 20.0], dtype=ember.float64,
                                                                           requires_grad=True)
    d = ember.distributions.FisherSnedecor(df1, df2)
    x = d.rsample((n,))
    assert tuple(x.shape) == (n, 2) and x.dtype == ember.float64
    mean, var = d.mean.detach().numpy(), d.variance.detach().numpy()
    assert np.all(np.abs(x.detach().numpy().mean(0) - mean) < 5 * np.sqrt(var / n))
    tmedian = torch.distributions.FisherSnedecor(torch.tensor([3.0, 8.0], dtype=torch.float64),
                                                 torch.tensor([10.0, 20.0], dtype=torch.float64))
    below = (x.detach().numpy() < np.array([0.8451, 0.9486])).mean(0)  # scipy's f.median for (3, 10), (8, 20)
    np.testing.assert_allclose(below, 0.5, atol=0.01)
    assert tmedian.log_prob(torch.tensor([0.8451, 0.9486], dtype=torch.float64)).isfinite().all()
    x.mean(0).sum().backward()
    np.testing.assert_allclose(df2.grad.numpy(), -2 / (np.array([10.0, 20.0]) - 2) ** 2, rtol=0.1)


def test_inverse_gamma_draws_follow_the_distribution():
    """InverseGamma's draws (1 / ember's gamma draws): mean and variance, and a pathwise gradient whose average
    is d E[X] / d rate = 1 / (concentration - 1)."""
    n = 200_000
    ember.manual_seed(1)
    rate = ember.tensor([2.0, 0.5], dtype=ember.float64, requires_grad=True)
    d = ember.distributions.InverseGamma(ember.tensor([5.0, 9.0], dtype=ember.float64), rate)
    x = d.rsample((n,))
    mean, var = d.mean.detach().numpy(), d.variance.detach().numpy()
    assert np.all(np.abs(x.detach().numpy().mean(0) - mean) < 5 * np.sqrt(var / n))
    np.testing.assert_allclose(x.detach().numpy().var(0), var, rtol=0.1)
    x.mean(0).sum().backward()
    np.testing.assert_allclose(rate.grad.numpy(), 1 / np.array([4.0, 8.0]), rtol=0.01)


@pytest.mark.parametrize("make", [
    lambda m: m.distributions.InverseGamma(m.tensor([1.0]), m.tensor([-1.0])),
    lambda m: m.distributions.InverseGamma(m.tensor([1.0]), m.tensor([1.0])).log_prob(m.tensor([-1.0])),
    lambda m: m.distributions.LogisticNormal(m.tensor([0.0]), m.tensor([0.0])),
    lambda m: m.distributions.LogisticNormal(m.tensor([0.0]), m.tensor([1.0])).log_prob(m.tensor([0.5, 0.6])),
    lambda m: m.distributions.GeneralizedPareto(m.tensor([0.0]), m.tensor([-1.0]), m.tensor([0.5])),
    lambda m: m.distributions.GeneralizedPareto(m.tensor([0.0]), m.tensor([1.0]), m.tensor([-0.5])).log_prob(
        m.tensor([3.0])),
    lambda m: m.distributions.Pareto(m.tensor([1.0]), m.tensor([-1.0])),
    lambda m: m.distributions.Pareto(m.tensor([2.0]), m.tensor([1.0])).log_prob(m.tensor([1.0])),
    lambda m: m.distributions.Kumaraswamy(m.tensor([0.0]), m.tensor([1.0])),
    lambda m: m.distributions.Kumaraswamy(m.tensor([1.0]), m.tensor([1.0])).log_prob(m.tensor([1.5])),
    lambda m: m.distributions.ContinuousBernoulli(m.tensor([1.5]), validate_args=True),
    lambda m: m.distributions.ContinuousBernoulli(m.tensor([0.5]), m.tensor([0.0])),
    lambda m: m.distributions.ContinuousBernoulli(m.tensor([0.3])).log_prob(m.tensor([-0.1])),
    lambda m: m.distributions.FisherSnedecor(m.tensor([1.0]), m.tensor([0.0])),
    lambda m: m.distributions.FisherSnedecor(m.tensor([1.0]), m.tensor([2.0])).log_prob(m.tensor([-1.0])),
])
def test_validation_errors_are_pytorchs(make):
    with pytest.raises(ValueError) as te:
        make(torch)
    with pytest.raises(ValueError) as ee:
        make(ember)
    assert str(ee.value).split(":")[0].split("(")[0] == str(te.value).split(":")[0].split("(")[0]


def test_supports_and_constraints():
    # probs outside [0, 1] without validate_args: clamped without a check, as in PyTorch
    for m in (torch, ember):
        assert m.distributions.ContinuousBernoulli(m.tensor([1.5])).probs.item() == 1 - m.finfo(m.float32).eps
    for m in (torch, ember):
        D = m.distributions
        p = D.Pareto(m.tensor([1.0, 2.0]), m.tensor([3.0, 3.0]))
        assert p.support.check(m.tensor([1.0, 1.5])).tolist() == [True, False]
        assert D.Pareto.arg_constraints.keys() == {"alpha", "scale"}
        assert D.Kumaraswamy.support is D.constraints.unit_interval
        assert D.ContinuousBernoulli.support is D.constraints.unit_interval
        assert D.FisherSnedecor.support is D.constraints.positive
        # the support feeds biject_to: an unconstrained value maps into it
        assert D.biject_to(D.Kumaraswamy.support)(m.tensor(3.0)).item() < 1


def _make(m, name, i):
    """Two different instances of each family (i = 0, 1), (2,)-batched."""
    t = lambda *v: m.tensor(v, dtype=m.float64)  # noqa: E731
    return {
        "Pareto": [lambda: m.distributions.Pareto(t(0.5, 1.0), t(3.0, 2.5)),
                   lambda: m.distributions.Pareto(t(0.3, 2.0), t(1.5, 4.0))],
        "ContinuousBernoulli": [lambda: m.distributions.ContinuousBernoulli(t(0.2, 0.5)),
                                lambda: m.distributions.ContinuousBernoulli(logits=t(1.5, -0.7))],
        "Normal": [lambda: m.distributions.Normal(t(0.5, -1.0), t(1.0, 2.0))] * 2,
        "Exponential": [lambda: m.distributions.Exponential(t(0.7, 2.0))] * 2,
        "Gamma": [lambda: m.distributions.Gamma(t(2.0, 0.5), t(1.5, 3.0))] * 2,
        "Beta": [lambda: m.distributions.Beta(t(2.0, 0.5), t(1.5, 3.0))] * 2,
        "Uniform": [lambda: m.distributions.Uniform(t(0.1, -1.0), t(0.8, 3.0)),
                    lambda: m.distributions.Uniform(t(0.2, 1.5), t(0.6, 3.0))],
        "Gumbel": [lambda: m.distributions.Gumbel(t(0.5, -1.0), t(1.0, 2.0))] * 2,
        "Laplace": [lambda: m.distributions.Laplace(t(0.5, -1.0), t(1.0, 2.0))] * 2,
    }[name][i]()


# every pair PyTorch registers among these families (the new ones' pairs, and the infinite KLs of a
# distribution on the real line or half-line to one on a part of it)
FAMILIES = {"Pareto", "ContinuousBernoulli", "Normal", "Exponential", "Gamma", "Beta", "Uniform", "Gumbel", "Laplace"}
KL_PAIRS = [(p, q) for (p, q) in sorted({(a.__name__, b.__name__) for a, b in torch.distributions.kl._KL_REGISTRY})
            if {p, q} <= FAMILIES]


@pytest.mark.parametrize("p, q", KL_PAIRS)
def test_kl_divergence_pairs_pytorch_registers(p, q):
    out = []
    for m in (torch, ember):
        dp = _make(m, p, 0)
        dq = _make(m, q, 1)
        out.append(m.distributions.kl_divergence(dp, dq))
    _close(out[1], out[0], f"KL({p} || {q})", atol=1e-9)


def test_kl_pareto_gradients_and_infinite_cases():
    out = []
    for m in (torch, ember):
        scale = m.tensor([0.5, 1.0, 1.0], dtype=m.float64, requires_grad=True)
        alpha = m.tensor([3.0, 0.8, 2.5], dtype=m.float64, requires_grad=True)
        p = m.distributions.Pareto(scale, alpha)
        kls = [m.distributions.kl_divergence(p, m.distributions.Pareto(m.tensor([0.3, 0.5, 2.0]), m.tensor(2.0))),
               m.distributions.kl_divergence(p, m.distributions.Exponential(m.tensor(1.5, dtype=m.float64))),
               m.distributions.kl_divergence(p, m.distributions.Normal(m.tensor(0.0), m.tensor(2.0)))]
        total = sum(k.masked_fill(k.isinf(), 0).sum() for k in kls)
        total.backward()
        out.append(kls + [scale.grad, alpha.grad])
    for i, (e, t) in enumerate(zip(out[1], out[0])):
        _close(e, t, f"item {i}")
    assert math.isinf(out[1][0][2].item()) and math.isinf(out[1][1][1].item())


def test_every_pair_pytorch_registers_is_registered():
    names = lambda registry: {(p.__name__, q.__name__) for p, q in registry}  # noqa: E731
    # (other tests may register pairs of their own types)
    assert names(torch.distributions.kl._KL_REGISTRY) <= names(ember.distributions.kl._KL_REGISTRY)
    for m in (torch, ember):
        D = m.distributions
        p = D.Poisson(m.tensor([1.5, 2.0]))
        assert D.kl_divergence(p, D.Bernoulli(m.tensor([0.3, 0.5]))).tolist() == [math.inf] * 2
        assert D.kl_divergence(p, D.Binomial(3, m.tensor([0.3, 0.5]))).tolist() == [math.inf] * 2


def test_von_mises_scores_draws_and_expand():
    """VonMises against PyTorch: log_prob and its gradients (PyTorch's Bessel approximations), the circular
    variance, float64 draws of PyTorch's rejection sampler (its numbers for the same seed, in the parameters'
    dtype, also for a near-zero float32 concentration), expand, and no rsample."""
    def run(m):
        loc = m.tensor([0.5, -2.0, 3.0], dtype=m.float64, requires_grad=True)
        k = m.tensor([0.3, 2.0, 8.0], dtype=m.float64, requires_grad=True)
        d = m.distributions.VonMises(loc, k)
        lp = d.log_prob(m.tensor([0.1, 1.0, -3.0], dtype=m.float64))
        lp.sum().backward()
        m.manual_seed(2)
        draws = d.sample((4,))
        m.manual_seed(3)
        d32 = m.distributions.VonMises(m.tensor([0.5, 1.0]), m.tensor([1e-6, 5.0]))
        draws32 = d32.sample((3,))
        e = d.expand((2, 3))
        return [lp, loc.grad, k.grad, d.mean, d.mode, d.variance, draws, draws32,
                e.log_prob(m.tensor([0.1, 1.0, -3.0], dtype=m.float64)), d32.log_prob(m.tensor([0.2, 0.3]))]

    t, e = run(torch), run(ember)
    for i, (a, b) in enumerate(zip(e, t)):
        _close(a, b, f"item {i}", atol=1e-6 if i == 9 else 1e-10)
    d = ember.distributions.VonMises(ember.tensor(0.0), ember.tensor(1.0))
    assert not d.has_rsample and tuple(d.batch_shape) == () and d.sample().dtype == ember.float32
    assert isinstance(d.expand((2,)), ember.distributions.VonMises)
    with pytest.raises(ValueError):
        ember.distributions.VonMises(ember.tensor([0.0]), ember.tensor([-1.0]))


def test_cumulative_distribution_transform():
    """CumulativeDistributionTransform: cdf forward, icdf inverse, log_prob as log |det J|, the base's support as
    domain; a TransformedDistribution through it (a uniform on [0, 1]) scores and draws as PyTorch's."""
    def run(m):
        loc = m.tensor([0.5, -1.0], dtype=m.float64, requires_grad=True)
        base = m.distributions.Normal(loc, m.tensor([1.0, 2.0], dtype=m.float64))
        t = m.distributions.transforms.CumulativeDistributionTransform(base)
        x = m.tensor([0.3, 0.1], dtype=m.float64)
        y = t(x)
        ladj = t.log_abs_det_jacobian(x, y)
        (y.sum() + ladj.sum()).backward()
        td = m.distributions.TransformedDistribution(
            m.distributions.Normal(m.tensor([0.0], dtype=m.float64), m.tensor([1.0], dtype=m.float64)),
            [m.distributions.transforms.CumulativeDistributionTransform(
                m.distributions.Normal(m.tensor([0.0], dtype=m.float64), m.tensor([1.0], dtype=m.float64)))])
        m.manual_seed(0)
        return [y, t.inv(y), ladj, loc.grad, td.log_prob(m.tensor([0.25], dtype=m.float64)), td.sample((3,)),
                t.with_cache(1)(x)]

    for i, (e, t) in enumerate(zip(run(ember), run(torch))):
        _close(e, t, f"item {i}")
    T = ember.distributions.transforms.CumulativeDistributionTransform
    d = ember.distributions.Pareto(ember.tensor(1.0), ember.tensor(2.0))
    assert T(d).domain.check(ember.tensor([0.5, 1.5])).tolist() == [False, True]
    assert T(d).codomain is ember.distributions.constraints.unit_interval and T(d).sign == 1 and T(d).bijective
    assert T(d).with_cache(0)._cache_size == 0 and T(d).with_cache(1)._cache_size == 1


def test_pytorchs_public_names_are_there():
    """Every public name of torch.distributions (classes and their modules: ``distributions.chi2.Chi2``)."""
    missing = {n for n in dir(torch.distributions) if not n.startswith("_")} - set(dir(ember.distributions))
    assert missing == set()
    D = ember.distributions
    assert D.chi2.Chi2 is D.Chi2 and D.pareto.Pareto is D.Pareto and D.von_mises.VonMises is D.VonMises


def test_cat_and_stack_transforms():
    """CatTransform / StackTransform: forward, inverse, log-determinants (concatenated along a batch dim, summed
    into an event dim), domains, and biject_to / transform_to of cat and stack constraints, as PyTorch's."""
    x = np.array([[0.3, -1.2, 0.5, 2.0], [1.1, 0.4, -0.7, 0.2], [-0.5, 0.9, 1.3, -1.0]])

    def run(m):
        T, C = m.distributions.transforms, m.distributions.constraints
        xt = m.tensor(x, requires_grad=True)
        cat0 = T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], dim=1, lengths=[1, 3])
        cat1 = T.CatTransform([T.SigmoidTransform(), T.IndependentTransform(T.ExpTransform(), 1)], dim=1,
                              lengths=[1, 3])
        stack = T.StackTransform([T.ExpTransform(), T.TanhTransform(), T.SigmoidTransform()], dim=0)
        out = []
        for t in (cat0, cat1, stack):
            y = t(xt)
            out += [y, t.log_abs_det_jacobian(xt, y), t.bijective, t.inv(y)]
        (out[0].sum() + out[1].sum() + out[8].sum() + out[9].sum()).backward()
        cons = C.cat([C.positive, C.real, C.interval(0.0, 1.0)], dim=1, lengths=[1, 2, 1])
        stacked = C.stack([C.positive, C.unit_interval, C.real], dim=0)
        z = m.tensor(x)
        out += [xt.grad, m.distributions.biject_to(cons)(z), m.distributions.transform_to(stacked)(z),
                cons.check(m.distributions.transform_to(cons)(z)).all().item(),
                cat0.domain.check(z), stack.codomain.check(stack(z)), cat1.event_dim, cat0.with_cache(1)(z)]
        return out

    t, e = run(torch), run(ember)
    assert len(e) == len(t)
    for i, (a, b) in enumerate(zip(e, t)):
        if isinstance(b, (bool, int)):
            assert a == b, f"item {i}"
        else:
            _close(a, b, f"item {i}")
    T = ember.distributions.transforms
    with pytest.raises(AssertionError, match="must equal length 4"):
        T.CatTransform([T.ExpTransform(), T.ExpTransform()], dim=1, lengths=[1, 3])(ember.zeros(2, 3))
    with pytest.raises(AssertionError, match="out of range"):
        T.StackTransform([T.ExpTransform()], dim=2)(ember.zeros(1, 3))


@pytest.mark.parametrize("d", [2, 4])
def test_corr_cholesky_transform(d):
    """CorrCholeskyTransform against PyTorch: forward (a correlation Cholesky factor), inverse, the
    log-determinant and their gradients, shapes, biject_to(corr_cholesky); tril_matrix_to_vec / vec_to_tril_matrix."""
    x = np.random.default_rng(d).standard_normal((3, d * (d - 1) // 2))

    def run(m):
        T = m.distributions.transforms.CorrCholeskyTransform()
        xt = m.tensor(x, requires_grad=True)
        y = T(xt)
        ladj = T.log_abs_det_jacobian(xt, y)
        (y.sum() + ladj.sum()).backward()
        U = m.distributions.utils
        v = m.arange(1.0, 7.0)
        return [y, ladj, xt.grad, T.inv(y), T.forward_shape((3, x.shape[1])), T.inverse_shape((3, d, d)),
                m.distributions.constraints.corr_cholesky.check(y), type(m.distributions.biject_to(
                    m.distributions.constraints.corr_cholesky)).__name__, U.vec_to_tril_matrix(v),
                U.vec_to_tril_matrix(v, diag=-1), U.tril_matrix_to_vec(U.vec_to_tril_matrix(v, diag=-1), diag=-1)]

    for i, (e, t) in enumerate(zip(run(ember), run(torch))):
        if isinstance(t, (tuple, str)):
            assert e == t, f"item {i}"
        else:
            _close(e, t, f"item {i}")
    with pytest.raises(ValueError, match="cannot be expressed"):
        ember.distributions.utils.vec_to_tril_matrix(ember.arange(5.0))


def test_lkj_cholesky():
    """LKJCholesky against PyTorch: log_prob and its concentration gradient, shapes, expand, validation; draws
    (ember's beta stream) are correlation Cholesky factors whose correlations have the means and variances of
    PyTorch's draws (its onion method's: 1 / (2 concentration + dim - 1) for the first pair, larger for the
    others)."""
    def run(m):
        c = m.tensor([0.5, 2.0], dtype=m.float64, requires_grad=True)
        d = m.distributions.LKJCholesky(3, c)
        rng = np.random.default_rng(0)
        chol = m.distributions.transforms.CorrCholeskyTransform()(m.tensor(rng.standard_normal((2, 3)),
                                                                         dtype=m.float64))
        lp = d.log_prob(chol)
        lp.sum().backward()
        e = d.expand((3, 2))
        return [lp, c.grad, e.log_prob(chol), (tuple(d.batch_shape), tuple(d.event_shape), tuple(e.batch_shape),
                                               tuple(d.sample((4,)).shape), d.has_rsample)]

    t, e = run(torch), run(ember)
    for i, (a, b) in enumerate(zip(e, t)):
        if isinstance(b, tuple):
            assert a == b
        else:
            _close(a, b, f"item {i}")
    for m in (torch, ember):
        with pytest.raises(ValueError, match="greater than or equal to 2"):
            m.distributions.LKJCholesky(1, 1.0)
    n, eta, stats = 40_000, 2.0, []
    for m in (torch, ember):
        m.manual_seed(0)
        chol = m.distributions.LKJCholesky(3, m.tensor(eta, dtype=m.float64)).sample((n,))
        assert m.distributions.constraints.corr_cholesky.check(chol).all()
        offdiag = (chol @ chol.mT).numpy()[:, [0, 0, 1], [1, 2, 2]]
        np.testing.assert_allclose(offdiag.mean(0), 0, atol=0.02)
        stats.append(offdiag.var(0))
    np.testing.assert_allclose(stats[1], stats[0], rtol=0.05)
    np.testing.assert_allclose(stats[1][0], 1 / (2 * eta + 3 - 1), rtol=0.05)

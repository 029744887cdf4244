"""Wishart against PyTorch: its three parameterisations, moments, scores and their gradients, expand, errors
and warnings, and Bartlett draws (ember's chi-squared numbers differ from PyTorch's, so draws are checked by
their moments); plus the HalfNormal/HalfCauchy base and VonMises' parameters, unchanged by sharing code."""

import pickle
import warnings

import numpy as np
import pytest
import torch

import ember


def _params():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 3))
    cov = a @ a.transpose(0, 2, 1) + 3 * np.eye(3)
    x = rng.standard_normal((5, 2, 3, 8))
    return np.array([4.5, 6.0]), cov, x @ x.transpose(0, 1, 3, 2)


def _close(e, t, msg=""):
    e = e.detach().numpy() if hasattr(e, "detach") else np.asarray(e)
    t = t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)
    assert e.shape == t.shape, f"{msg}: {e.shape} != {t.shape}"
    np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-12, err_msg=msg)


@pytest.mark.parametrize("kw", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_moments_scores_and_gradients_match_torch(kw):
    df, cov, values = _params()
    matrix = np.linalg.cholesky(cov) if kw == "scale_tril" else cov

    def run(m):
        d_ = m.tensor(df, requires_grad=True)
        p = m.tensor(matrix, requires_grad=True)
        d = m.distributions.Wishart(d_, **{kw: p}, validate_args=True)
        lp = d.log_prob(m.tensor(values))
        ent = d.entropy()
        (lp.sum() + ent.sum()).backward()
        e = d.expand((4, 2))
        return [d.mean, d.mode, d.variance, d.covariance_matrix, d.precision_matrix, d.scale_tril, lp, ent,
                d_.grad, p.grad, e.entropy(), e.log_prob(m.tensor(values[:, None])), e.mean,
                (tuple(d.batch_shape), tuple(d.event_shape), tuple(e.batch_shape), d.has_rsample)]

    for i, (a, b) in enumerate(zip(run(ember), run(torch))):
        if isinstance(b, tuple):
            assert a == b
        else:
            _close(a, b, f"{kw} item {i}")


@pytest.mark.filterwarnings("ignore:Singular sample detected")  # PyTorch 2.13 gives it for every draw
def test_wishart_number_df_dtype_mode_and_broadcast_df():
    for m in (ember, torch):
        d = m.distributions.Wishart(3.0, covariance_matrix=m.eye(2))
        assert d.df.dtype == m.float32 and tuple(d.batch_shape) == () and d.sample().dtype == m.float32
        assert np.isnan(d.mode.numpy()).all()  # df <= p + 1: no mode
        d = m.distributions.Wishart(m.tensor([3.0, 4.0, 5.0]), scale_tril=m.eye(2))
        assert tuple(d.batch_shape) == (3,) and tuple(d.sample((2,)).shape) == (2, 3, 2, 2)
        _close(d.mode, torch.tensor([float("nan"), 1.0, 2.0])[:, None, None] * torch.eye(2), "mode")


@pytest.mark.filterwarnings("ignore:Singular sample detected")  # PyTorch 2.13 gives it for every draw
@pytest.mark.parametrize("kw", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_float32_df_with_a_float64_matrix_follows_the_matrix(kw):
    # Bartlett's chi-squared laws count their degrees of freedom in the matrix's dtype: float64 here
    seen = []
    for m in (ember, torch):
        m.manual_seed(0)
        d = m.distributions.Wishart(m.tensor([4.5, 6.0]), **{kw: m.eye(3, dtype=m.float64)})
        e = d.expand((3, 2))
        x = m.eye(3, dtype=m.float64) * 2
        seen.append([d.df.dtype, d._dist_chi2.df.dtype, e._dist_chi2.df.dtype, d.sample().dtype,
                     d.log_prob(x).dtype, d.entropy().dtype, d.mean.dtype])
        _close(d.log_prob(x), torch.distributions.Wishart(torch.tensor([4.5, 6.0]), **{kw: torch.eye(
            3, dtype=torch.float64)}).log_prob(torch.eye(3, dtype=torch.float64) * 2), f"{kw} log_prob")
    assert [str(t).split(".")[-1] for t in seen[0]] == [str(t).split(".")[-1] for t in seen[1]]


def test_wishart_errors_and_warnings_match_torch():
    for m in (ember, torch):
        with pytest.raises(AssertionError, match="Exactly one of covariance_matrix"):
            m.distributions.Wishart(3.0)
        with pytest.raises(AssertionError, match="Exactly one of covariance_matrix"):
            m.distributions.Wishart(3.0, covariance_matrix=m.eye(2), scale_tril=m.eye(2))
        with pytest.raises(ValueError, match="at least two-dimensional"):
            m.distributions.Wishart(3.0, covariance_matrix=m.ones(2))
        with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 2"):
            m.distributions.Wishart(2.0, covariance_matrix=m.eye(3))
        with pytest.warns(UserWarning, match="Low df values detected"):
            m.distributions.Wishart(2.5, covariance_matrix=m.eye(3))
        with pytest.raises(ValueError, match="covariance_matrix"):
            m.distributions.Wishart(3.0, covariance_matrix=-m.eye(2), validate_args=True)
        d = m.distributions.Wishart(3.0, covariance_matrix=m.eye(2), validate_args=True)
        with pytest.raises(ValueError, match="support"):
            d.log_prob(-m.eye(2))
        assert d.arg_constraints["df"].lower_bound == 1 and d.support is m.distributions.constraints.positive_definite


def test_wishart_draws_have_the_moments_and_pathwise_gradient():
    """Bartlett draws: positive definite, mean df * covariance and variance df (V_ij^2 + V_ii V_jj); the
    reparameterised draw's gradient is the mean's, d/dL sum(df L L^T), on average. A regular draw does not warn
    (PyTorch 2.13 warns "Singular sample detected." for every draw)."""
    df, cov, _ = _params()
    ember.manual_seed(0)
    L = ember.tensor(np.linalg.cholesky(cov), requires_grad=True)
    d = ember.distributions.Wishart(ember.tensor(df), scale_tril=L)
    n = 20_000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = d.rsample((n,))
    assert tuple(s.shape) == (n, 2, 3, 3) and bool(d.support.check(s).all())
    x = s.detach().numpy()
    mean, var = d.mean.detach().numpy(), d.variance.detach().numpy()
    assert (np.abs(x.mean(0) - mean) < 4 * np.sqrt(var / n)).all()
    np.testing.assert_allclose(x.var(0), var, rtol=0.1)
    s.sum().div(n).backward()
    expected = 2 * (df[:, None, None] * np.ones((3, 3))) @ np.linalg.cholesky(cov)
    np.testing.assert_allclose(L.grad.numpy(), expected, rtol=0.05)


def test_wishart_redraws_singular_draws(monkeypatch):
    """A draw that is not positive definite is drawn again (with PyTorch's warning) until it is."""
    d = ember.distributions.Wishart(ember.tensor([3.0, 4.0]), covariance_matrix=ember.eye(2))
    bartlett = d._bartlett_sampling
    calls = []

    def first_singular(sample_shape):
        out = bartlett(sample_shape)
        if not calls:
            out[1, 0] = 0.0  # draw 1, first batch matrix: singular
        calls.append(1)
        return out

    monkeypatch.setattr(d, "_bartlett_sampling", first_singular)
    ember.manual_seed(0)
    with pytest.warns(UserWarning, match="Singular sample detected"):
        s = d.rsample((3,))
    assert len(calls) == 2 and bool(d.support.check(s).all())


def test_wishart_kl_is_the_exponential_family_one_as_torch():
    """PyTorch registers no Wishart pair: KL(Wishart || Wishart) is the exponential family's Bregman divergence
    from the natural parameters and log normaliser, differentiable with respect to q's parameters (p's natural
    parameters are detached, as PyTorch's)."""
    out = []
    for m in (ember, torch):
        df = m.tensor([3.0, 5.0], dtype=m.float64, requires_grad=True)
        q_df = m.tensor(4.0, dtype=m.float64, requires_grad=True)
        q_tril = m.tensor([[1.0, 0.0], [0.3, 1.5]], dtype=m.float64, requires_grad=True)
        p = m.distributions.Wishart(df, covariance_matrix=m.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=m.float64))
        q = m.distributions.Wishart(q_df, scale_tril=q_tril)
        kl = m.distributions.kl_divergence(p, q)
        kl.sum().backward()
        assert df.grad is None
        out.append((kl, q_df.grad, q_tril.grad))
    for i, (a, b) in enumerate(zip(*out)):
        _close(a, b, f"kl item {i}")


def test_half_distributions_and_von_mises_unchanged_by_the_shared_code():
    """HalfNormal and HalfCauchy (one base) and VonMises (broadcast_params): attributes, pickling, expand's
    subclass check naming the class, log_prob's dtype, as PyTorch's."""
    for m in (ember, torch):
        D = m.distributions
        for cls in (D.HalfNormal, D.HalfCauchy):
            d = cls(m.tensor([1.0, 2.0]))
            assert isinstance(d, D.TransformedDistribution) and tuple(d.expand((3, 2)).batch_shape) == (3, 2)
            assert type(d.expand((2,))) is cls and sorted(d.__dict__) == sorted(pickle.loads(pickle.dumps(d)).__dict__)

            class Sub(cls):
                def __init__(self, scale):
                    super().__init__(scale)

            with pytest.raises(NotImplementedError, match=f"of {cls.__name__} that defines"):
                Sub(m.tensor([1.0])).expand((2,))
        v = D.VonMises(0.5, m.tensor([1.0, 2.0]))
        assert tuple(v.batch_shape) == (2,) and tuple(v.loc.shape) == (2,) and tuple(D.VonMises(0.0, 1.0).batch_shape) == ()
    half_values = [0.5, -1.0]
    for name in ("HalfNormal", "HalfCauchy"):
        e = getattr(ember.distributions, name)(ember.tensor([1.0, 2.0]), validate_args=False).log_prob(ember.tensor(half_values, dtype=ember.float64))
        t = getattr(torch.distributions, name)(torch.tensor([1.0, 2.0]), validate_args=False).log_prob(torch.tensor(half_values, dtype=torch.float64))
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], name
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)

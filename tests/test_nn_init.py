"""nn.init: distributions checked statistically against their formulas; gains and fans against torch."""

import math

import numpy as np
import pytest
import torch

import ember
import ember.nn as nn
from ember.nn import init


@pytest.fixture(autouse=True)
def seeded():
    ember.manual_seed(0)


def arr(t):
    return t.detach().numpy()


@pytest.mark.parametrize("name,param", [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None),
                                        ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None)])
def test_calculate_gain(name, param):
    assert init.calculate_gain(name, param) == pytest.approx(torch.nn.init.calculate_gain(name, param))


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", "x")


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2, 2), (6, 2, 5)])
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(ember.empty(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(ember.empty(3))


def test_uniform_normal_constant():
    t = ember.empty(200, 300)
    a = arr(init.uniform_(t, -2, 3))
    assert a.min() >= -2 and a.max() < 3 and abs(a.mean() - 0.5) < 0.03 and abs(a.std() - 5 / math.sqrt(12)) < 0.02
    a = arr(init.normal_(t, 1.5, 0.5))
    assert abs(a.mean() - 1.5) < 0.01 and abs(a.std() - 0.5) < 0.01
    assert np.all(arr(init.constant_(t, 0.25)) == 0.25)
    assert np.all(arr(init.ones_(t)) == 1) and np.all(arr(init.zeros_(t)) == 0)
    np.testing.assert_array_equal(arr(init.eye_(ember.empty(3, 4))), np.eye(3, 4))
    with pytest.raises(ValueError, match="2 dimensions"):
        init.eye_(ember.empty(3))


def test_init_is_outside_autograd_and_keeps_dtype():
    p = nn.Parameter(ember.zeros(10, 10, dtype=ember.float64))
    v = p._version
    init.normal_(p)
    assert p.grad_fn is None and p.requires_grad and p.dtype == ember.float64 and p._version == v + 1


def test_trunc_normal():
    a = arr(init.trunc_normal_(ember.empty(300, 300), mean=0.5, std=1.0, a=-1.0, b=1.5))
    assert a.min() >= -1.0 and a.max() <= 1.5
    # mean of N(0.5, 1) truncated to [-1, 1.5]: mu + sigma (phi(alpha) - phi(beta)) / Z
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    alpha, beta = -1.5, 1.0
    expected = 0.5 + (phi(alpha) - phi(beta)) / (cdf(beta) - cdf(alpha))
    assert abs(a.mean() - expected) < 0.01


def test_xavier():
    t = ember.empty(300, 200)
    bound = math.sqrt(6 / 500)
    a = arr(init.xavier_uniform_(t, gain=2.0))
    assert np.abs(a).max() <= 2 * bound and np.abs(a).max() > 1.9 * bound
    a = arr(init.xavier_normal_(t))
    assert abs(a.std() - math.sqrt(2 / 500)) < 0.002


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
def test_kaiming(mode):
    t = ember.empty(400, 100, 3)
    fan = 300 if mode == "fan_in" else 1200
    a = arr(init.kaiming_uniform_(t, a=0, mode=mode, nonlinearity="relu"))
    bound = math.sqrt(2) * math.sqrt(3 / fan)
    assert np.abs(a).max() <= bound and abs(a.std() - bound / math.sqrt(3)) < 0.002
    a = arr(init.kaiming_normal_(t, mode=mode))
    assert abs(a.std() - init.calculate_gain("leaky_relu", 0) / math.sqrt(fan)) < 0.002
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(t, mode="fan_avg")


def test_orthogonal():
    for shape in [(6, 4), (4, 6), (3, 2, 2)]:
        q = arr(init.orthogonal_(ember.empty(*shape), gain=2.0)).reshape(shape[0], -1)
        small = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
        np.testing.assert_allclose(small, 4 * np.eye(small.shape[0]), atol=1e-5)


@pytest.mark.parametrize("sparsity", [0.0, 0.3, 0.5, 1.0])
def test_sparse_zeros_per_column_as_pytorch(sparsity):
    rows, cols = 10, 400
    ours = arr(init.sparse_(ember.empty(rows, cols), sparsity, std=0.5))
    theirs = torch.nn.init.sparse_(torch.empty(rows, cols), sparsity, std=0.5).numpy()
    np.testing.assert_array_equal((ours == 0).sum(0), (theirs == 0).sum(0))
    nonzero = ours[ours != 0]
    if nonzero.size:
        assert abs(nonzero.std() - 0.5) < 0.03
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.sparse_(ember.empty(3), 0.5)


@pytest.mark.parametrize("factory,fan_in", [(lambda: nn.Linear(50, 400), 50), (lambda: nn.Conv2d(8, 100, 3), 72),
                                            (lambda: nn.Conv1d(4, 200, 5, groups=2), 10)])
def test_default_layer_init(factory, fan_in):
    layer = factory()
    w, b = arr(layer.weight), arr(layer.bias)
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) gives exactly this bound
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert np.abs(b).max() <= bound


def test_norm_layers_init():
    for layer in (nn.BatchNorm2d(5), nn.LayerNorm(5), nn.GroupNorm(1, 5)):
        assert np.all(arr(layer.weight) == 1) and np.all(arr(layer.bias) == 0)
    bn = nn.BatchNorm1d(3)
    assert np.all(arr(bn.running_var) == 1) and np.all(arr(bn.running_mean) == 0)


def test_seed_reproducible():
    ember.manual_seed(7)
    a = arr(nn.Linear(4, 4).weight).copy()
    ember.manual_seed(7)
    np.testing.assert_array_equal(arr(nn.Linear(4, 4).weight), a)


@pytest.mark.parametrize("old, args, kwargs", [
    ("constant", (0.5,), {}), ("uniform", (), {"a": -1.0, "b": 1.0}), ("normal", (), {"std": 0.02}),
    ("eye", (), {}), ("dirac", (), {}), ("xavier_uniform", (), {"gain": 2.0}), ("xavier_normal", (), {}),
    ("kaiming_uniform", (), {"mode": "fan_out"}), ("kaiming_normal", (), {"mode": "fan_out"}),
    ("orthogonal", (), {}), ("sparse", (0.5,), {}),
])
def test_deprecated_spellings_warn_as_torch_and_fill_as_the_scheme(old, args, kwargs):
    shape = (4, 3, 3) if old == "dirac" else (6, 4)
    t = torch.empty(*shape)
    with pytest.warns(FutureWarning) as torch_record:
        getattr(torch.nn.init, old)(t, *args, **kwargs)
    e = ember.empty(*shape)
    with pytest.warns(FutureWarning) as ember_record:
        out = getattr(init, old)(e, *args, **kwargs)
    assert [str(w.message) for w in ember_record] == [str(w.message) for w in torch_record]
    assert ember_record[0].filename == __file__  # the caller's line, as PyTorch's stacklevel=2
    assert out is e
    ember.manual_seed(0)
    expected = getattr(init, old + "_")(ember.empty(*shape), *args, **kwargs)
    np.testing.assert_array_equal(arr(e), arr(expected))
    if old in ("constant", "eye", "dirac"):  # deterministic: equal to torch's
        np.testing.assert_array_equal(arr(e), t.numpy())


@pytest.mark.parametrize("helper,args", [("_no_grad_uniform_", (-0.3, 0.7)), ("_no_grad_normal_", (0.5, 2.0)),
                                         ("_no_grad_trunc_normal_", (0.0, 1.0, -1.5, 1.5))])
@pytest.mark.parametrize("with_generator", [False, True])
def test_private_no_grad_helpers_draw_pytorchs_values(helper, args, with_generator):
    # PyTorch's private helpers, which programs call for their own schemes (GRU4Rec: _no_grad_uniform_ on a
    # parameter): the same draws for the same seed, in place on a leaf that requires grad, recording nothing
    got = []
    for m in (ember, torch):
        m.manual_seed(3)
        p = m.nn.Parameter(m.empty(5, 7))
        kwargs = {"generator": m.Generator().manual_seed(11)} if with_generator else {}
        out = getattr(m.nn.init, helper)(p, *args, **kwargs)
        assert out is p and p.grad_fn is None and p.requires_grad
        got.append(p.detach().numpy().copy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("helper,args", [("_no_grad_fill_", (2.5,)), ("_no_grad_zero_", ())])
def test_private_no_grad_fill_and_zero(helper, args):
    for m in (ember, torch):
        p = m.nn.Parameter(m.ones(2, 3))
        v = p._version
        assert getattr(m.nn.init, helper)(p, *args) is p
        assert p._version > v and p.grad_fn is None
        assert p.detach().numpy().tolist() == [[args[0] if args else 0.0] * 3] * 2


def test_private_no_grad_uniform_refuses_reversed_bounds_as_pytorch():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="expects to return a"):
            m.nn.init._no_grad_uniform_(m.empty(3), 1.0, 0.0)

"""ember's random draws against PyTorch's CPU streams: the same seed gives the same numbers, bit for bit, and leaves
the generator in the same state (compared as PyTorch's 5056-byte state). Every check runs with the compiled
kernels and with the NumPy path (``compiled``): both must be exact. tools/torch_rng/check.py is the research
record behind each rule."""

import math

import numpy as np
import pytest
import torch

import ember
from ember._kernels.policy import policy
from tests.oracle import assert_same_error

SIZES = [1, 3, 15, 16, 17, 33, 100, 1003]


@pytest.fixture(params=[True, False], ids=["compiled", "numpy"])
def compiled(request):
    with policy.override(compiled=request.param and policy.use_compiled(), min_compiled_elements=16,
                         min_compiled_draw=16):
        yield request.param


def state_bytes(lib, generator=None) -> bytes:
    state = generator.get_state() if generator is not None else lib.get_rng_state()
    return bytes(state.numpy().tobytes())


def same(make, seed=0):
    """make(lib) under manual_seed(seed) in both libraries: equal values, dtype and shape, and equal state after."""
    ember.manual_seed(seed)
    torch.manual_seed(seed)
    got, want = make(ember), make(torch)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        g, w = np.asarray(g.detach().numpy() if hasattr(g, "detach") else g), w.detach().numpy()
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert state_bytes(ember) == state_bytes(torch), "the generators' states differ after the draw"


FLOATS = ["float32", "float64"]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS + ["complex64"])
def test_rand_and_randn(n, dtype, compiled):
    same(lambda m: (m.rand(n, dtype=getattr(m, dtype)), m.randn(n, 2, dtype=getattr(m, dtype)),
                    m.randn(n, dtype=getattr(m, dtype))), seed=n)


@pytest.mark.parametrize("n", [5, 17, 100])
@pytest.mark.parametrize("dtype", FLOATS)
def test_in_place_draws(n, dtype, compiled):
    def make(m):
        dt = getattr(m, dtype)
        return (m.empty(n, dtype=dt).uniform_(-1 / 3, 2 / 7), m.empty(n, dtype=dt).uniform_(2.5, 1e3),
                m.empty(n, dtype=dt).normal_(0.5, 2.0), m.empty(n, dtype=dt).normal_(0.0, 0.02),
                m.empty(n, dtype=dt).exponential_(1.5), m.empty(n, dtype=dt).log_normal_(0.5, 0.3),
                m.empty(n, dtype=dt).geometric_(0.3), m.empty(n, dtype=dt).cauchy_(1.0, 2.0),
                m.empty(n, dtype=dt).bernoulli_(0.3), m.empty(n, dtype=dt).random_(-3, 10), m.empty(n, dtype=dt).random_())
    same(make, seed=n)


@pytest.mark.parametrize("dtype", FLOATS)
def test_strided_tensors_are_filled_in_memory_order(dtype, compiled):
    """A non-contiguous tensor takes the scalar normal path (even with 16 or more elements), in memory order."""
    def make(m):
        dt = getattr(m, dtype)
        return (m.empty(20, 4, dtype=dt).t().normal_(1.0, 0.5), m.empty(20, 4, dtype=dt)[:, ::2].uniform_(-2, 3),
                m.empty(6, 5, dtype=dt).t().exponential_(2.0), m.empty(6, 5, dtype=dt).t().bernoulli_(0.6),
                m.empty(6, 5, dtype=dt).t().bernoulli_(m.linspace(0, 1, 30, dtype=dt).reshape(5, 6)))
    same(make)


def test_the_cached_normal_sample_carries_across_calls():
    """The scalar path's second Box-Muller value is kept in the generator for the next scalar draw."""
    same(lambda m: (m.randn(3), m.randn(5), m.empty(3).normal_(), m.randn(20), m.empty(1).log_normal_()))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64"])
def test_integer_draws(dtype, compiled):
    def make(m):
        dt = getattr(m, dtype)
        out = [m.empty(40, dtype=dt).random_()]
        if dtype != "bool":
            out += [m.empty(40, dtype=dt).random_(2, 50), m.empty(40, dtype=dt).random_(5, None),
                    m.randint(3, 90, (40,), dtype=dt)]
        return tuple(out)
    same(make)


def test_wide_ranges_and_permutations(compiled):
    same(lambda m: (m.randint(-10, 2**35, (40, 3)), m.randint(0, 2**28, (20,)), m.randint(0, 2**28 - 1, (20,)),
                    m.empty(9, dtype=m.int64).random_(-2**63, None), m.randperm(1), m.randperm(17),
                    m.randperm(5000), m.randperm(40, dtype=m.float32)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_sampling_ops(dtype, compiled):
    def make(m):
        dt = getattr(m, dtype)
        w = m.rand(3, 17, dtype=dt)
        return (m.multinomial(w, 5, replacement=True), m.multinomial(w, 5), m.multinomial(w[0], 1),
                m.multinomial(w, 1, replacement=True), m.multinomial(w[1], 1, True),  # PyTorch's one-sample path
                m.bernoulli(m.linspace(0, 1, 40, dtype=dt)), m.bernoulli(m.zeros(40, dtype=dt), 0.25),
                m.normal(m.arange(20, dtype=dt), m.ones(20, dtype=dt) * 2), m.normal(m.arange(20, dtype=dt), 2.0),
                m.normal(2.0, m.arange(20, dtype=dt)), m.normal(1.0, 3.0, (4, 5), dtype=dt))
    same(make)


def test_generator_objects_are_independent_of_the_global_one(compiled):
    def make(m):
        g = m.Generator().manual_seed(7)
        out = (m.randn(40, generator=g), m.rand(3, generator=g), m.randperm(30, generator=g),
               m.randint(5, (9,), generator=g), m.empty(20).normal_(generator=g), m.randn(2))
        return (*out, m.tensor(np.frombuffer(state_bytes(m, g), np.uint8).copy()))
    same(make)


@pytest.mark.parametrize("seed", [0, 1, 2**32 + 5, 2**63 + 3, -1])
def test_seeds(seed):
    same(lambda m: m.rand(5), seed=seed)
    assert ember.initial_seed() == torch.initial_seed()
    assert ember.Generator().initial_seed() == torch.Generator().initial_seed()


def test_states_load_both_ways():
    torch.manual_seed(5)
    torch.randn(3)  # leaves a cached normal sample in the state
    state = torch.get_rng_state()
    ember.set_rng_state(ember.tensor(state.numpy()))
    assert state_bytes(ember) == bytes(state.numpy().tobytes())
    np.testing.assert_array_equal(ember.randn(21).numpy(), torch.randn(21).numpy())
    np.testing.assert_array_equal(ember.randn(1).numpy(), torch.randn(1).numpy())  # the cached sample

    ember.manual_seed(9)
    ember.rand(7)
    ember.randn(5)
    torch.set_rng_state(torch.from_numpy(ember.get_rng_state().numpy()))
    assert state_bytes(torch) == state_bytes(ember)
    np.testing.assert_array_equal(ember.randn(1).numpy(), torch.randn(1).numpy())
    np.testing.assert_array_equal(ember.rand(40).numpy(), torch.rand(40).numpy())
    ember.manual_seed(3)  # a fresh seed's state (PyTorch writes next=0 until the first draw)
    torch.manual_seed(3)
    assert state_bytes(ember) == state_bytes(torch)


def test_an_older_embers_pcg64_state_is_refused_with_an_explanation():
    old = ember.zeros(64, dtype=ember.uint8)  # what get_rng_state() returned before the generator was PyTorch's
    with pytest.raises(RuntimeError, match=r"size to be 64: this is the NumPy PCG64 state .* 5056 bytes"):
        ember.set_rng_state(old)
    with pytest.raises(RuntimeError, match="PCG64"):
        ember.Generator().set_state(old)
    bad = ember.get_rng_state().clone()
    bad[8:12] = 0  # left = 0: not a state PyTorch writes
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        ember.set_rng_state(bad)


MODULES = {
    "linear": lambda m: m.nn.Linear(20, 7),
    "linear-f64": lambda m: m.nn.Linear(20, 7, bias=False, dtype=m.float64),
    "conv1d": lambda m: m.nn.Conv1d(4, 6, 3),
    "conv2d-groups": lambda m: m.nn.Conv2d(4, 6, 3, groups=2),
    "conv3d": lambda m: m.nn.Conv3d(2, 3, (2, 3, 1)),
    "conv-transpose2d": lambda m: m.nn.ConvTranspose2d(4, 6, 3, groups=2),
    "conv-transpose3d": lambda m: m.nn.ConvTranspose3d(2, 3, 2, bias=False),
    "embedding": lambda m: m.nn.Embedding(10, 5, padding_idx=2),
    "rnn": lambda m: m.nn.RNN(4, 6, num_layers=2),
    "lstm": lambda m: m.nn.LSTM(4, 6, num_layers=2, bidirectional=True),
    "lstm-proj": lambda m: m.nn.LSTM(4, 6, proj_size=3),
    "gru": lambda m: m.nn.GRU(4, 6, bias=False, bidirectional=True),
    "cells": lambda m: m.nn.ModuleList([m.nn.RNNCell(4, 6), m.nn.LSTMCell(4, 6), m.nn.GRUCell(4, 6)]),
    "multihead": lambda m: m.nn.MultiheadAttention(8, 2, kdim=5, vdim=3, add_bias_kv=True),
    "transformer": lambda m: m.nn.Transformer(8, 2, 1, 1, 16, batch_first=True),
    "norms-bilinear": lambda m: m.nn.Sequential(m.nn.BatchNorm2d(5), m.nn.LayerNorm(5), m.nn.Bilinear(3, 4, 5)),
}


@pytest.mark.parametrize("name", MODULES)
def test_modules_initialise_to_pytorchs_weights(name, compiled):
    same(lambda m: tuple(MODULES[name](m).state_dict().values()))


INITS = {
    "xavier_uniform": lambda m, t: m.nn.init.xavier_uniform_(t, gain=1.3),
    "xavier_normal": lambda m, t: m.nn.init.xavier_normal_(t),
    "kaiming_uniform": lambda m, t: m.nn.init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"),
    "kaiming_normal": lambda m, t: m.nn.init.kaiming_normal_(t),
    "trunc_normal": lambda m, t: m.nn.init.trunc_normal_(t, std=0.02),
    "trunc_normal-narrow": lambda m, t: m.nn.init.trunc_normal_(t, a=-0.5, b=0.5),  # redraws whole tensors
    "trunc_normal-tail": lambda m, t: m.nn.init.trunc_normal_(t, a=1.5, b=3.0),  # the rejection path
    "uniform": lambda m, t: m.nn.init.uniform_(t, -0.1, 0.3),
    "normal": lambda m, t: m.nn.init.normal_(t, 0.1, 0.02),
    "sparse": lambda m, t: m.nn.init.sparse_(t, 0.3),
}


@pytest.mark.parametrize("name", INITS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_init_functions(name, dtype, compiled):
    same(lambda m: (INITS[name](m, m.empty(40, 30, dtype=getattr(m, dtype))),
                    INITS[name](m, m.empty(7, 3, dtype=getattr(m, dtype)))), seed=1)


def test_orthogonal_draws_pytorchs_normals():
    """The QR is NumPy's LAPACK (not bit-exact with PyTorch's): the values agree to float32 rounding, and the
    generator advances as PyTorch's does."""
    ember.manual_seed(2)
    torch.manual_seed(2)
    got = ember.nn.init.orthogonal_(ember.empty(30, 20)).numpy()
    want = torch.nn.init.orthogonal_(torch.empty(30, 20)).numpy()
    np.testing.assert_allclose(got, want, atol=2e-6)  # |q| <= 1, a QR of 30x20 in float32: ~100 ulps of 1
    assert state_bytes(ember) == state_bytes(torch)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [0.1, 1 / 3, 0.5, 0.9])
def test_dropout_masks(dtype, p):
    x = np.linspace(-3, 3, 4 * 5 * 6 * 7).reshape(4, 5, 6, 7)

    def make(m):
        xt, f = m.tensor(x, dtype=getattr(m, dtype)), m.nn.functional
        return (f.dropout(xt, p), m.nn.Dropout(p)(xt.transpose(1, 3)), f.dropout2d(xt, p), f.dropout3d(xt, p),
                f.alpha_dropout(xt, p, True), f.feature_alpha_dropout(xt, p, True), f.dropout1d(xt[0], p),
                f.dropout(xt.clone(), p, inplace=True))
    same(make, seed=3)


def test_attention_dropout_mask():
    x = np.linspace(-3, 3, 2 * 3 * 5 * 4).reshape(2, 3, 5, 4)
    ember.manual_seed(3)
    torch.manual_seed(3)
    xe, xt = ember.tensor(x), torch.tensor(x)
    got = ember.nn.functional.scaled_dot_product_attention(xe, xe, xe, dropout_p=0.4).numpy()
    want = torch.nn.functional.scaled_dot_product_attention(xt, xt, xt, dropout_p=0.4).numpy()
    np.testing.assert_array_equal(got == 0, want == 0)  # the mask (a kept probability is never 0 here)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)  # float64 attention arithmetic
    assert state_bytes(ember) == state_bytes(torch)


def _loader_epochs(m, kind):
    m.manual_seed(11)
    ds = m.utils.data.TensorDataset(m.arange(46, dtype=m.float32).reshape(23, 2), m.arange(23))
    data = m.utils.data
    loader = {
        "shuffle": lambda: data.DataLoader(ds, batch_size=5, shuffle=True),
        "generator": lambda: data.DataLoader(ds, batch_size=5, shuffle=True, generator=m.Generator().manual_seed(4)),
        "replacement": lambda: data.DataLoader(ds, 5, sampler=data.RandomSampler(ds, True, num_samples=70)),
        "num_samples": lambda: data.DataLoader(ds, 5, sampler=data.RandomSampler(ds, num_samples=50)),
        "weighted": lambda: data.DataLoader(ds, 5, sampler=data.WeightedRandomSampler([0.1, 0.5, 0, 2.0, 1.0], 12)),
        "weighted-without": lambda: data.DataLoader(ds, 5, sampler=data.WeightedRandomSampler(
            [0.1, 0.5, 0, 2.0, 1.0] * 3, 12, replacement=False)),
        "subset": lambda: data.DataLoader(ds, 5, sampler=data.SubsetRandomSampler([3, 5, 7, 9, 11, 13])),
        "workers": lambda: data.DataLoader(ds, 5, shuffle=True, num_workers=2, persistent_workers=True),
    }[kind]()
    out = []
    for _ in range(3):
        out += [y.tolist() for _, y in loader] + [m.rand(1).tolist()]  # the global state after each epoch
    return out


@pytest.mark.parametrize("kind", ["shuffle", "generator", "replacement", "num_samples", "weighted",
                                  "weighted-without", "subset", "workers"])
def test_data_loader_epochs(kind):
    assert _loader_epochs(ember, kind) == _loader_epochs(torch, kind)


def test_random_split_and_distributed_sampler():
    def make(m):
        m.manual_seed(11)
        ds = m.utils.data.TensorDataset(m.arange(23))
        parts = m.utils.data.random_split(ds, [0.3, 0.3, 0.4])
        given = m.utils.data.random_split(ds, [10, 13], generator=m.Generator().manual_seed(42))
        sampler = m.utils.data.distributed.DistributedSampler(ds, num_replicas=3, rank=1, seed=5)
        sampler.set_epoch(2)
        return [list(p.indices) for p in parts + given] + [list(sampler), m.rand(2).tolist()]
    assert make(ember) == make(torch)


def test_large_draws_match(compiled):
    """Enough values for every rounding case of the float32 normal kernel's emulation to be likely met."""
    same(lambda m: (m.randn(1 << 18), m.empty(1 << 16).normal_(0.3, 1.7), m.randn(1 << 14, dtype=m.float64),
                    m.empty(1 << 14, dtype=m.float64).normal_(-1.0, 0.5)), seed=math.floor(1e6))


@pytest.mark.parametrize("dtype", FLOATS)
def test_rrelu_slopes(dtype):
    """One float64 uniform per element <= 0, in order (the positive ones draw nothing), as PyTorch's CPU kernel."""
    x = np.linspace(-3, 2, 37).reshape(37, 1) * np.ones((1, 3))

    def make(m):
        xt = m.tensor(x, dtype=getattr(m, dtype), requires_grad=True)
        out = m.nn.functional.rrelu(xt, 0.1, 0.9, training=True)
        out.sum().backward()
        return out, xt.grad, m.nn.RReLU()(xt[:, :2])
    same(make)


@pytest.mark.parametrize("n", [1, 3, 16, 17])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_normals(n, dtype, compiled):
    # each part of a complex normal has PyTorch's std / sqrt(2) (not std * sqrt(0.5): one ulp apart in float64)
    def make(m):
        dt = getattr(m, dtype)
        zeros = m.zeros(n, dtype=dt)
        return tuple(m.view_as_real(z) for z in (
            m.randn(n, dtype=dt), m.normal(1.0, 2.0, (n,), dtype=dt), m.normal(zeros, 2.0),
            m.normal(zeros, m.full((n,), 3.0)), m.empty(n, dtype=dt).normal_(0.5, 2.0)))
    same(make, seed=n)


def test_complex_std_is_pytorchs_error():
    for std in (ember.ones(2, dtype=ember.complex64), -ember.ones(2, dtype=ember.complex64)):
        with pytest.raises(RuntimeError, match="normal expects standard deviation to be non-complex"):
            ember.normal(ember.zeros(2), std)


LAYOUTS = {
    "transposed": lambda m, dt: m.empty(20, 3, dtype=dt).t(),
    "permuted 3-d": lambda m, dt: m.empty(2, 3, 4, dtype=dt).permute(2, 0, 1),
    "channels last": lambda m, dt: m.empty(2, 3, 4, 5, dtype=dt).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
    "sliced, not dense": lambda m, dt: m.empty(6, 40, dtype=dt).t()[::2, 1:],
    "size-1 dims": lambda m, dt: m.empty(3, 1, 20, dtype=dt).transpose(0, 2),
    "expanded": lambda m, dt: m.empty(20, 1, dtype=dt).expand(20, 3),
    "scalar": lambda m, dt: m.empty((), dtype=dt),
    "empty": lambda m, dt: m.empty(0, 3, dtype=dt).t(),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_like_factories_draw_in_the_inputs_memory_order(layout, dtype, compiled):
    # PyTorch's *_like keep a strided input's dimension order (empty_like's preserve_format) and fill the new
    # tensor in memory order; a non-contiguous one takes the scalar normal path
    def make(m):
        dt = getattr(m, dtype)
        t = LAYOUTS[layout](m, dt)
        g = m.Generator().manual_seed(5)
        return (m.rand_like(t), m.randn_like(t), m.randint_like(t, 3, 1000), m.randint_like(t, 7, dtype=m.int16),
                m.randn_like(t, memory_format=m.contiguous_format), m.rand_like(t, generator=g),
                m.randn_like(t, dtype=m.float64, generator=g), g.get_state())
    same(make, seed=3)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 2, 4, 3)])
def test_like_factories_in_a_named_memory_format(shape, compiled):
    fmt = "channels_last" if len(shape) == 4 else "channels_last_3d"
    same(lambda m: tuple(f(m.empty(shape), memory_format=getattr(m, fmt))
                         for f in (m.rand_like, m.randn_like, lambda t, **k: m.randint_like(t, 9, **k))))
    with pytest.raises(RuntimeError, match=f"required rank {len(shape)} tensor to use {fmt} format"):
        ember.rand_like(ember.empty(2, 3), memory_format=getattr(ember, fmt))


@pytest.mark.parametrize("dtype", FLOATS)
def test_sampling_ops_on_strided_inputs(dtype):
    # bernoulli(p) fills a new row-major tensor whatever p's layout; multinomial draws its exponentials in the
    # weights' memory order, and one sample with replacement takes that path too
    def make(m):
        dt = getattr(m, dtype)
        p = m.linspace(0.05, 0.95, 12, dtype=dt).reshape(3, 4).t()
        w = m.arange(1, 13, dtype=dt).reshape(3, 4).t()
        return (m.bernoulli(p), m.bernoulli(p, 0.3), m.multinomial(w, 2), m.multinomial(w, 1),
                m.multinomial(w, 1, replacement=True), m.multinomial(w[:, 0], 1, replacement=True),
                m.multinomial(w, 3, replacement=True),
                m.tensor(list(m.utils.data.WeightedRandomSampler([0.5, 1.0, 2.0], 1))))
    same(make, seed=8)


@pytest.mark.parametrize("args", [(0, 10, 5), (10, 5)], ids=["low-high-int", "high-int"])
def test_randint_size_as_an_int_is_pytorchs_typeerror(args):
    # randint(10, 5) used to say "missing required argument 'size'" (a size was given, as an int) and
    # randint(0, 10, 5) drew five numbers where PyTorch refuses the call.
    with pytest.raises(TypeError):
        torch.randint(*args)
    with pytest.raises(TypeError, match=r"'size' \(position \d\) must be tuple of ints, not int"):
        ember.randint(*args)
    assert ember.randint(10, (5,)).shape == ember.randint(0, 10, [5]).shape == (5,)


def test_randint_high_and_size_as_keywords_draw_pytorchs_numbers():
    # flow_matching's tests call randint(high=2, size=(5,), dtype=float64): low is 0, as randint(2, (5,))
    same(lambda m: (m.randint(high=2, size=(5,), dtype=m.float64), m.randint(7, size=(3, 2)),
                    m.randint(high=9, size=[4])))


@pytest.mark.parametrize("kwargs", [{"size": (2,)}, {"high": 3}])
def test_randint_without_high_or_size_is_pytorchs_typeerror(kwargs):
    with pytest.raises(TypeError):
        torch.randint(**kwargs)
    with pytest.raises(TypeError):
        ember.randint(**kwargs)


def test_randint_low_by_keyword_without_high_is_pytorchs_typeerror():
    # randint(low=0, size=(2,)) took low as the high bound (an empty range: a RuntimeError); by position a lone
    # number is the high bound, as in PyTorch
    assert_same_error(lambda m: m.randint(low=0, size=(2,)))
    assert_same_error(lambda m: m.randint(low=3, size=(2,)))
    same(lambda m: (m.randint(5, size=(3,)), m.randint(0, high=5, size=(3,))))


@pytest.mark.parametrize("dtype", FLOATS)
def test_bernoulli_of_a_strided_input_draws_its_contiguous_copy(dtype, compiled):
    # PyTorch's functional bernoulli writes a new contiguous tensor in C order, whatever the input's strides
    # (an expanded probability tensor is what distributions.Bernoulli(p).sample((n,)) passes)
    def make(m):
        dt = getattr(m, dtype)
        p = m.rand(5, 1, 4, dtype=dt)
        a, b = m.bernoulli(p.expand(5, 3, 4)), m.bernoulli(p.expand(5, 3, 4).transpose(0, 2))
        c = m.rand(4, 6, dtype=dt).t().bernoulli()
        d = m.bernoulli(m.zeros(4, 6, dtype=dt).t(), 0.3)
        assert a.is_contiguous() and b.is_contiguous() and c.is_contiguous() and d.is_contiguous()
        return a, b, c, d
    same(make)


@pytest.mark.parametrize("dtype", FLOATS)
def test_distribution_samples(dtype, compiled):
    # PPO / REINFORCE programs sample actions through these: PyTorch's samples for the same seed
    from torch import distributions as td

    import ember.distributions as ed

    def make(m):
        d = ed if m is ember else td
        p = m.rand(5, 4, dtype=getattr(m, dtype))
        return (d.Categorical(probs=p).sample(), d.Categorical(logits=p).sample((2, 3)),
                d.OneHotCategorical(probs=p).sample((2,)), d.Bernoulli(probs=p).sample((2,)),
                d.Bernoulli(logits=p[0]).sample(), d.Geometric(p[0]).sample((3,)), d.Exponential(p[0] + 1).sample((2,)),
                d.Exponential(p[1] + 1).rsample())
    same(make)


@pytest.mark.parametrize("dtype", FLOATS + ["float16"])
def test_poisson_draws_pytorchs_counts(dtype):
    """torch.poisson (and Poisson.sample, which calls it): PyTorch's counts for the same seed, below 10 (the product
    of uniforms), from 10 on (transformed rejection), 0 and infinite rates, a strided input, a Generator; the
    generator's state after is PyTorch's (ember had no torch.poisson, and Poisson.sample drew NumPy's numbers)."""
    from torch import distributions as td

    import ember.distributions as ed

    rates = [0.5, 3.0, 0.0, 9.999, 10.0, 12.5, 100.0, 1e6, 0.01, float("inf")]

    def make(m):
        d = ed if m is ember else td
        r = m.tensor(rates, dtype=getattr(m, dtype))
        return (m.poisson(r), m.poisson(r[:4].expand(3, 4).t(), generator=m.Generator().manual_seed(5)),
                m.poisson(m.rand(40, dtype=getattr(m, dtype)) * 30), d.Poisson(r[:7]).sample((2,)))
    same(make)


def test_poisson_gradient_and_errors():
    """A sample of a rate that requires grad has PyTorch's PoissonBackward0 (zero gradient); a negative or NaN
    rate and an integer input are PyTorch's errors."""
    grads = []
    for m in (torch, ember):
        rate = m.tensor([2.0, 20.0], requires_grad=True)
        out = m.poisson(rate)
        (out * 3).sum().backward()
        grads.append((type(out.grad_fn).__name__, rate.grad.tolist()))
    assert grads[1] == grads[0]
    for bad in ([1.0, -1.0], [float("nan")], [1, 2]):
        assert_same_error(lambda m, bad=bad: m.poisson(m.tensor(bad)))


# -- gamma-based distributions: PyTorch's Marsaglia-Tsang sampler, draw for draw --------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("alpha", [[0.2], [1.0], [3.5, 0.7, 12.0, 0.05], [1e-3, 250.0]])
def test_gamma_sample_is_pytorchs(alpha, dtype):
    # alpha below 1 takes the boosted path (one more uniform); large alpha rarely rejects, small often does
    same(lambda lib: lib.distributions.Gamma(lib.tensor(alpha, dtype=getattr(lib, dtype)),
                                             lib.tensor(2.0, dtype=getattr(lib, dtype))).sample((40,)), seed=3)


@pytest.mark.parametrize("block", [None, 1])
def test_gamma_after_a_cached_normal_and_across_read_ahead_blocks_is_pytorchs(block, monkeypatch):
    # the sampler reads uniforms drawn ahead in blocks (block=1: the smallest, many blocks in one sample); a normal
    # cached by an earlier scalar draw is its first normal, its last unused one is left cached for the next draw
    from ember import _random_draws

    if block is not None:
        stream = _random_draws._ScalarStream
        monkeypatch.setattr(_random_draws, "_ScalarStream", lambda g, expected: stream(g, block))
    alphas = [0.0, 0.3, 2.5, 0.0, 1e-3, 40.0]
    same(lambda lib: (lib.randn(1, dtype=lib.float64),
                      lib.distributions.Gamma(lib.tensor(alphas * 8), lib.tensor(1.0), validate_args=False).sample((5,)),
                      lib.randn(3, dtype=lib.float64)), seed=11)


@pytest.mark.parametrize("concentration", [[0.2, 0.2], [1.0, 1.0], [0.5, 2.0, 7.0]])
def test_dirichlet_and_beta_samples_are_pytorchs(concentration):
    # _sample_dirichlet draws its gammas in float64 even for float32 concentrations, then normalises in float64
    same(lambda lib: lib.distributions.Dirichlet(lib.tensor(concentration)).sample((30,)), seed=5)
    same(lambda lib: lib.distributions.Beta(lib.tensor([concentration[0]]),
                                            lib.tensor([concentration[1]])).sample((30,)), seed=6)
    same(lambda lib: lib.distributions.Beta(lib.tensor(concentration[0], dtype=lib.float64),
                                            lib.tensor(concentration[1], dtype=lib.float64)).rsample((7,)), seed=7)


def test_chi2_and_studentt_draw_pytorchs_gammas():
    same(lambda lib: lib.distributions.Chi2(lib.tensor([1.0, 4.0])).sample((20,)), seed=8)
    same(lambda lib: lib.distributions.StudentT(lib.tensor(3.0)).sample((20,)), seed=9)

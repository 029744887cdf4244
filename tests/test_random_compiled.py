"""The compiled random draws (``ember._kernels.mt19937``: the mt19937 words and the uniform, bernoulli and normal
transforms made of them in one pass) against their reference, the NumPy path, and against PyTorch: the same values
bit for bit and the same generator state after, at sizes around PyTorch's blocks of 16, the mt19937's 624-word
blocks and the kernels' 1024-word blocks, from a generator part-way through its stream."""

import numpy as np
import pytest
import torch

import ember
from ember._kernels import mt19937
from ember._kernels.policy import policy
from ember._random_math import fma32

pytestmark = pytest.mark.skipif(not policy.use_compiled(), reason="numba's compiled kernels are not available")

SIZES = [1, 15, 16, 17, 511, 513, 623, 624, 625, 1023, 1025, 1249, 4097]
STARTS = [0, 5, 623, 624, 1000]  # words drawn before: fresh, mid-block, at and past a twist


def compiled_always():
    return policy.override(compiled=True, min_compiled_elements=1, min_compiled_draw=1)


def numpy_path():
    return policy.override(compiled=False)


def state_bytes(lib) -> bytes:
    return bytes(lib.get_rng_state().numpy().tobytes())


def run(make, lib, seed, start):
    lib.manual_seed(seed)
    if start:
        lib.randint(0, 2**20, (start,))  # ``start`` words (a range below 2**28 takes one word a value)
    values = make(lib)
    return [np.asarray(v.float().numpy() if v.dtype == lib.bfloat16 else v.numpy()) for v in values], state_bytes(lib)


def assert_same(got, want):
    (got_values, got_state), (want_values, want_state) = got, want
    for g, w in zip(got_values, want_values, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert got_state == want_state, "the generators' states differ after the draw"


def draws(n, dtype):
    # [1, 1 + eps): about half the values round to the bound, which PyTorch replaces by the lower one
    eps = float(np.finfo(np.float64 if dtype == "float64" else np.float32).eps)

    def make(m):
        dt = getattr(m, dtype)
        return (m.rand(n, dtype=dt), m.empty(n, dtype=dt).uniform_(-0.7, 2.5),
                m.empty(n, dtype=dt).uniform_(1.0, 1.0 + eps), m.randn(n, dtype=dt),
                m.empty(n, dtype=dt).normal_(0.3, 1.7), m.empty(n, dtype=dt).normal_(0.0, 0.02),
                m.empty(n, dtype=dt).bernoulli_(0.3), m.nn.functional.dropout(m.ones(n, dtype=dt), 0.1),
                m.randint(-5, 1000, (n,)), m.randint(0, 2**28, (n,)), m.randint(-(2**40), 2**41, (n,)),
                m.randint(2**62, 2**63 - 1, (n,)), m.randint(-3, 2**28 - 4, (n,), dtype=m.int32))
    return make


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("n", SIZES)
def test_words_and_uniforms_are_the_numpy_paths(n, start):
    g = ember.Generator()

    def make():
        g.manual_seed(n + start)
        g.u32(start)
        return [g.u32(n), g.unit32(n), g.unit64(n), g.u64(n)], bytes(g.get_state().numpy().tobytes())

    with numpy_path():
        want = make()
    with compiled_always():
        got = make()
    assert_same(got, want)


@pytest.mark.parametrize("start", [0, 5, 624])
@pytest.mark.parametrize("n", [15, 16, 17, 1023, 1025])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_draws_are_pytorchs(n, start, dtype):
    with compiled_always():
        assert_same(run(draws(n, dtype), ember, n, start), run(draws(n, dtype), torch, n, start))


@pytest.mark.parametrize("n", [15, 17, 1025])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_types_are_the_numpy_paths(n, dtype):
    """(float16 and bfloat16 are rounded from float32 draws, not PyTorch's streams: docs/api.md.)"""
    with numpy_path():
        want = run(draws(n, dtype), ember, n, 7)
    with compiled_always():
        got = run(draws(n, dtype), ember, n, 7)
    assert_same(got, want)


def test_a_model_and_its_dropout_at_the_default_threshold():
    """Sizes past ``min_compiled_draw`` (96 Ki) under the default policy: Linear's kaiming_uniform_ and bias,
    ``normal_`` in place, a dropout mask, a randn with a ragged tail of 16."""
    assert 385 * 257 >= policy.min_compiled_draw
    mt19937.uniform32._compiled = None  # drop the dispatcher: it must be made again by these draws

    def make(m):
        layer = m.nn.Linear(257, 385)
        return (layer.weight.detach(), layer.bias.detach(), m.nn.init.normal_(m.empty(385, 257), 0.1, 0.02),
                m.nn.functional.dropout(m.ones(97, 1025), 0.5), m.randn(1 << 17 | 7), m.rand(1 << 17, dtype=m.float64))

    assert_same(run(make, ember, 0, 3), run(make, torch, 0, 3))
    assert mt19937.uniform32._compiled is not None, "the compiled kernel did not run"


def test_a_generator_object_and_the_global_one_stay_apart():
    """A compiled draw on a ``Generator`` leaves the global generator's state alone, and the reverse."""
    with compiled_always():
        ember.manual_seed(1)
        before = state_bytes(ember)
        g = ember.Generator().manual_seed(2)
        got = g.unit32(2000)
        assert state_bytes(ember) == before
        ember.rand(3000)
        want = torch.Generator().manual_seed(2)
        np.testing.assert_array_equal(got, torch.rand(2000, generator=want).numpy())
        np.testing.assert_array_equal(g.unit32(5), torch.rand(5, generator=want).numpy())


def test_the_compiled_fma_rounds_once_as_the_reference():
    """``kernel.fma32`` (one fused multiply-add instruction) against ``ember._random_math.fma32``: random triples,
    and sums whose float64 value lies on a float32 midpoint that the exact value misses (two roundings, the
    product's then the sum's, would give the even neighbour)."""
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(1 << 14).astype(np.float32) * np.float32(s) for s in (1, 3, 100))
    one_up = np.float32(1 + 2**-23)
    a = np.concatenate([a, np.float32([2**-24 * (1 + 2**-23), -(2**-24) * (1 + 2**-23)])])
    b = np.concatenate([b, np.float32([1 - 2**-23, 1 - 2**-23])])
    c = np.concatenate([c, [one_up, -one_up]])
    want = fma32(a, b, c)
    assert want[-2] == one_up and want[-1] == -one_up  # (the reference's own rounding, checked)
    for i in range(a.size):
        got = a.copy()
        mt19937.scale32(got[i:i + 1], b[i], c[i])
        assert got[i] == want[i], (a[i], b[i], c[i])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_inits_are_pytorchs_in_place(dtype):
    """``nn.init`` on weights past ``min_compiled_draw`` writes the draws into the weights themselves (a view
    taken before sees them, the version counter moves as PyTorch's); a strided one takes the copying path."""
    def make(m):
        dt, init = getattr(m, dtype), m.nn.init
        w, u = m.empty(500, 200, dtype=dt), m.empty(385, 257, dtype=dt)
        row, version = w[3], w._version
        init.kaiming_uniform_(w, a=5 ** 0.5)
        assert w._version == version + 1
        init.normal_(u, 0.1, 0.02)
        strided = init.uniform_(m.empty(200, 300, dtype=dt).t(), -0.5, 0.25)
        tail = init.trunc_normal_(m.empty(1 << 17 | 5, dtype=dt), 0.0, 0.5)
        return w, row.clone(), u, strided.contiguous(), tail

    assert_same(run(make, ember, 0, 11), run(make, torch, 0, 11))

"""The in-place elementwise kernels (GELU, softmax / log_softmax, LayerNorm) against PyTorch and against the
per-row reference paths they short-cut, on the shapes of a transformer and on the inputs that take the
fallbacks (rows of very different scale, masked rows, inf and nan, half precision, empty and 0-d tensors)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from nn_oracle import compare_module
from oracle import check, make_inputs

import ember
from ember._kernels import policy
from ember.ops import activation as act

RNG = np.random.default_rng(7)
GPT_ACT = RNG.standard_normal((4, 16, 64)).astype(np.float32) * 3
EXTREMES = np.array([-40.0, -9.0, -5.0, -2.0, -1e-4, 0.0, 1e-4, 0.5, 2.0, 5.0, 9.0, 40.0])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("x", [GPT_ACT, EXTREMES.astype(np.float32), EXTREMES, np.float32(0.7), np.zeros((0, 3))],
                         ids=["gpt", "extremes32", "extremes64", "0d", "empty"])
def test_gelu_against_torch(approximate, x):
    # the tanh formula's derivative loses a few ulps to cancellation (1 - tanh^2) in PyTorch too
    check(lambda m, a: m.nn.functional.gelu(a, approximate=approximate), [np.asarray(x)], atol=1e-5 if approximate ==
          "tanh" else 1e-6, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_special_values_both_paths(dtype):
    """Forward alone (no derivative kept) and forward + backward take different formulas for the sign: both give
    PyTorch's values at +-0, denormals, the tails and nan, and the same as each other at +-inf (where PyTorch's
    own float32 and float64 kernels disagree: nan and inf)."""
    x = np.array([0.0, -0.0, 1e-38, -1e-45, 1e-30, -1e-4, 5.5, -5.5, 40, -40, np.nan, np.inf, -np.inf], dtype)
    xt = torch.tensor(x, requires_grad=True)
    theirs = torch.nn.functional.gelu(xt)
    theirs.backward(torch.ones_like(theirs))
    with ember.no_grad():
        alone = ember.nn.functional.gelu(ember.tensor(x)).numpy()
    xe = ember.tensor(x, requires_grad=True)
    ours = ember.nn.functional.gelu(xe)
    ours.backward(ember.ones_like(ours))
    with_grad = ours.detach().numpy()
    for got in (alone, with_grad):
        np.testing.assert_allclose(got[:-2], theirs.detach().numpy()[:-2], rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(alone[-2:], with_grad[-2:])
    np.testing.assert_allclose(xe.grad.numpy()[:-2], xt.grad.numpy()[:-2], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_noncontiguous_input(approximate):
    x = GPT_ACT.transpose(2, 0, 1)[::2]
    check(lambda m, a: m.nn.functional.gelu(a, approximate=approximate), [x], atol=1e-5, rtol=1e-5)


def _masked_scores():
    s = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32) * 4
    s[..., np.triu_indices(8, 1)[0], np.triu_indices(8, 1)[1]] = -np.inf  # causal mask
    return s


def _mixed_scale():
    s = RNG.standard_normal((6, 10)).astype(np.float32)
    s[0] *= 50  # rows far apart: shifting by the global max would underflow the others
    s[1] -= 300
    s[2] += 1e4
    return s


SOFTMAX_INPUTS = {
    "gpt": (RNG.standard_normal((2, 4, 16, 16)).astype(np.float32), -1),
    "masked": (_masked_scores(), -1),
    "mixed_scale": (_mixed_scale(), -1),
    "dim0": (RNG.standard_normal((5, 7)).astype(np.float32) * 10, 0),
    "noncontiguous": (RNG.standard_normal((6, 8)).astype(np.float32).T, -1),
    "float64": (RNG.standard_normal((3, 9)) * 100, 1),
    "0d": (np.array(2.5, dtype=np.float32), 0),
    "empty_rows": (np.zeros((0, 4), np.float32), -1),
    "empty_dim": (np.zeros((3, 0), np.float32), -1),
}


@pytest.mark.parametrize("name", list(SOFTMAX_INPUTS))
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_against_torch(fn, name):
    x, dim = SOFTMAX_INPUTS[name]
    check(lambda m, a: getattr(m, fn)(a, dim), [x], atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_half_precision_computes_in_float32(fn):
    x = (RNG.standard_normal((5, 7)) * 4).astype(np.float16)
    check(lambda m, a: getattr(m, fn)(a, 1), [x], atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_nonfinite_rows(fn):
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    x[0] = -np.inf  # a fully masked row is nan in PyTorch
    x[1, 2] = np.inf
    x[2, 3] = np.nan
    e, t = getattr(ember, fn)(ember.tensor(x), 1).numpy(), getattr(torch, fn)(torch.tensor(x), 1).numpy()
    np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("name", ["gpt", "masked", "mixed_scale", "float64"])
def test_softmax_global_shift_equals_per_row_shift(name):
    """The one-reduction shift gives the per-row reference's result to float rounding (or falls back to it): a row
    shifted by a max up to ~11 above its own loses up to ~11 float32 ulps in exp."""
    x, dim = SOFTMAX_INPUTS[name]
    x2 = np.ascontiguousarray(np.moveaxis(x, dim, -1)).reshape(-1, x.shape[dim])
    ref_d = x2 - x2.max(axis=1, keepdims=True)
    ref_s = np.exp(ref_d).sum(axis=1, keepdims=True)
    y, logy = np.empty_like(x2), np.empty_like(x2)
    act.softmax_rows(x2, y)
    act.softmax_rows(x2, logy, log=True)
    np.testing.assert_allclose(y, np.exp(ref_d) / ref_s, rtol=4e-6, atol=1e-30)
    np.testing.assert_allclose(logy, ref_d - np.log(ref_s), rtol=1e-6, atol=1e-6)


def test_row_sums_match_numpy():
    a = RNG.standard_normal((3, 4, 33)).astype(np.float32)
    for arr, dim in ((a, 2), (a, 1), (a[..., ::2], 2), (np.float32(2.0) * np.ones(()), 0)):
        np.testing.assert_allclose(act.row_sums(np.asarray(arr), dim), np.sum(arr, axis=dim, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("shape,norm", [((4, 16, 64), 64), ((3, 5, 6), (5, 6)), ((7,), 7), ((0, 4), 4), ((3, 0), 0),
                                        ((2, 1), 1)])
@pytest.mark.parametrize("kwargs", [{}, {"elementwise_affine": False}, {"bias": False}])
def test_layernorm_rows_against_torch(shape, norm, kwargs):
    em, tm = ember.nn.LayerNorm(norm, **kwargs), torch.nn.LayerNorm(norm, **kwargs)
    if tm.weight is not None:
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
    if tm.bias is not None:
        with torch.no_grad():
            tm.bias.uniform_(-1, 1)
    x = RNG.standard_normal(shape).astype(np.float32) * 3 + 1
    # one feature: xhat is 0 up to PyTorch's rounding of x - mean, which reaches the weight's gradient
    compare_module(em, tm, x, atol=1e-4 if x.shape[-1] == 1 else 1e-5)


def test_layernorm_float64_and_noncontiguous():
    tm = torch.nn.LayerNorm(6).double()
    with torch.no_grad():
        tm.weight.uniform_(0.5, 1.5)
    compare_module(ember.nn.LayerNorm(6, dtype=ember.float64), tm, RNG.standard_normal((6, 5, 4)).transpose(1, 2, 0),
                   atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"scale_grad_by_freq": True},
                                    {"padding_idx": 0, "scale_grad_by_freq": True}])
@pytest.mark.parametrize("idx", [RNG.integers(0, 9, (6, 5)), np.array([3, 3, 3, 1, 3]), np.array([4]),
                                 np.zeros((0,), np.int64), RNG.integers(0, 9, (2, 3, 4))],
                         ids=["batch", "repeats", "single", "empty", "3d"])
def test_embedding_segment_sum_against_torch(kwargs, idx):
    compare_module(ember.nn.Embedding(9, 4, **kwargs), torch.nn.Embedding(9, 4, **kwargs), idx)


@pytest.mark.parametrize("num,n", [(5000, 400), (3000, 4000), (50, 400), (3, 2000)],
                         ids=["few_repeats", "up_to_5_repeats", "one_hot_gemm", "tiny"])
def test_embedding_segment_sum_equals_add_at(num, n):
    """Both summation paths against the reference ``np.add.at``, rows in sorted order: the gather-then-add-repeats
    path (few repeats) to the bit, the one-hot GEMM (many repeats) to float rounding."""
    from ember._sparse import segment_sum as _segment_sum

    flat = RNG.integers(0, num, n)
    rows_of = RNG.standard_normal((n, 8)).astype(np.float32)
    ref = np.zeros((num, 8), np.float32)
    np.add.at(ref, flat, rows_of)
    rows, sums = _segment_sum(flat, rows_of)
    np.testing.assert_array_equal(rows, np.unique(flat))
    if num > n:
        np.testing.assert_array_equal(sums, ref[rows])
    else:
        np.testing.assert_allclose(sums, ref[rows], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sparse_dims", [1, 2])
def test_sparse_update_rows_equals_fancy_indexed_update(sparse_dims):
    """``update_rows`` (take / update / scatter of the gradient's rows) against ``p[rows] += alpha * values``."""
    from ember._sparse import SparseCOO, update_rows

    p = RNG.standard_normal((40, 6, 3)).astype(np.float32)
    flat = RNG.choice(40 * 6 if sparse_dims == 2 else 40, 17, replace=False)
    indices = np.stack(np.unravel_index(flat, (40, 6))) if sparse_dims == 2 else flat[None, :]
    values = RNG.standard_normal((17, *p.shape[sparse_dims:])).astype(np.float32)
    g = SparseCOO(indices.astype(np.int64), values, p.shape).coalesce()
    ref = p.copy()
    ref[tuple(g.indices)] += g.values * np.float32(-0.3)
    update_rows(p, g, g.values, -0.3)
    np.testing.assert_array_equal(p, ref)


# ---------------------------------------------------------------- the same bits at every thread count
# Each kernel's elementwise steps are split along rows among ember.set_num_threads(n) threads; inputs here have
# enough elements (>= 3 * policy.min_parallel_elements / 2) for three chunks at three threads.
THREADS = (1, 2, 3)

def _f(m):
    return m.nn.functional


def _mixed_rows(shape):
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    x[::7] *= 60  # rows far apart in scale: the global shift underflows the others, the per-row path runs
    x[1::11] -= 500
    return x


def _causal_scores(shape):
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32) * 3
    x[..., np.triu_indices(shape[-1], 1)[0], np.triu_indices(shape[-1], 1)[1]] = -np.inf
    return x


_TARGET = np.random.default_rng(5).integers(0, 65, 1600)
_CLASS_W = np.linspace(0.5, 2, 65, dtype=np.float32)
THREADED = {
    "gelu": (lambda m, x: _f(m).gelu(x), [(4, 100, 257)]),
    "gelu_tanh": (lambda m, x: _f(m).gelu(x, approximate="tanh"), [(4, 100, 257)]),
    "gelu_blocks": (lambda m, x: _f(m).gelu(x), [(3, 300, 350)]),  # several cache-sized blocks per thread
    "erf": (lambda m, x: m.erf(x), [(3, 300, 350)]),
    "erfc": (lambda m, x: m.erfc(x), [(3, 300, 350)]),
    "softmax": (lambda m, x: m.softmax(x, -1), [(3, 4, 97, 89)]),
    "softmax_per_row_shift": (lambda m, x: m.softmax(x, -1), [_mixed_rows((1200, 90))]),
    "log_softmax": (lambda m, x: m.log_softmax(x, -1), [(3, 4, 97, 89)]),
    "log_softmax_causal": (lambda m, x: _f(m).log_softmax(x, dim=-1), [_causal_scores((3, 4, 91, 91))]),
    "sdpa_causal": (lambda m, q, k, v: _f(m).scaled_dot_product_attention(q, k, v, is_causal=True),
                    [(2, 3, 130, 16)] * 3),
    "sdpa_float_mask": (lambda m, q, k, v, a: _f(m).scaled_dot_product_attention(q, k, v, attn_mask=a),
                        [(2, 3, 130, 16)] * 3 + [(130, 130)]),
    "layer_norm": (lambda m, x, w, b: _f(m).layer_norm(x, (211,), w, b), [(5, 100, 211), (211,), (211,)]),
    "layer_norm_plain": (lambda m, x: _f(m).layer_norm(x, (211,)), [(5, 100, 211)]),
    "rms_norm": (lambda m, x, w: _f(m).rms_norm(x, (211,), w, 1e-5), [(5, 100, 211), (211,)]),
    "silu": (lambda m, x: _f(m).silu(x), [(4, 100, 257)]),
    "linear_bias": (lambda m, x, w, b: _f(m).linear(x, w, b), [(40, 30, 97), (101, 97), (101,)]),
    # more outputs than inputs: the bias rides in the GEMM as an extra input column
    "linear_bias_column": (lambda m, x, w, b: _f(m).linear(x, w, b), [(8, 80, 48), (160, 48), (160,)]),
    "cross_entropy": (lambda m, x: _f(m).cross_entropy(x, m.tensor(_TARGET), m.tensor(_CLASS_W), ignore_index=3,
                                                        label_smoothing=0.1), [(1600, 65)]),
}


def _outputs_and_grads(fn, specs, seed=0):
    arrays = make_inputs(specs, seed=seed)
    inputs = [ember.tensor(a, requires_grad=True) for a in arrays]
    out = fn(ember, *inputs)
    g = np.random.default_rng(seed + 1).standard_normal(out.shape).astype(np.float32)
    out.backward(ember.tensor(g))
    return [out.detach().numpy()] + [t.grad.numpy() for t in inputs]


def _assert_same_bits_at_every_thread_count(run):
    results = []
    for n in THREADS:
        ember.set_num_threads(n)
        results.append([np.array(a, copy=True) for a in run()])
    for n, other in zip(THREADS[1:], results[1:]):
        for i, (a, b) in enumerate(zip(results[0], other)):
            np.testing.assert_array_equal(a, b, err_msg=f"array {i} at {n} threads differs from 1 thread")


@pytest.mark.parametrize("name", list(THREADED))
def test_threaded_kernel_same_bits_at_1_2_3_threads(name, threads, monkeypatch):
    # GEMMs in row blocks on numba's threads (``EMBER_OMP_GEMM``) give OpenBLAS's one-thread bits, which the threads
    # fixture's OpenBLAS (its count left as it started) does not give at one ember thread: compared elsewhere
    # (tests/test_omp_gemm.py), not here
    monkeypatch.setattr(policy, "omp_gemm", False)
    fn, specs = THREADED[name]
    largest = {"sdpa_causal": 2 * 3 * 130 * 130, "sdpa_float_mask": 2 * 3 * 130 * 130,  # the scores
               "linear_bias": 40 * 30 * 101, "linear_bias_column": 8 * 80 * 160}.get(name) or max(a.size for a in make_inputs(specs))
    assert largest >= 3 * policy.min_parallel_elements // 2
    # OpenBLAS at one thread throughout: ember's own splits are what must not change the bits (a Linear's gradient
    # GEMMs side by side, each on one of ember's threads with OpenBLAS held to one, against one GEMM that the
    # fixture's OpenBLAS would thread itself at one ember thread: OpenBLAS's own split of a GEMM over its threads
    # gives other bits on some CPUs, e.g. a 101 x 1200 by 1200 x 97 product on a Zen 4 with its SkylakeX kernels)
    from ember._kernels import openblas

    blas = openblas.functions()
    before = blas[1]() if blas else None
    if blas:
        blas[0](1)
    try:
        _assert_same_bits_at_every_thread_count(lambda: _outputs_and_grads(fn, specs))
    finally:
        if blas:
            blas[0](before)


@pytest.mark.parametrize("name", list(THREADED))
def test_threaded_kernel_against_torch(name, threads):
    ember.set_num_threads(3)
    fn, specs = THREADED[name]
    # linear: the weight gradient sums 1200 products of size ~1 in float32 GEMMs (each library its own order)
    check(fn, specs, atol=2e-4 if name == "linear_bias" else 2e-5, rtol=1e-4)


def test_threaded_attention_dropout_same_bits(threads):
    def run():
        ember.manual_seed(11)
        return _outputs_and_grads(lambda m, q, k, v: _f(m).scaled_dot_product_attention(q, k, v, dropout_p=0.2),
                                  [(2, 3, 130, 16)] * 3)
    _assert_same_bits_at_every_thread_count(run)


OPTIMIZERS = [("Adam", {"weight_decay": 0.1, "amsgrad": True}), ("Adam", {"maximize": True, "weight_decay": 0.05}),
              ("AdamW", {}), ("AdamW", {"foreach": False}), ("SGD", {"lr": 0.1}),
              ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
              ("SGD", {"lr": 0.1, "momentum": 0.8, "dampening": 0.3, "maximize": True, "foreach": False})]


def _optimizer_steps(m, name, kwargs, steps=3):
    """Parameters (a 900x311 matrix: more than one cache-sized block, and a vector) after ``steps`` steps on fixed
    random gradients."""
    rng = np.random.default_rng(8)
    params = [m.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True) for s in ((900, 311), (311,))]
    opt = getattr(m.optim, name)(params, **kwargs)
    for _ in range(steps):
        for p in params:
            p.grad = m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32))
        opt.step()
    return [p.detach().numpy().copy() for p in params]


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS)
def test_threaded_optimizer_same_bits_and_matches_torch(name, kwargs, threads):
    _assert_same_bits_at_every_thread_count(lambda: _optimizer_steps(ember, name, kwargs))
    for e, t in zip(_optimizer_steps(ember, name, kwargs), _optimizer_steps(torch, name, kwargs)):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- erf / erfc
def _ulps(actual, expected):
    """|actual - expected| in units of expected's float32 spacing (both finite)."""
    return np.abs(actual.astype(np.float64) - expected) / np.spacing(np.abs(expected))


ERF_SWEEP = np.concatenate([np.linspace(-12, 12, 1_200_001, dtype=np.float32),
                            np.float32([1e-45, -1e-40, 1e-30, 1e-8, 0.99999994, 1.0, 1.0000001, 3.9, 9.19, 10.05, 26]),
                            np.float32([0.0, -0.0, np.inf, -np.inf, np.nan])])


@pytest.mark.parametrize("fn,max_ulps", [("erf", 1), ("erfc", 2)])
def test_erf_float32_dense_sweep_against_torch(fn, max_ulps):
    """The float32 kernel over a dense sweep, its tails, denormals, the switch at |x| = 1, +-0, +-inf and nan."""
    ours = getattr(ember, fn)(ember.tensor(ERF_SWEEP)).numpy()
    theirs = getattr(torch, fn)(torch.tensor(ERF_SWEEP)).numpy()
    assert ours.dtype == np.float32
    finite = np.isfinite(theirs)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_array_equal(ours[~finite & ~np.isnan(theirs)], theirs[~finite & ~np.isnan(theirs)])
    assert _ulps(ours[finite], theirs[finite]).max() <= max_ulps
    zeros = ERF_SWEEP == 0
    np.testing.assert_array_equal(np.signbit(ours[zeros]), np.signbit(theirs[zeros]))  # erf(-0.0) = -0.0


@pytest.mark.parametrize("fn", ["erf", "erfc"])
def test_erf_float64_keeps_float64_accuracy(fn):
    x = np.concatenate([np.linspace(-7, 7, 20001), [1e-300, -1e-12, 0.5, 27.0]])
    ours = getattr(ember, fn)(ember.tensor(x)).numpy()
    theirs = getattr(torch, fn)(torch.tensor(x)).numpy()
    assert ours.dtype == np.float64
    np.testing.assert_allclose(ours, theirs, rtol=4e-16, atol=0)


@pytest.mark.parametrize("fn", ["erf", "erfc"])
@pytest.mark.parametrize("x", [GPT_ACT, EXTREMES.astype(np.float32), np.float32(0.3), np.zeros((0, 2), np.float32),
                               EXTREMES.astype(np.float16)], ids=["gpt", "extremes", "0d", "empty", "half"])
def test_erf_values_and_gradients_against_torch(fn, x):
    check(lambda m, a: getattr(m, fn)(a), [np.asarray(x)], atol=1e-3 if x.dtype == np.float16 else 1e-7, rtol=1e-6,
          grad=x.dtype != np.float16)

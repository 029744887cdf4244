"""The compiled row kernels (ember/_kernels/softmax.py, norm.py's RMSNorm, rows.py) against
the NumPy reference kernels and PyTorch: values and gradients, non-finite entries, causal attention by length."""

import math

import numpy as np
import pytest
import torch
from test_kernels import both_ways, compiled_only

import ember

pytestmark = compiled_only


def _grads(fw, fn, arrays, g_seed=1, need=None):
    """fn's output and every input's gradient under a fixed random output gradient."""
    need = need or [True] * len(arrays)
    ts = [fw.tensor(a, requires_grad=n) for a, n in zip(arrays, need)]
    out = fn(fw, *ts)
    g = np.random.default_rng(g_seed).standard_normal(tuple(out.shape)).astype(np.float32)
    out.backward(fw.tensor(g))
    return [out.detach().numpy()] + [t.grad.numpy() for t, n in zip(ts, need) if n]


def _assert_all_close(fast, ref, expected, rtol, atol):
    for a, r, e in zip(fast, ref, expected):
        np.testing.assert_allclose(a, r, rtol=rtol, atol=atol, equal_nan=True)
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)


def _rows_of_every_kind() -> np.ndarray:
    """(300, 67) float32 rows of very different scale, a row of -inf, a row with +inf, one with NaN, and -inf
    entries in a finite row."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((300, 67)) * 3).astype(np.float32)
    x[::9] *= 40
    x[1::13] -= 300
    x[5] = -np.inf
    x[6, 3], x[7, 10], x[8, :60] = np.inf, np.nan, -np.inf
    return x


def test_softmax_rows_compiled_matches_numpy_and_torch():
    """Rows of very different scale (the global shift's redo path), a row of -inf (NaN, as PyTorch), inf and NaN
    entries; forward and gradient."""
    x = _rows_of_every_kind()

    def run(fw=ember):
        return _grads(fw, lambda m, a: m.softmax(a, -1), [x])

    fast, ref = both_ways(run)
    _assert_all_close(fast, ref, run(torch), rtol=1e-5, atol=1e-6)
    assert np.isnan(fast[0][5]).all() and np.isnan(fast[0][6]).all() and np.isnan(fast[0][7]).all()


def test_softmax_shifts_each_row_by_its_own_max_as_torch():
    """A dominant logit's probability is exactly PyTorch's (1.0 where its is): the compiled kernel shifts each row by
    its own max, so that entry is exp(0) = 1 over a sum that rounds to 1. A shift by the whole array's max (another
    row's, 20 above) left it 0.99999994 in ~3 % of the rows (Whisper's timestamp probabilities drifted so)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4000, 50)).astype(np.float32)
    x[np.arange(4000), rng.integers(0, 50, 4000)] += 25
    x += rng.uniform(-20, 20, (4000, 1)).astype(np.float32)
    e, t = ember.softmax(ember.tensor(x), -1).numpy(), torch.softmax(torch.tensor(x), -1).numpy()
    np.testing.assert_array_equal(e.max(1), t.max(1))
    np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-12)


def test_log_softmax_rows_compiled_matches_numpy_and_torch():
    """The compiled log-softmax (rows of 16 entries or more): rows of very different scale, a row of -inf, a +inf
    entry and a NaN entry (NaN rows, as PyTorch's), -inf entries in a finite row; forward and gradient."""
    x = _rows_of_every_kind()

    def run(fw=ember):
        return _grads(fw, lambda m, a: m.log_softmax(a, -1), [x])

    fast, ref = both_ways(run)
    _assert_all_close(fast, ref, run(torch), rtol=1e-5, atol=1e-5)
    assert np.isnan(fast[0][5:8]).all() and np.isneginf(fast[0][8, :60]).all()


@pytest.mark.parametrize("width", [16, 17, 65, 1000, 8192])
def test_log_softmax_shifts_each_row_by_its_own_max_as_torch(width):
    """PyTorch's log-softmax is (x - max_row) - log(sum(exp(x - max_row))), summed in float32 in 16 lanes on
    AVX-512: the compiled kernel computes it so, and gives PyTorch's bits for nearly every entry there (the
    reference, shifted by the whole array's max, lost bits on rows far below it: 72-88 % of the entries equal).
    Elsewhere its values within float32 rounding, and never fewer equal bits than the reference."""
    rng = np.random.default_rng(width)
    rows = max(8, 100_000 // width)
    x = (rng.standard_normal((rows, width)) * 3).astype(np.float32)
    x[::7] += 40  # rows far above the others
    expected = torch.log_softmax(torch.tensor(x), -1).numpy()
    fast, ref = both_ways(lambda: ember.log_softmax(ember.tensor(x), -1).numpy())
    np.testing.assert_allclose(fast, expected, rtol=0, atol=4e-6)
    same, same_ref = (fast == expected).mean(), (ref == expected).mean()
    assert same >= same_ref
    if torch.backends.cpu.get_cpu_capability() == "AVX512":
        assert same >= 0.95


@pytest.mark.parametrize("shape_q, shape_k", [((2, 3, 37, 24), (2, 3, 37, 24)), ((2, 2, 20, 16), (2, 2, 45, 16)),
                                              ((1, 2, 50, 8), (1, 2, 17, 8)), ((3, 64, 32), (3, 64, 32))])
def test_causal_attention_by_length_matches_numpy_and_torch(shape_q, shape_k):
    """The compiled softmax keeps keys j <= i of each query block instead of adding a -inf mask: queries and keys
    of other lengths (top-left aligned, as PyTorch; L > S leaves no row empty), every gradient."""
    rng = np.random.default_rng(1)
    q = rng.standard_normal(shape_q).astype(np.float32)
    k, v = (rng.standard_normal(shape_k).astype(np.float32) for _ in range(2))

    def run(fw=ember):
        return _grads(fw, lambda m, a, b, c: m.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True),
                      [q, k, v])

    fast, ref = both_ways(run)
    _assert_all_close(fast, ref, run(torch), rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("causal, scale", [(True, 0.3), (True, 2.5), (False, 0.3), (False, -0.7)])
def test_attention_scale_folded_into_the_softmax(causal, scale):
    """Without a mask the compiled softmax scales the raw scores (a positive scale; a negative one scales the
    queries first, as the reference): PyTorch's values and gradients. (Not causal with a negative scale: PyTorch's
    CPU kernel then gives NaN rows, its masked -inf times the scale.)"""
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, 3, 40, 16)).astype(np.float32) for _ in range(3))

    def run(fw=ember):
        return _grads(fw, lambda m, a, b, c: m.nn.functional.scaled_dot_product_attention(
            a, b, c, is_causal=causal, scale=scale), [q, k, v])

    fast, ref = both_ways(run)
    _assert_all_close(fast, ref, run(torch), rtol=1e-4, atol=2e-5)


def test_causal_attention_double_backward_with_some_inputs_recorded():
    """create_graph through attention when only the keys require a gradient: its rerun sees plain queries and
    recorded keys, and must not take the compiled softmax (nor fold the scale into it). Against PyTorch's math
    formula in float64 (its fused CPU kernel has no double backward)."""
    rng = np.random.default_rng(9)
    q, k, v = (rng.standard_normal((2, 2, 20, 8)).astype(np.float32) for _ in range(3))

    def run(fw, dtype, attention):
        qt, vt = fw.tensor(q.astype(dtype)), fw.tensor(v.astype(dtype))
        kt = fw.tensor(k.astype(dtype), requires_grad=True)
        y = attention(fw, qt, kt, vt)
        (g,) = fw.autograd.grad((y * y).sum(), kt, create_graph=True)
        (h,) = fw.autograd.grad((g * g).sum(), kt)
        return [y.detach().numpy(), g.detach().numpy(), h.numpy()]

    def sdpa(fw, a, b, c):
        return fw.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True)

    def math_form(fw, a, b, c):
        mask = torch.triu(torch.full((20, 20), -torch.inf, dtype=torch.float64), 1)
        return torch.softmax(a @ b.transpose(-1, -2) / math.sqrt(8) + mask, -1) @ c

    fast, ref = both_ways(lambda: run(ember, np.float32, sdpa))
    _assert_all_close(fast, ref, run(torch, np.float64, math_form), rtol=1e-4, atol=1e-4)


def test_attention_rows_all_masked_give_zeros():
    """A boolean mask that hides every key of some queries: those rows' probabilities are zeros in the compiled
    kernel as in the reference (PyTorch's scaled_dot_product_attention gives zeros for them too)."""
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 6, 8)).astype(np.float32) for _ in range(3))
    mask = np.ones((6, 6), bool)
    mask[2] = False

    def run(fw=ember):
        return _grads(fw, lambda m, a, b, c: m.nn.functional.scaled_dot_product_attention(
            a, b, c, attn_mask=m.tensor(mask)), [q, k, v])

    fast, ref = both_ways(run)
    _assert_all_close(fast, ref, run(torch), rtol=1e-5, atol=1e-6)
    assert (fast[0][:, 2] == 0).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weight", [True, False])
@pytest.mark.parametrize("shape, norm", [((64, 37), (37,)), ((4, 9, 24), (9, 24)), ((3, 5), (5,))])
def test_rms_norm_compiled_matches_numpy_and_torch(dtype, weight, shape, norm):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    arrays = [x] + ([rng.standard_normal(norm).astype(dtype)] if weight else [])

    def run(fw=ember):
        ts = [fw.tensor(a, requires_grad=True) for a in arrays]
        y = fw.nn.functional.rms_norm(ts[0], norm, ts[1] if weight else None, 1e-5)
        y.backward(fw.tensor(np.random.default_rng(4).standard_normal(shape).astype(dtype)))
        return [y.detach().numpy()] + [t.grad.numpy() for t in ts]

    fast, ref = both_ways(run)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-10}
    _assert_all_close(fast, ref, run(torch), **tol)


@pytest.mark.parametrize("module", ["LayerNorm", "RMSNorm"])
def test_norms_without_gradients_give_the_same_values(module):
    """Under no_grad the compiled norms keep no xhat (one row of scratch): the same bits as with a gradient."""
    x = np.random.default_rng(5).standard_normal((300, 128)).astype(np.float32)
    layer = getattr(ember.nn, module)(128)
    with ember.no_grad():
        layer.weight.copy_(ember.tensor(np.linspace(0.5, 2, 128, dtype=np.float32)))
        plain = layer(ember.tensor(x)).numpy()
    recorded = layer(ember.tensor(x, requires_grad=True)).detach().numpy()
    np.testing.assert_array_equal(plain, recorded)


def test_reduction_row_sums_in_float64():
    """``kernel.reduction`` (reassociated lanes) sums a row to float64 rounding, whatever the row's length."""
    from ember._kernels.rows import row_dot, row_sum

    rng = np.random.default_rng(7)
    for n in (1, 7, 16, 33, 128, 1000):
        a = rng.standard_normal((3, n)).astype(np.float32)
        b = rng.standard_normal((2, n)).astype(np.float32)
        assert row_sum(a, 2, n) == pytest.approx(math.fsum(a[2].astype(np.float64)), rel=1e-12, abs=1e-12)
        exact = math.fsum(a[1].astype(np.float64) * b[0].astype(np.float64))
        assert row_dot(a, 1, b, 0, n) == pytest.approx(exact, rel=1e-12, abs=1e-12)
        assert row_sum(a, 0, n - 1) == pytest.approx(math.fsum(a[0, :n - 1].astype(np.float64)), abs=1e-12)

"""The kernel layer (ember/_kernels): one policy decides which kernel runs, numba loads on the first compiled
kernel (never at import), and the compiled kernels agree with the NumPy reference kernels."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

import ember
from ember._kernels import KernelPolicy, policy
from ember.nn._ops import conv, resample, winograd


def _run(code: str, **env) -> str:
    base = {k: v for k, v in os.environ.items() if k != "EMBER_KERNELS"}
    out = subprocess.run([sys.executable, "-c", code], env={**base, "PYTHONPATH": ROOT, **env}, capture_output=True,
                         text=True, timeout=120, check=True)
    return out.stdout.strip()


def test_import_ember_does_not_import_numba():
    assert _run("import sys, ember, ember.nn, ember.optim; print('numba' in sys.modules)") == "False"


@pytest.mark.parametrize("value, expected", [("", "True"), ("numpy", "False"), ("NumPy", "False"), ("numba", "True")])
def test_ember_kernels_env_sets_the_policy(value, expected):
    assert _run("from ember._kernels import policy; print(policy.compiled)", EMBER_KERNELS=value) == expected


def test_override_sets_and_restores_fields():
    before = (policy.winograd, policy.min_parallel_elements)
    with policy.override(winograd=False, min_parallel_elements=7) as p:
        assert p is policy and (policy.winograd, policy.min_parallel_elements) == (False, 7)
    assert (policy.winograd, policy.min_parallel_elements) == before
    with pytest.raises(RuntimeError), policy.override(winograd=False):
        raise RuntimeError  # restored on an exception too
    assert policy.winograd == before[0]
    with pytest.raises(TypeError, match="no field"), policy.override(winograd_threshold=3):
        pass


def test_defaults_are_the_shipped_settings():
    fresh = KernelPolicy(compiled=policy.compiled)
    assert fresh == policy  # no test (or conftest) left a lowered threshold behind
    assert (fresh.min_parallel_elements, fresh.min_elementwise_elements) == (1 << 16, 1 << 19)


@pytest.mark.parametrize("module", [conv, winograd, resample])
def test_no_module_level_switches_in_the_ops(module):
    """Paths are chosen by the policy, not by module globals a test flips."""
    switches = [n for n, v in vars(module).items() if n.isupper() or (n.startswith("_") and n[1:].isupper())
                if isinstance(v, (bool, int)) and not isinstance(v, type)]
    assert not switches


# ---------------------------------------------------------------------------------------------- compiled kernels
compiled_only = pytest.mark.skipif(not policy.use_compiled(), reason="numba is not installed (or EMBER_KERNELS=numpy)")


def both_ways(fn):
    """fn() under the compiled kernels and under the NumPy reference kernels."""
    with policy.override(compiled=True):
        fast = fn()
    with policy.override(compiled=False):
        ref = fn()
    return fast, ref


def assert_same_bits(fast, ref):
    for a, r in zip(fast, ref):
        assert a.dtype == r.dtype and a.shape == r.shape
        np.testing.assert_array_equal(a, r)


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("c, o, hw, n", [(16, 16, 8, 32), (8, 24, 7, 33), (20, 12, (9, 14), 40), (64, 64, 6, 32)])
def test_winograd_transforms_same_bits_as_numpy(dtype, c, o, hw, n):
    """Forward and weight gradient (input, output and gradient transforms) of a band-split Winograd convolution."""
    h, w = hw if isinstance(hw, tuple) else (hw, hw)
    rng = np.random.default_rng(3)
    xb = rng.standard_normal((c, h + 2, w + 2, n)).astype(dtype)
    wt = rng.standard_normal((o, c, 3, 3)).astype(dtype)
    g = rng.standard_normal((o, h, w, n)).astype(dtype)
    xb[0, 1, 1, 0], g[0, 0, 0, 1] = np.inf, np.nan  # non-finite values travel the same way

    def run():
        with policy.override(winograd_band_elements=1 << 12), np.errstate(all="ignore"):  # several bands
            out, tiles = winograd.conv3x3(xb, wt, keep_tiles=True)
            return out, winograd.weight_grad3x3(tiles, g)

    assert_same_bits(*both_ways(run))


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lookups, vocab", [(1000, 50), (5000, 100000), (64, 3)])
def test_embedding_scatter_add_same_bits_as_segment_sums(dtype, lookups, vocab):
    rng = np.random.default_rng(1)
    idx = rng.integers(0, vocab, (lookups // 8, 8))
    g = rng.standard_normal((*idx.shape, 16)).astype(dtype)

    def run():
        w = ember.zeros(vocab, 16, dtype=getattr(ember, np.dtype(dtype).name), requires_grad=True)
        ember.nn.functional.embedding(ember.tensor(idx), w).backward(ember.tensor(g))
        return (w.grad.numpy(),)

    assert_same_bits(*both_ways(run))


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                    {"kernel_size": (2, 3), "stride": (1, 2), "dilation": (2, 1)}])
def test_max_pool2d_batch_last_same_as_numpy(dtype, kwargs):
    """Forward (values, the first maximum's index, NaN windows) the same bits; the gradient the same values where
    windows do not overlap, to rounding where they do (contributions added in another order)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 6, 10, 9)).astype(dtype)
    x[0, 0, 0, :2] = 1.5  # a tie
    x[1, 2, 4, 4] = np.nan
    xb = np.ascontiguousarray(x.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)  # batch-last, as after a conv
    g = None

    def run():
        nonlocal g
        t = ember.tensor(xb, requires_grad=True)
        out, idx = ember.nn.functional.max_pool2d(t, return_indices=True, **kwargs)
        if g is None:
            g = rng.standard_normal(tuple(out.shape)).astype(dtype)
        out.backward(ember.tensor(g))
        return out.detach().numpy(), idx.numpy(), t.grad.numpy()

    fast, ref = both_ways(run)
    assert_same_bits(fast[:2], ref[:2])
    overlap = kwargs.get("stride", kwargs["kernel_size"]) != kwargs["kernel_size"] or "dilation" in kwargs
    np.testing.assert_allclose(fast[2], ref[2], rtol=1e-6 if overlap else 0, atol=1e-6 if overlap else 0)


@compiled_only
@pytest.mark.parametrize("need_grad", [True, False])
def test_gelu_compiled_matches_numpy_and_torch(need_grad):
    """The one-pass GELU (float32, its exp written as a polynomial) against the NumPy reference and PyTorch in
    float64: values and derivative within 5e-7 absolutely over a range with both tails; inf, NaN and zeros."""
    import torch

    rng = np.random.default_rng(4)
    x = np.concatenate([rng.standard_normal(300_000) * 4, [np.inf, -np.inf, np.nan, 0.0, -0.0, -13.5, 9.5, -90]])
    x = x.astype(np.float32)

    def run():
        t = ember.tensor(x, requires_grad=need_grad)
        y = ember.nn.functional.gelu(t)
        if not need_grad:
            return (y.numpy(),)
        y.backward(ember.ones_like(y))
        return y.detach().numpy(), t.grad.numpy()

    fast, ref = both_ways(run)
    tx = torch.tensor(x.astype(np.float64), requires_grad=True)
    ty = torch.nn.functional.gelu(tx)
    ty.backward(torch.ones_like(ty))
    expected = (ty.detach().numpy(), tx.grad.numpy())
    for a, r, e in zip(fast, ref, expected):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(r))
        np.testing.assert_allclose(a, r, rtol=0, atol=5e-7)
        finite = np.isfinite(e)
        np.testing.assert_allclose(a[finite], e[finite], rtol=1e-6, atol=5e-7)


@compiled_only
@pytest.mark.parametrize("name, kwargs", [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1}),
                                          ("Adam", {"lr": 1e-3}), ("Adagrad", {"lr": 0.1}), ("Adadelta", {})])
def test_optimizer_updates_same_bits_as_numpy(name, kwargs):
    """Three steps of each optimizer on float32 parameters (one large enough to be split into blocks)."""
    rng = np.random.default_rng(5)
    values = [rng.standard_normal((700, 600)).astype(np.float32), rng.standard_normal(17).astype(np.float32)]
    grads = [[rng.standard_normal(v.shape).astype(np.float32) for v in values] for _ in range(3)]

    def run():
        params = [ember.tensor(v.copy(), requires_grad=True) for v in values]
        opt = getattr(ember.optim, name)(params, **kwargs)
        for step in grads:
            for p, g in zip(params, step):
                p.grad = ember.tensor(g)
            opt.step()
        return [p.detach().numpy() for p in params]

    assert_same_bits(*both_ways(run))


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [(True, True), (True, False), (False, False)])
@pytest.mark.parametrize("shape, norm", [((64, 37), (37,)), ((4, 9, 24), (9, 24)), ((3, 5), (5,))])
def test_layer_norm_compiled_matches_numpy_and_torch(dtype, affine, shape, norm):
    """Values and every gradient: the compiled rows (float64 sums) against the reference and PyTorch."""
    import torch

    rng = np.random.default_rng(6)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    w, b = (rng.standard_normal(norm).astype(dtype) if on else None for on in affine)

    def run(fw=ember):
        ts = [None if a is None else fw.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = fw.nn.functional.layer_norm(ts[0], norm, ts[1], ts[2])
        y.backward(fw.tensor(g))
        return [y.detach().numpy()] + [t.grad.numpy() for t in ts if t is not None]

    fast, ref = both_ways(run)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-10}
    for a, r, t in zip(fast, ref, run(torch)):
        np.testing.assert_allclose(a, r, **tol)
        np.testing.assert_allclose(a, t, **tol)

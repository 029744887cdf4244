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
@pytest.mark.parametrize("o, c", [(16, 16), (24, 8), (3, 5)])
def test_winograd_filter_transforms_same_bits_as_numpy(dtype, o, c):
    """G w G^T and G^T dU G (float64 inside, rounded once): the compiled passes give the reference's bits, for
    non-finite values, values whose float64 sums round, and a weight given as a non-contiguous view."""
    rng = np.random.default_rng(8)
    w = (rng.standard_normal((c, o, 3, 3)) * 10.0 ** rng.integers(-30, 30, (c, o, 3, 3))).astype(dtype)
    w = w.swapaxes(0, 1)  # (O, C, 3, 3), not contiguous
    du = (rng.standard_normal((16, o, c)) * 10.0 ** rng.integers(-30, 30, (16, o, c))).astype(dtype)
    w[0, 0, 1, 1], du[5, 0, 0], du[6, 1, 0] = np.nan, np.inf, -np.inf

    def run():
        with np.errstate(all="ignore"):
            return winograd._weight_tiles(w), winograd._weight_grad_untiles(du)

    fast, ref = both_ways(run)
    assert_same_bits(fast, ref)
    assert fast[0].shape == (16, o, c) and fast[1].shape == (o, c, 3, 3)


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("c, o, hw, n, pads", [(16, 16, 8, 32, 1), (8, 24, 7, 3, 1), (5, 3, (9, 14), 2, 0),
                                               (3, 5, (6, 3), 4, 2)])
def test_winograd_nchw_transforms_same_bits_as_numpy(dtype, c, o, hw, n, pads):
    """The (N, C, H, W) transforms against the NumPy reference transforms on the batch-last copies, tile for tile:
    input (padding 0-2, zero-extended odd sizes), output (bias added, odd sizes cropped), gradient."""
    from ember._kernels import winograd as kernels
    from ember.nn._ops.conv_layout import batch_last_padded, to_batch_last

    h, w = hw if isinstance(hw, tuple) else (hw, hw)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    x[0, 1, 1, 0] = np.inf  # non-finite values travel the same way
    ho, wo = h + 2 * pads - 2, w + 2 * pads - 2
    th, tw = (ho + 1) // 2, (wo + 1) // 2
    m = rng.standard_normal((4, 4, o, n, th, tw)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    g = rng.standard_normal((n, o, ho, wo)).astype(dtype)

    v = np.empty((4, 4, c, n - 1, th, tw), dtype)  # samples 1.. (a band that does not start at 0)
    kernels.input_tiles_nchw(x, pads, pads, 1, v)
    out = np.empty((n + 1, o, ho, wo), dtype)
    kernels.output_tiles_nchw(m, b, 1, out)
    plain = np.empty((n, o, ho, wo), dtype)
    kernels.output_tiles_nchw(m, np.empty(0, dtype), 0, plain)  # no bias
    dm = np.empty((4, 4, o, n, th, tw), dtype)
    kernels.grad_tiles_nchw(g, 0, dm)
    with policy.override(compiled=False), np.errstate(all="ignore"):
        xb = winograd._even(batch_last_padded(x, ((pads, pads),) * 2), th, tw, 2)
        ref_v = winograd._input_tiles(xb, 0, th, tw)[..., 1:].transpose(0, 1, 2, 5, 3, 4)
        ob = np.empty((o, th, 2, tw, 2, n), dtype)
        winograd._output_tiles(np.ascontiguousarray(m.transpose(0, 1, 2, 4, 5, 3)), 0, ob)
        ref_plain = ob.reshape(o, 2 * th, 2 * tw, n)[:, :ho, :wo].transpose(3, 0, 1, 2)
        ref_out = ref_plain + b[:, None, None]
        g6 = winograd._even(to_batch_last(g), th, tw, 0).reshape(o, th, 2, tw, 2, n)
        ref_dm = winograd._grad_tiles(g6, 0, th).transpose(0, 1, 2, 5, 3, 4)
    assert_same_bits([v, out[1:], plain, dm], [ref_v, ref_out, ref_plain, ref_dm])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_winograd_nchw_path_matches_batch_last_path(dtype):
    """The whole (N, C, H, W) path (sample bands) against the batch-last one between layout copies: the tile GEMMs
    run on other column blocks and the weight gradient sums the tiles in another order, so to rounding."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((6, 12, 9, 14)).astype(dtype)
    wt, b = rng.standard_normal((10, 12, 3, 3)).astype(dtype), rng.standard_normal(10).astype(dtype)
    g = rng.standard_normal((6, 10, 9, 14)).astype(dtype)

    def run(direct):
        with policy.override(winograd_band_elements=1 << 12, winograd_nchw_min_tiles=1 if direct else 1 << 20):
            out, tiles = winograd.conv3x3_nchw(x, wt, ((1, 1), (1, 1)), b, keep_tiles=True)
            assert isinstance(tiles, winograd.SampleTiles) == (direct and policy.use_compiled()) and len(tiles) > 1
            return out, winograd.weight_grad3x3_nchw(tiles, g)

    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)
    fast, ref = run(True), run(False)
    assert fast[0].flags.c_contiguous
    for a, r in zip(fast, ref):
        np.testing.assert_allclose(a, r, **tol)


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "batch_last", "broadcast_grad"])
def test_relu_gradient_same_bits_as_numpy(dtype, layout, threads):
    """ReLU's one-pass gradient against the mask-then-multiply reference, at 1 and 2 threads (above the compiled
    threading size): NaN and infinite gradients, NaN, +-0 and +-inf outputs; a gradient that is not one array's
    flat memory (a broadcast) takes the reference whole."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((8, 16, 24, 24)).astype(dtype)  # 73 728 elements
    x.flat[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0]
    g = rng.standard_normal(x.shape).astype(dtype)
    g.flat[6:9] = [np.nan, np.inf, -np.inf]
    if layout == "batch_last":
        x = np.ascontiguousarray(x.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)

    def run():
        out = []
        for n in (1, 2):
            ember.set_num_threads(n)
            xt = ember.tensor(x, requires_grad=True)
            y = ember.relu(xt)
            if layout == "broadcast_grad":
                y.sum().backward()
            else:
                y.backward(ember.tensor(g))
            out.append(xt.grad.numpy())
        return out

    fast, ref = both_ways(run)
    assert_same_bits(fast, ref)
    assert_same_bits(fast[1:], fast[:1])


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lookups, vocab", [(1000, 50), (5000, 100000), (64, 3)])
def test_embedding_scatter_add_same_bits_as_segment_sums(dtype, lookups, vocab):
    """The compiled scatter-add sums each row's gradients in lookup order, as the reference does. A small
    vocabulary's reference sums through a one-hot GEMM, whose order is BLAS's (CPU-dependent): those cases use
    quarter-integer gradients, whose sums are exact in any order."""
    rng = np.random.default_rng(1)
    idx = rng.integers(0, vocab, (lookups // 8, 8))
    g = rng.standard_normal((*idx.shape, 16)).astype(dtype)
    if 2 * vocab <= lookups:
        g = np.round(g * 4) / 4

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
    def batch_last(a):  # as after a conv
        return np.ascontiguousarray(a.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)

    _max_pool_both_ways(_pool_input((8, 6, 10, 9), dtype, 2), kwargs, batch_last)


def _pool_input(shape, dtype, seed: int):
    """A max pooling input with a tie and a NaN."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    x[0, 0, 0, :2] = 1.5
    x[1, 2, 4, 4] = np.nan
    return x


def _max_pool_both_ways(x, kwargs, layout):
    """max_pool2d of x, and its gradient, with both in ``layout`` (a function of an (N, C, H, W) array), under the
    compiled and the reference kernels: forward (values, first-maximum indices, NaN windows) the same bits, the
    gradient the same values where windows do not overlap, to rounding where they do. The output gradient used."""
    rng = np.random.default_rng(5)
    g = None

    def run():
        nonlocal g
        t = ember.tensor(layout(x), requires_grad=True)
        out, idx = ember.nn.functional.max_pool2d(t, return_indices=True, **kwargs)
        if g is None:
            g = rng.standard_normal(tuple(out.shape)).astype(x.dtype)
        out.backward(ember.tensor(layout(g)))
        return out.detach().numpy(), idx.numpy(), t.grad.numpy()

    fast, ref = both_ways(run)
    assert_same_bits(fast[:2], ref[:2])
    overlap = kwargs.get("stride", kwargs["kernel_size"]) != kwargs["kernel_size"] or "dilation" in kwargs
    np.testing.assert_allclose(fast[2], ref[2], rtol=1e-6 if overlap else 0, atol=1e-6 if overlap else 0)
    return fast, g


def _conv_kernels_same_bits(monkeypatch, names, fn, dtype, shape, wshape, kwargs):
    """fn(x, w, **kwargs) forward and backward with the compiled kernels ``names`` of ``im2col`` (each must run)
    and with NumPy's passes: the same bits for the output and every gradient."""
    from ember._kernels import im2col

    calls = []
    for name in names:
        kernel_fn = getattr(im2col, name)
        monkeypatch.setattr(im2col, name, lambda *a, _fn=kernel_fn, _name=name: calls.append(_name) or _fn(*a))
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal(shape).astype(dtype), rng.standard_normal(wshape).astype(dtype)
    g = rng.standard_normal(fn(ember.tensor(x), ember.tensor(w), **kwargs).shape).astype(dtype)

    def run():
        t, wt = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
        out = fn(t, wt, **kwargs)
        out.backward(ember.tensor(g))
        return out.detach().numpy(), t.grad.numpy(), wt.grad.numpy()

    with policy.override(blas_threads=1):  # (the batch-last kernels take the row-major column matrix)
        fast, ref = both_ways(run)
    assert set(calls) == set(names)
    assert_same_bits(fast, ref)


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, wshape, kwargs", [
    ((4, 6, 6, 6), (6, 3, 4, 4), {"stride": 2, "padding": 1}),  # a DCGAN generator layer
    ((5, 6, 6, 9), (6, 2, 3, 2), {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2), "groups": 2}),
    ((3, 4, 4, 4), (4, 2, 3, 3), {"stride": 3, "padding": 2}),  # windows with gaps between them
])
def test_im2col_col2im_same_bits_as_numpy(monkeypatch, dtype, shape, wshape, kwargs):
    """The compiled batch-last col2im (the strided transposed convolution's forward) and im2col (its input and
    weight gradients): the NumPy reference's bits (col2im adds in the reference's order)."""
    monkeypatch.setattr(policy, "strided_winograd", False)  # the first one's backward would take Winograd on phases
    _conv_kernels_same_bits(monkeypatch, ("im2col2d", "col2im2d"), ember.nn.functional.conv_transpose2d, dtype,
                            shape, wshape, kwargs)


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, wshape, kwargs", [
    ((4, 3, 12, 12), (6, 3, 4, 4), {"stride": 2, "padding": 1}),  # a DCGAN / WGAN critic layer
    ((5, 4, 11, 9), (6, 2, 3, 2), {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2), "groups": 2}),
    ((3, 2, 10, 10), (4, 2, 3, 3), {"stride": 3, "padding": 2}),  # windows with gaps between them
])
def test_nchw_im2col_col2im_same_bits_as_numpy(monkeypatch, dtype, shape, wshape, kwargs):
    """The compiled (N, C, H, W) im2col (a convolution's forward) and col2im (its strided input gradient): the
    NumPy reference's bits (col2im adds in the reference's order)."""
    monkeypatch.setattr(policy, "batch_last_max_positions", 0)  # these few positions would compute batch-last
    _conv_kernels_same_bits(monkeypatch, ("im2col2d_nchw", "col2im2d_nchw"), ember.nn.functional.conv2d, dtype,
                            shape, wshape, kwargs)


def _planes_layout(x, layout: str):
    """x (N, C, H, W) C-contiguous, or the same values (C, N, H, W) in memory as vmap's per-example convolutions
    leave them, or that with rows padded in memory (a cropped gradient)."""
    if layout == "nchw":
        return x
    if layout == "cnhw":
        return np.ascontiguousarray(x.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
    big = np.zeros((x.shape[1], x.shape[0], x.shape[2], x.shape[3] + 5), x.dtype)
    big[..., :x.shape[3]] = x.transpose(1, 0, 2, 3)
    return big[..., :x.shape[3]].transpose(1, 0, 2, 3)


@compiled_only
@pytest.mark.parametrize("layout", ["nchw", "cnhw", "padded_rows"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                    {"kernel_size": (2, 3), "stride": (1, 2), "dilation": (2, 1)},
                                    {"kernel_size": 2, "stride": 1, "padding": 1},
                                    {"kernel_size": 2, "stride": (1, 3), "dilation": (2, 1), "ceil_mode": True}])
def test_max_pool2d_planes_same_as_numpy(monkeypatch, layout, dtype, kwargs):
    """Inputs whose rows are innermost in memory take the "planes" gradient kernel (its output gradient in the same
    layout), and for 2x2 windows the "planes" forward kernel: forward the reference's bits (ties, NaN windows),
    the gradient its values, to rounding where windows overlap; PyTorch's values."""
    import torch

    from ember._kernels import pooling

    calls = []
    fn, forward = pooling.max_pool2d_planes_grad, pooling.max_pool2d_planes_2x2
    monkeypatch.setattr(pooling, "max_pool2d_planes_grad", lambda *a: calls.append("grad") or fn(*a))
    monkeypatch.setattr(pooling, "max_pool2d_planes_2x2", lambda *a: calls.append("forward") or forward(*a))
    x = _pool_input((6, 5, 10, 9), dtype, 3)
    x[2, 1, 3:5, 3:5] = -2.0  # a window of four equal values: the first offset wins
    fast, g = _max_pool_both_ways(x, kwargs, lambda a: _planes_layout(a, layout))
    assert set(calls) == ({"grad", "forward"} if kwargs["kernel_size"] == 2 else {"grad"})
    tx = torch.tensor(x, requires_grad=True)
    tout = torch.nn.functional.max_pool2d(tx, **kwargs)
    tout.backward(torch.tensor(g))
    np.testing.assert_array_equal(fast[0], tout.detach().numpy())
    np.testing.assert_allclose(fast[2], tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@compiled_only
@pytest.mark.parametrize("need_grad", [True, False])
@pytest.mark.parametrize("name, extra", [("gelu", [-13.5, 9.5, -90]), ("silu", [-86, 88, -30, 1e-30])])
def test_activation_compiled_matches_numpy_and_torch(name, extra, need_grad):
    """The one-pass GELU and SiLU (float32, exp written as a polynomial) against the NumPy reference and PyTorch
    in float64: values and derivative within 5e-7 absolutely (SiLU, growing like x: 2e-6 relatively) over a range
    with both tails; inf, NaN and zeros."""
    import torch

    rng = np.random.default_rng(4)
    x = np.concatenate([rng.standard_normal(300_000) * 4, [np.inf, -np.inf, np.nan, 0.0, -0.0], extra])
    x = x.astype(np.float32)
    fn = getattr(ember.nn.functional, name)

    def run():
        t = ember.tensor(x, requires_grad=need_grad)
        y = fn(t)
        if not need_grad:
            return (y.numpy(),)
        y.backward(ember.ones_like(y))
        return y.detach().numpy(), t.grad.numpy()

    fast, ref = both_ways(run)
    tx = torch.tensor(x.astype(np.float64), requires_grad=True)
    ty = getattr(torch.nn.functional, name)(tx)
    ty.backward(torch.ones_like(ty))
    expected = (ty.detach().numpy(), tx.grad.numpy())
    rtol = 2e-6 if name == "silu" else 0
    for a, r, e in zip(fast, ref, expected):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(r))
        np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
        np.testing.assert_allclose(a, r, rtol=rtol, atol=5e-7)
        finite = np.isfinite(e)
        np.testing.assert_allclose(a[finite], e[finite], rtol=max(rtol, 1e-6), atol=5e-7)


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("slope", [0.2, 0.01, 0.0, 1.5, -0.3])
@pytest.mark.parametrize("need_grad", [True, False])
def test_leaky_relu_compiled_same_bits_as_numpy_and_torch(need_grad, slope, dtype):
    """The one-pass LeakyReLU (and its derivative) against the NumPy passes, bit for bit, and PyTorch; signed zeros,
    infinities and NaN included, slopes in (0, 1] (the NumPy path's maximum) and outside (its product)."""
    import torch

    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(70_000), [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-40]]).astype(dtype)

    def run():
        t = ember.tensor(x, requires_grad=need_grad)
        y = ember.nn.functional.leaky_relu(t, slope)
        if not need_grad:
            return (y.numpy(),)
        y.backward(ember.ones_like(y))
        return y.detach().numpy(), t.grad.numpy()

    fast, ref = both_ways(run)
    assert_same_bits(fast, ref)
    assert all((np.signbit(a) == np.signbit(r)).all() for a, r in zip(fast, ref))
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.leaky_relu(tx, slope)
    ty.backward(torch.ones_like(ty))
    for a, e in zip(fast, (ty, tx.grad)):
        np.testing.assert_array_equal(a, e.detach().numpy())
        np.testing.assert_array_equal(np.signbit(a), np.signbit(e.detach().numpy()))


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bounds", [(0, 6), (-1.0, 1.0), (0.1, 0.7)])
@pytest.mark.parametrize("form", ["functional", "inplace", "inplace_batch_last"])
def test_hardtanh_gradient_same_bits_as_numpy_and_torch(form, bounds, dtype):
    """hardtanh's (relu6's) one-pass gradient from the saved input, out of place and in place (which saves a clone
    of the input), against the NumPy reference, bit for bit, and PyTorch's: inputs at the bounds, NaN, +-inf, an
    infinite and a NaN gradient at clipped elements (0 there, as PyTorch's ``hardtanh_backward``, not 0 * inf)."""
    import torch

    lo, hi = bounds
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((8, 16, 12, 12)) * 4).astype(dtype)  # 18 432 elements
    x.flat[:8] = [np.nan, -0.0, np.inf, -np.inf, lo, hi, np.float32(0.1), np.float32(0.7)]
    g = rng.standard_normal(x.shape).astype(dtype)
    g.flat[2:4] = [np.inf, np.nan]
    if form == "inplace_batch_last":
        x = np.ascontiguousarray(x.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)

    def run():
        xt = ember.tensor(x, requires_grad=True)
        y = ember.nn.functional.hardtanh(xt * 1, lo, hi, inplace=form != "functional")
        y.backward(ember.tensor(g))
        return y.detach().numpy(), xt.grad.numpy()

    fast, ref = both_ways(run)
    assert_same_bits(fast, ref)
    assert (fast[1].flat[2:4] == 0).all()
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.hardtanh(tx * 1, lo, hi, inplace=form != "functional")
    ty.backward(torch.tensor(g))
    np.testing.assert_array_equal(fast[0], ty.detach().numpy())
    # (at x = NaN, flat[0], PyTorch's vectorised kernel answers 0 and its scalar code g: ember's is the scalar code's,
    # tests/test_nonfinite_activations.py)
    np.testing.assert_array_equal(fast[1].flat[1:], tx.grad.numpy().flat[1:])


@compiled_only
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded"])
def test_bfloat16_conversions_same_bits_as_ml_dtypes(layout):
    """float32 -> bfloat16 -> float32 by the compiled bit conversion (a cast, autocast's casts, the float32 compute
    of a bfloat16 op) against ml_dtypes' astype, bit for bit: random bit patterns (NaNs of both signs with any
    payload, infinities, subnormals), rounding ties to even, the largest finite value (which rounds to inf)."""
    import ml_dtypes

    rng = np.random.default_rng(2)
    bits = rng.integers(0, 2 ** 32, 40_000, dtype=np.uint64).astype(np.uint32)
    bits[:12] = [0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0x7F7FFFFF, 1, 0x80008000,
                 0x00018000, 0x3F808000, 0x3F818000]
    x = bits.view(np.float32).reshape(200, 200)
    if layout == "transposed":
        x = x.T
    elif layout == "expanded":
        x = np.broadcast_to(x[:1], (200, 200))

    def run():
        with np.errstate(invalid="ignore"):
            b = ember.tensor(x).to(ember.bfloat16)
            return b.view(ember.int16).numpy(), b.float().numpy().view(np.uint32)

    fast, ref = both_ways(run)
    assert_same_bits(fast, ref)
    with np.errstate(invalid="ignore"):
        expected = x.astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(fast[0], expected.view(np.int16))
    np.testing.assert_array_equal(fast[1], expected.astype(np.float32).view(np.uint32))


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


def test_a_toy_models_first_step_does_not_load_numba():
    # The first compiled kernel a process runs costs numba's import and the kernel's load (about half a second):
    # a tiny model's optimizer step, a few hundred values, must not pay it. A large parameter still compiles.
    code = (
        "import sys, ember\n"
        "m = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.Tanh(), ember.nn.Linear(16, 2))\n"
        "for opt in (ember.optim.SGD(m.parameters(), lr=0.1, momentum=0.9), ember.optim.Adam(m.parameters())):\n"
        "    m(ember.randn(4, 8)).pow(2).mean().backward(); opt.step()\n"
        "print('numba' in sys.modules)\n"
        "big = ember.zeros(1 << 15, requires_grad=True); big.grad = ember.ones(1 << 15)\n"
        "ember.optim.SGD([big], lr=0.5).step()\n"
        "print('numba' in sys.modules, float(big[0]))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    small, big = out.stdout.split("\n")[:2]
    assert small == "False"
    assert big == ("True -0.5" if policy.use_compiled() else "False -0.5")  # EMBER_KERNELS=numpy: never loaded


def test_numba_compiler_logs_stay_out_of_a_programs_debug_log():
    """A program logging at DEBUG (``logging.basicConfig(level=logging.DEBUG)``, a training log) gets its own lines,
    not numba's compiler traces; a level the program gave numba's logger itself is kept."""
    code = (
        "import logging, sys\n"
        "logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format='%(name)s %(message)s')\n"
        "from ember._kernels._jit import load_numba\n"
        "numba = load_numba()\n"
        "numba.njit(lambda x: x * 3 + 1)(2)\n"
        "logging.getLogger('train').debug('step 1')\n"
        "print(logging.getLogger('numba').level)\n"
    )
    lines = _run(code, NUMBA_DISABLE_CACHE="1").splitlines()
    assert lines == ["train step 1", str(30)], lines[:5]
    kept = _run("import logging; logging.getLogger('numba').setLevel(logging.INFO)\n"
                "from ember._kernels._jit import load_numba; load_numba()\n"
                "print(logging.getLogger('numba').level)")
    assert kept == "20"

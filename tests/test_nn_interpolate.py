"""F.interpolate (every mode, both resampling paths), nn.Upsample & co., pixel (un)shuffle against torch."""

import warnings

import numpy as np
import pytest
import torch
from nn_oracle import batch_last, compare_module
from oracle import assert_close, check

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember._kernels import policy
from ember.nn._ops import resample

DTYPES = [np.float32, np.float64]
MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1), ("nearest-exact", 2),
         ("nearest-exact", 3), ("linear", 1), ("bilinear", 2), ("trilinear", 3), ("bicubic", 2), ("area", 1),
         ("area", 2), ("area", 3)]
# (input size per spatial dim, size/scale arguments): up, down, integer and fractional factors, size 1 both
# ways, the same size (PyTorch's kernels special-case it), twice the size, recomputed scales
SIZES = [(5, {"size": 7}), (7, {"size": 3}), (4, {"scale_factor": 2}), (6, {"scale_factor": 0.5}),
         (5, {"scale_factor": 1.7}), (9, {"scale_factor": 0.3}), (1, {"size": 4}), (4, {"size": 1}),
         (3, {"scale_factor": 2.5, "recompute_scale_factor": True}), (10, {"scale_factor": 1 / 3}),
         (6, {"size": 6}), (3, {"scale_factor": 1.2}), (4, {"scale_factor": 2.0001}), (11, {"scale_factor": 2.9999}),
         (1, {"size": 1})]


def _cases():
    for mode, nd in MODES:
        for ac in ([None] if mode in ("nearest", "nearest-exact", "area") else [False, True]):
            for n, spec in SIZES:
                kw = dict(mode=mode, **spec) if ac is None else dict(mode=mode, align_corners=ac, **spec)
                yield pytest.param((2, 3) + (n,) * nd, kw, id=f"{mode}-{nd}d-{n}-{spec}-ac{ac}")


@pytest.fixture(params=["dense", "taps"])
def path(request, monkeypatch):
    """Both resampling paths: the dense matrices and the gathers (PyTorch's arithmetic, the reference)."""
    monkeypatch.setattr(policy, "dense_resample", request.param == "dense")
    return request.param


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,kw", list(_cases()))
def test_interpolate_matches_torch(shape, kw, dtype, path):
    tol = 1e-5 if dtype == np.float32 else 1e-10
    check(lambda m, x: m.nn.functional.interpolate(x, **kw), [shape], dtype=dtype, atol=tol, rtol=tol)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic", "area"])
def test_interpolate_wider_than_a_dense_axis_takes_the_taps(monkeypatch, mode):
    calls = []
    monkeypatch.setattr(resample, "_gather", lambda *a, f=resample._gather: calls.append(1) or f(*a))
    check(lambda m, x: m.nn.functional.interpolate(x, size=(3, policy.dense_resample_max_in + 20), mode=mode),
          [(1, 2, 5, policy.dense_resample_max_in + 1)])
    assert calls


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic", "area"])
def test_non_finite_values_stay_local_as_in_torch(mode):
    """A matrix product would spread 0 * inf = NaN along the line: non-finite input and gradients take the taps."""
    x = np.random.default_rng(0).standard_normal((1, 2, 6, 6)).astype(np.float32)
    x[0, 0, 2, 3], x[0, 1, 0, 0] = np.inf, np.nan
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    size = (4, 5) if mode == "area" else (12, 12)
    eo, to = F.interpolate(ex, size=size, mode=mode), torch.nn.functional.interpolate(tx, size=size, mode=mode)
    np.testing.assert_array_equal(np.isnan(eo.detach().numpy()), np.isnan(to.detach().numpy()))
    fin = np.isfinite(to.detach().numpy())
    assert_close(eo.detach().numpy()[fin], to.detach().numpy()[fin])
    g = np.ones(tuple(to.shape), np.float32)
    g[0, 0, 3, 3] = np.inf
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    np.testing.assert_array_equal(np.isinf(ex.grad.numpy()), np.isinf(tx.grad.numpy()))
    fin = np.isfinite(tx.grad.numpy())
    assert_close(ex.grad.numpy()[fin], tx.grad.numpy()[fin])


def test_interpolate_keeps_a_batch_last_layout():
    """A conv stack hands on (C, H, W, N) memory: the result keeps it, and values match."""
    x = batch_last(np.random.default_rng(0).standard_normal((4, 3, 5, 6)).astype(np.float32))
    out = F.interpolate(ember.tensor(x), scale_factor=2, mode="bilinear").numpy()
    assert out.transpose(1, 2, 3, 0).flags.c_contiguous
    assert_close(out, torch.nn.functional.interpolate(torch.tensor(x), scale_factor=2, mode="bilinear"))


def test_interpolate_empty_batch():
    assert F.interpolate(ember.randn(0, 3, 4, 4), size=3, mode="bilinear").shape == (0, 3, 3, 3)


@pytest.mark.parametrize("call,err,match", [
    (lambda F, x: F.interpolate(x, size=0), RuntimeError, r"sizes should be greater than 0.*\(H: 4, W: 4\) output"),
    (lambda F, x: F.interpolate(x, scale_factor=-1.0), RuntimeError, "greater than 0"),
    (lambda F, x: F.interpolate(x[:, :0], size=3), RuntimeError, "Non-empty 4D data tensor expected"),
    (lambda F, x: F.interpolate(x, size=3, scale_factor=2), ValueError, "only one of size or scale_factor"),
    (lambda F, x: F.interpolate(x), ValueError, "either size or scale_factor"),
    (lambda F, x: F.interpolate(x, size=(3,)), ValueError, "same number of spatial dimensions"),
    (lambda F, x: F.interpolate(x, scale_factor=(2,)), ValueError, "same number of spatial dimensions"),
    (lambda F, x: F.interpolate(x, size=(3, 3.0)), TypeError, "expected size to be one of int"),
    (lambda F, x: F.interpolate(x, size=3, mode="nearest", align_corners=True), ValueError, "align_corners option"),
    (lambda F, x: F.interpolate(x, size=3, recompute_scale_factor=True), ValueError, "not meaningful"),
    (lambda F, x: F.interpolate(x, size=3, antialias=True), ValueError, "Anti-alias option is restricted"),
    (lambda F, x: F.interpolate(x, size=3, mode="lanczos"), ValueError, "Lanczos mode requires antialias=True"),
    (lambda F, x: F.interpolate(x, size=3, mode="linear"), NotImplementedError, "Got 4D input, but linear mode"),
    (lambda F, x: F.interpolate(x, size=3, mode="trilinear"), NotImplementedError, "needs 5D input"),
    (lambda F, x: F.interpolate(x[0, 0], size=3), NotImplementedError, r"Only 3D, 4D and 5D input.*\(got 2D\)"),
    (lambda F, x: F.interpolate(x, size=3, mode="foo"), NotImplementedError, r"\(got foo\)"),
])
def test_interpolate_errors_as_torch(call, err, match):
    x = np.zeros((2, 3, 4, 4), np.float32)
    for fw in (torch, ember):
        with pytest.raises(err, match=match):
            call(fw.nn.functional, fw.tensor(x))


AA_SIZES = [((8, 9), {"size": (3, 4)}), ((5, 5), {"size": (9, 7)}), ((16, 13), {"scale_factor": 0.3}),
            ((7, 7), {"size": 7}), ((4, 6), {"size": (1, 1)}), ((1, 5), {"size": (3, 2)}),
            ((12, 13), {"scale_factor": (0.5, 0.25)}), ((10, 10), {"size": (4, 10)})]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("spatial,spec", AA_SIZES)
def test_interpolate_antialias_matches_torch(spatial, spec, mode, align_corners, dtype, path):
    """Shrinking (the stretched filter), growing and keeping a size, with every output's weights normalised."""
    tol = 1e-5 if dtype == np.float32 else 1e-10
    check(lambda m, x: m.nn.functional.interpolate(x, mode=mode, align_corners=align_corners, antialias=True, **spec),
          [(2, 3, *spatial)], dtype=dtype, atol=tol, rtol=tol)


def test_interpolate_lanczos_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="lanczos"):
        F.interpolate(ember.randn(1, 1, 8, 8), size=3, mode="lanczos", antialias=True)


def test_interpolate_integer_input_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="floating-point"):
        F.interpolate(ember.zeros(1, 1, 4, 4, dtype=ember.int64), size=3, mode="bilinear")


@pytest.mark.parametrize("name,kw", [("upsample", {"mode": "bilinear"}), ("upsample_nearest", {}),
                                     ("upsample_bilinear", {})])
def test_deprecated_upsample_functions(name, kw):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    outs = []
    for fw in (torch, ember):
        with pytest.warns(UserWarning, match="deprecated"):
            outs.append(getattr(fw.nn.functional, name)(fw.tensor(x), scale_factor=2, **kw))
    assert_close(*reversed(outs))


@pytest.mark.parametrize("ctor,shape", [
    (lambda m: m.Upsample(scale_factor=2), (2, 3, 4, 5)),
    (lambda m: m.Upsample(size=(5, 7), mode="bilinear"), (2, 3, 4, 5)),
    (lambda m: m.Upsample(scale_factor=(2, 1.5), mode="bicubic", align_corners=True), (2, 3, 4, 5)),
    (lambda m: m.Upsample(scale_factor=1.5, mode="trilinear", recompute_scale_factor=True), (1, 2, 3, 4, 5)),
    (lambda m: m.Upsample(size=9, mode="linear"), (2, 3, 4)),
    (lambda m: m.UpsamplingNearest2d(scale_factor=3), (2, 3, 4, 5)),
    (lambda m: m.UpsamplingBilinear2d(size=(7, 3)), (2, 3, 4, 5)),
    (lambda m: m.PixelShuffle(2), (2, 8, 3, 5)),
    (lambda m: m.PixelShuffle(3), (9, 2, 3)),
    (lambda m: m.PixelUnshuffle(2), (2, 3, 4, 6)),
    (lambda m: m.PixelUnshuffle(3), (2, 2, 1, 6, 3)),
])
def test_resizing_modules_match_torch(ctor, shape):
    em, tm = ctor(nn), ctor(torch.nn)
    compare_module(em, tm, np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    assert repr(em) == repr(tm)


def test_upsample_stores_scale_factor_as_float():
    assert nn.Upsample(scale_factor=2).scale_factor == 2.0 and isinstance(nn.Upsample(scale_factor=2).scale_factor, float)
    assert nn.Upsample(scale_factor=(2, 3)).scale_factor == (2.0, 3.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,r", [((1, 4, 2, 3), 2), ((3, 18, 1, 2), 3), ((2, 2, 4, 3, 5), 1), ((4, 2, 2), 2)])
def test_pixel_shuffle_and_unshuffle_match_torch(shape, r, dtype):
    check(lambda m, x: m.nn.functional.pixel_shuffle(x, r), [shape], dtype=dtype)
    unshape = (*shape[:-3], shape[-3] // (r * r), shape[-2] * r, shape[-1] * r)
    check(lambda m, x: m.nn.functional.pixel_unshuffle(x, r), [unshape], dtype=dtype)


@pytest.mark.parametrize("call,err,match", [
    (lambda F, t: F.pixel_shuffle(t(4, 4), 2), RuntimeError, "at least 3 dimensions"),
    (lambda F, t: F.pixel_shuffle(t(5, 4, 4), 2), RuntimeError, r"input.size\(-3\)=5 is not divisible by 4"),
    (lambda F, t: F.pixel_shuffle(t(4, 4, 4), 0), RuntimeError, "positive upscale_factor"),
    (lambda F, t: F.pixel_shuffle(t(4, 4, 4), 2.0), TypeError, "must be int"),
    (lambda F, t: F.pixel_unshuffle(t(2, 3, 5, 4), 2), RuntimeError, r"height to be divisible.*size\(-2\)=5"),
    (lambda F, t: F.pixel_unshuffle(t(2, 3, 4, 5), 2), RuntimeError, r"width to be divisible.*size\(-1\)=5"),
    (lambda F, t: F.pixel_unshuffle(t(3, 4, 4), -1), RuntimeError, "positive downscale_factor"),
])
def test_pixel_shuffle_errors_as_torch(call, err, match):
    for fw in (torch, ember):
        with warnings.catch_warnings(), pytest.raises(err, match=match):
            call(fw.nn.functional, fw.zeros)


@pytest.mark.parametrize("mode,size", [("bicubic", (77, 61)), ("bilinear", (64, 64)), ("area", (13, 17))])
def test_interpolate_same_bits_at_1_2_3_threads(threads, mode, size):
    """The matrix products are split over threads in blocks fixed by the shape: every thread count, the same bits."""
    x = ember.tensor(np.random.default_rng(0).standard_normal((8, 32, 40, 40)).astype(np.float32), requires_grad=True)
    g = ember.tensor(np.random.default_rng(1).standard_normal((8, 32, *size)).astype(np.float32))
    results = []
    for t in (1, 2, 3):
        ember.set_num_threads(t)
        x.grad = None
        y = F.interpolate(x, size=size, mode=mode)
        y.backward(g)
        results.append((y.detach().numpy().copy(), x.grad.numpy().copy()))
    for y, gx in results[1:]:
        np.testing.assert_array_equal(y, results[0][0])
        np.testing.assert_array_equal(gx, results[0][1])

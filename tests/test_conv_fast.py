"""The convolution's fast paths: Winograd F(2x2, 3x3) against PyTorch and pinned to the im2col reference; im2col's
per-row work split over threads; the same bits at 1, 2 and 3 threads."""

import numpy as np
import pytest
import torch
from nn_oracle import batch_last as stored_batch_last
from oracle import assert_close

import ember
from ember import _parallel
from ember._kernels import policy
from ember.nn._ops import conv, conv_layout, winograd


def _conv_grads(x, w, b, up, padding, batch_last=True):
    """ember's output and (input, weight, bias) gradients of conv2d."""
    ex = ember.tensor(stored_batch_last(x) if batch_last else x, requires_grad=True)
    ew, eb = ember.tensor(w, requires_grad=True), None if b is None else ember.tensor(b, requires_grad=True)
    eo = ember.nn.functional.conv2d(ex, ew, eb, padding=padding)
    eo.backward(ember.tensor(up))
    return [eo.detach().numpy(), ex.grad.numpy(), ew.grad.numpy()] + ([] if b is None else [eb.grad.numpy()])


def _data(shape, o, dtype, seed=0, bias=True):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    w = (rng.standard_normal((o, shape[1], 3, 3)) / 3).astype(dtype)
    return x, w, rng.standard_normal(o).astype(dtype) if bias else None, rng


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,o,padding,bias", [
    ((32, 16, 8, 8), 16, 1, False),   # a ResNet layer's shape, smaller image
    ((32, 16, 5, 7), 24, 1, True),    # odd H and W: the last tile row/column is cropped
    ((32, 20, 6, 9), 16, 0, True),    # no padding, odd output width
    ((64, 8, 4, 4), 8, 1, False),     # few channels, large batch
    ((32, 16, 3, 4), 16, 3, True),    # padding beyond the kernel's reach: the input gradient takes col2im
])
@pytest.mark.parametrize("route", ["direct", "bands", "copies"])
def test_routed_conv2d_matches_torch(monkeypatch, dtype, shape, o, padding, bias, route):
    """Shapes that take the Winograd path (asserted): output, input, weight and bias gradients equal PyTorch's,
    with the transforms reading and writing (N, C, H, W) directly (``direct``, where compiled), or over batch-last
    bands of tile rows that gather and scatter (N, C, H, W) themselves (``bands``: a contiguous input, compiled),
    or between layout copies (``copies``: a batch-last input)."""
    monkeypatch.setattr(policy, "winograd_nchw_min_tiles", 1 if route == "direct" else 1 << 20)
    calls = []
    for name in ("conv3x3_nchw", "weight_grad3x3_nchw", "grads3x3_nchw", "conv3x3", "conv3x3_rows",
                 "weight_grad3x3", "weight_grad3x3_rows", "conv3x3_bands_nchw", "conv3x3_bands_nchw_rows",
                 "weight_grad3x3_bands_nchw_rows"):
        fn = getattr(winograd, name)
        monkeypatch.setattr(winograd, name, lambda *a, _fn=fn, _name=name, **kw: calls.append(_name) or _fn(*a, **kw))
    x, w, b, rng = _data(shape, o, dtype, bias=bias)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tb = None if b is None else torch.tensor(b, requires_grad=True)
    to = torch.nn.functional.conv2d(tx, tw, tb, padding=padding)
    up = rng.standard_normal(tuple(to.shape)).astype(dtype)
    to.backward(torch.tensor(up))
    ours = _conv_grads(x, w, b, up, padding, batch_last=route == "copies")
    # forward, weight gradient, input gradient (col2im when the padding is beyond the kernel's reach, or where the
    # correlation would cover more than ``transposed_as_conv_max_ratio`` times the output's positions: the 6 x 9
    # image unpadded, 54 input positions for 28 outputs); narrow images take the batch-last transforms, in bands
    # that read and write (N, C, H, W) where compiled, at more than one thread, and the arrays contiguous (the output
    # gradient is), else
    # between one layout copy each way. The two gradients' bands run in one split over threads
    # (``grads3x3_nchw``; batch-last: ``weight_grad3x3_rows`` and ``conv3x3_rows``, or their banded forms)
    ratio = x.shape[2] * x.shape[3] / (to.shape[2] * to.shape[3])
    as_conv = padding <= 2 and ratio <= policy.transposed_as_conv_max_ratio
    compiled = policy.use_compiled()
    bands_taken = compiled and ember.get_num_threads() > 1  # (at one thread the layout copies: faster there)
    if route == "direct" and compiled:
        expected = ["conv3x3_nchw", "grads3x3_nchw" if as_conv else "weight_grad3x3_nchw"]
    else:
        bands = ["conv3x3_bands_nchw", "conv3x3_bands_nchw_rows"]
        forward = bands if route == "bands" and bands_taken else ["conv3x3", "conv3x3_rows"]
        if bands_taken and as_conv:  # the input gradient's bands read g in PyTorch's layout; so do the weight
            # gradient's where no bias gradient sums a batch-last copy of g
            backward = ["weight_grad3x3_rows" if bias else "weight_grad3x3_bands_nchw_rows", "conv3x3_bands_nchw_rows"]
        else:  # (col2im's input gradient takes the batch-last copies of g: so does the weight gradient then)
            backward = ["weight_grad3x3_rows"] + (["conv3x3_rows"] if as_conv else [])
        expected = forward + backward
    assert calls == expected
    tol = dict(atol=1e-4, rtol=1e-4) if dtype == np.float32 else dict(atol=1e-10, rtol=1e-10)
    theirs = [to, tx.grad, tw.grad] + ([] if tb is None else [tb.grad])
    for name, a, t in zip(("output", "input grad", "weight grad", "bias grad"), ours, theirs):
        assert_close(a, t, msg=name, **tol)


@pytest.mark.parametrize("shape,o,padding", [((32, 16, 6, 6), 16, 1), ((32, 16, 7, 5), 16, 0), ((64, 12, 5, 5), 8, 1)])
def test_winograd_path_equals_im2col_reference(monkeypatch, shape, o, padding):
    """The Winograd path and the im2col path (forced) agree on values and every gradient, float64."""
    x, w, b, rng = _data(shape, o, np.float64)
    hw = [n + 2 * padding - 2 for n in shape[2:]]
    up = rng.standard_normal((shape[0], o, *hw))
    fast = _conv_grads(x, w, b, up, padding)
    monkeypatch.setattr(policy, "winograd", False)
    ref = _conv_grads(x, w, b, up, padding)
    for a, r in zip(fast, ref):
        np.testing.assert_allclose(a, r, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n,c,o,h,w", [(1, 3, 2, 3, 3), (1, 2, 5, 4, 7), (2, 4, 3, 5, 6), (3, 1, 1, 9, 4)])
def test_kernels_match_torch_on_any_shape(dtype, n, c, o, h, w):
    """conv3x3 and weight_grad3x3 themselves, on shapes the router leaves to im2col (batch 1, 1 channel, odd sizes,
    the smallest 3x3 input), against PyTorch (padding 1: the padded batch-last input is built here)."""
    x, wt, _, rng = _data((n, c, h, w), o, dtype)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(wt, requires_grad=True)
    to = torch.nn.functional.conv2d(tx, tw, padding=1)
    up = rng.standard_normal(tuple(to.shape)).astype(dtype)
    to.backward(torch.tensor(up))
    xb = conv_layout.batch_last_padded(x, ((1, 1), (1, 1)))
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == np.float32 else dict(atol=1e-12, rtol=1e-12)
    out, tiles = winograd.conv3x3(xb, wt, keep_tiles=True)
    assert out.flags.c_contiguous and out.dtype == dtype
    assert_close(out.transpose(3, 0, 1, 2), to, **tol)
    gw = winograd.weight_grad3x3(tiles, np.ascontiguousarray(up.transpose(1, 2, 3, 0)))
    assert_close(gw, tw.grad, **tol)


def test_router_leaves_small_and_other_convolutions_to_im2col():
    """Winograd only where it was measured to pay: stride 1, dilation 1, 3x3, one group, float, batch and
    channels large enough."""
    f32 = np.float32

    def xb(n, c, dtype=f32):
        return np.zeros((c, 6, 6, n), dtype)

    def w(o, c, k=3, dtype=f32):
        return np.zeros((o, c, k, k), dtype)

    assert winograd.applies(xb(32, 16), w(16, 16), (1, 1), (1, 1), 1)
    assert winograd.applies(xb(64, 8), w(8, 8), (1, 1), (1, 1), 1)
    assert winograd.applies(xb(32, 16, np.float64), w(16, 16, dtype=np.float64), (1, 1), (1, 1), 1)
    assert not winograd.applies(xb(16, 16), w(16, 16), (1, 1), (1, 1), 1)  # small batch
    assert not winograd.applies(xb(32, 3), w(16, 3), (1, 1), (1, 1), 1)  # an RGB stem
    assert not winograd.applies(xb(32, 16), w(16, 16), (2, 2), (1, 1), 1)
    assert not winograd.applies(xb(32, 16), w(16, 16), (1, 1), (2, 2), 1)
    assert not winograd.applies(xb(32, 16), w(16, 8), (1, 1), (1, 1), 2)
    assert not winograd.applies(xb(32, 16), w(16, 16, 5), (1, 1), (1, 1), 1)
    assert not winograd.applies(xb(32, 16, np.float16), w(16, 16, dtype=np.float16), (1, 1), (1, 1), 1)


@pytest.mark.parametrize("c,hw,limit,direct,one_blas", [
    (16, 24, None, None, True),   # (N, C, H, W) direct: bands of samples, one per thread and more; whole tile GEMMs
    (16, 24, None, False, True),  # batch-last: 6 bands of tile rows
    (64, 8, None, None, True),    # 2 bands, whole tile GEMMs on one OpenBLAS thread (one_blas_thread)
    (64, 8, None, None, False),   # ... in blocks (64 columns forward, 16 rows for the weight grad)
    (64, 8, None, True, False),   # direct, blocks
    (96, 6, None, None, False),   # blocks that do not divide the GEMM
    (64, 8, 1 << 14, None, False),  # GEMMs too wide for blocks (a smaller OpenBLAS threading size): bands in turn
    (64, 8, 1 << 14, None, True),   # ... split over threads all the same, each GEMM on one OpenBLAS thread
])
def test_same_bits_at_1_2_3_threads(threads, monkeypatch, c, hw, limit, direct, one_blas):
    """Bands of tile rows (batch-last) or of samples ((N, C, H, W) direct; ``direct`` None: the shipped choice) split
    over threads: forward and every gradient have the same bits for any count, and PyTorch's values."""
    monkeypatch.setattr(policy, "blas_threads", 2)  # (OpenBLAS on one thread: no GEMM blocks at all)
    monkeypatch.setattr(policy, "one_blas_thread", one_blas)
    if direct is not None:
        monkeypatch.setattr(policy, "winograd_nchw_min_tiles", 1 if direct else 1 << 20)
    if limit is not None:
        monkeypatch.setattr(policy, "blas_threaded_mnk", limit)
        t = hw // 2
        assert _parallel.gemm_block(c, c, winograd._bands(c, t, t, 32) * t * 32) == 0
    x, w, b, rng = _data((32, c, hw, hw), c, np.float32)
    up = rng.standard_normal((32, c, hw, hw)).astype(np.float32)
    th = hw // 2
    assert winograd.applies(np.zeros((c, hw + 2, hw + 2, 32), np.float32), w, (1, 1), (1, 1), 1)
    assert -(-th // winograd._bands(c, th, th, 32)) >= 2
    results = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        results.append(_conv_grads(x, w, b, up, 1))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    to = torch.nn.functional.conv2d(tx, tw, tb, padding=1)
    to.backward(torch.tensor(up))
    for a, t in zip(results[0], (to, tx.grad, tw.grad, tb.grad)):
        assert_close(a, t, atol=1e-5 * float(t.detach().abs().max()), rtol=1e-4)
    for other in results[1:]:
        for a, r in zip(other, results[0]):
            np.testing.assert_array_equal(a, r)


@pytest.mark.parametrize("nd,stride,kernel,padding,groups", [
    (2, 2, 3, 1, 1),   # a ResNet stage's first (strided) convolution: col2im input gradient
    (2, 2, 1, 0, 1),   # its 1x1 strided shortcut (weight gradient as g @ cols^T; the 3x3 ones: cols @ g^T)
    (2, 2, 1, 0, 2),   # the same with groups
    (2, 1, 3, 1, 1),   # the RGB stem (3 channels: im2col), stride-1 input gradient as a convolution
    (2, 1, 3, 1, 2),   # groups
    (1, 1, 5, 2, 1),   # 1-d, a batch of 33: weight gradient blocks of 5 samples, the last of 3
])
def test_im2col_path_same_bits_at_1_2_3_threads(threads, nd, stride, kernel, padding, groups):
    """im2col, the per-sample GEMMs and col2im (by sample), and the weight gradient's per-sample products (summed in
    blocks of samples) split over threads: the same bits for any count, and PyTorch's values."""
    rng = np.random.default_rng(3)
    c = 3 if kernel == 3 and stride == 1 and groups == 1 else 8
    shape = (32, c, 24, 24) if nd == 2 else (33, c, 300)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.standard_normal((16, c // groups) + (kernel,) * nd) / 3).astype(np.float32)
    f_ours, f_torch = (ember.nn.functional.conv2d, torch.nn.functional.conv2d) if nd == 2 else \
        (ember.nn.functional.conv1d, torch.nn.functional.conv1d)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    to = f_torch(tx, tw, stride=stride, padding=padding, groups=groups)
    up = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(up))
    results = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        ex, ew = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
        eo = f_ours(ex, ew, stride=stride, padding=padding, groups=groups)
        eo.backward(ember.tensor(up))
        results.append([eo.detach().numpy(), ex.grad.numpy(), ew.grad.numpy()])
    for a, t in zip(results[0], (to, tx.grad, tw.grad)):  # float32 sums of 10^4 terms: tolerance by scale
        assert_close(a, t, atol=1e-5 * float(t.detach().abs().max()), rtol=1e-4)
    for other in results[1:]:
        for a, r in zip(other, results[0]):
            np.testing.assert_array_equal(a, r)


def test_gemm_blocks_keep_each_gemm_small_and_equal_matmul():
    """gemm_block: no blocks below the OpenBLAS threading size, blocks along the longer output side above it, none
    narrower than 8; matmul_blocks computes the same product."""
    limit = policy.blas_threaded_mnk
    with policy.override(blas_threads=1):  # OpenBLAS on one thread: every GEMM whole
        assert _parallel.gemm_block(64, 64, 256) is None and _parallel.gemm_block(192, 192, 256) is None
    with policy.override(blas_threads=2):
        _check_gemm_blocks(limit)


def _check_gemm_blocks(limit: int) -> None:
    assert _parallel.gemm_block(16, 16, 1024) is None and 16 * 16 * 1024 <= limit
    block = _parallel.gemm_block(64, 64, 256)
    assert block and 64 * 64 * block <= limit
    assert _parallel.gemm_block(256, 64, 32) * 64 * 32 <= limit  # rows when the output is taller than wide
    assert _parallel.gemm_block(192, 192, 256) == 0
    rng = np.random.default_rng(5)
    for m, k, n in [(64, 64, 300), (300, 40, 24), (8, 8, 8)]:
        a, b = rng.standard_normal((3, m, k)), rng.standard_normal((3, k, n))
        out = np.empty((3, m, n))
        _parallel.matmul_blocks(a, b, out, _parallel.gemm_block(m, k, n))
        np.testing.assert_allclose(out, a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("o,c,kernel,hw,stride,padding,dilation,groups", [
    (128, 64, 4, (16, 16), 2, 1, 1, 1),  # the DCGAN generator layer (a transposed convolution's forward)
    (128, 64, 3, (9, 9), 2, 0, 2, 1),
    (192, 128, 4, (6, 16), 3, 2, 1, 2),  # groups
])
def test_col2im_by_rows_same_bits_as_whole_matrix(threads, monkeypatch, o, c, kernel, hw, stride, padding, dilation,
                                                   groups):
    """A wide row GEMM's col2im runs one output row at a time at one thread (``_col2im_rows``), after the whole
    column matrix's GEMM at two: the same values as ``_col2im`` of the whole matrix either way. Small-integer
    inputs make every sum exact, so the comparison is bit for bit whatever order BLAS sums in (OpenBLAS's
    kernels for some CPUs round a block of columns differently from the whole matrix)."""
    monkeypatch.setattr(policy, "blas_threads", 2)  # (OpenBLAS on one thread, as on a 1-CPU host: no wide case)
    rng = np.random.default_rng(8)
    w = rng.integers(-4, 5, (o, c // groups, kernel, kernel)).astype(np.float32)
    gb = rng.integers(-4, 5, (o, *hw, 32)).astype(np.float32)
    in_sp = tuple((n - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 for n in hw)
    pads, st, dil = ((padding, padding),) * 2, (stride,) * 2, (dilation,) * 2
    assert conv._stacked(c // groups * kernel * kernel, o // groups, hw, 32) == 0  # the wide case
    wt = w.reshape(groups, o // groups, -1).transpose(0, 2, 1)
    gm = conv._out_rows(gb, 0, groups)
    gcols = np.matmul(wt, gm).reshape(c, kernel, kernel, *hw, 32)
    padded = (c, *(n + 2 * padding for n in in_sp), 32)
    ref = conv.crop_spatial(conv._col2im(gcols, padded, hw, st, dil, 0), pads, lead=1)
    for n in (1, 2):
        ember.set_num_threads(n)
        np.testing.assert_array_equal(conv.input_grad(gb, w, in_sp, st, pads, dil, groups), ref)


@pytest.mark.parametrize("shape,o,kernel,stride,padding,batch_last", [
    ((32, 32, 16, 16), 16, 4, 2, 1, True),   # a WGAN critic's 4x4 stride-2 convolutions: to 8x8 and 4x4 positions
    ((16, 8, 8, 8), 12, 4, 2, 1, True),
    ((8, 6, 16, 16), 8, 3, 2, 1, True),      # a ResNet stage's strided 3x3 to 8x8
    ((8, 6, 18, 18), 8, 3, 2, 1, False),     # 9x9 = 81 positions: one GEMM per sample
    ((8, 6, 16, 16), 8, 1, 2, 0, False),     # 1x1: no column matrix to widen, the per-sample GEMMs stay
])
def test_few_positions_compute_batch_last(shape, o, kernel, stride, padding, batch_last):
    """Convolutions with at most ``policy.batch_last_max_positions`` output positions per sample take the batch-last
    im2col (one GEMM per output row over the batch): output and gradients equal PyTorch's and the (N, C, H, W)
    path's, and the output is contiguous as PyTorch's."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.standard_normal((o, shape[1], kernel, kernel)) / kernel).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    to = torch.nn.functional.conv2d(tx, tw, tb, stride=stride, padding=padding)
    up = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(up))
    results = []
    for limit in (policy.batch_last_max_positions, 0):
        with policy.override(batch_last_max_positions=limit):
            ex, ew, eb = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
            eo = ember.nn.functional.conv2d(ex, ew, eb, stride=stride, padding=padding)
            assert (eo.grad_fn.meta[-1] != conv._NCHW) == (batch_last and limit > 0)
            assert eo.is_contiguous() and eo.stride() == to.stride()
            eo.backward(ember.tensor(up))
            results.append([eo.detach().numpy(), ex.grad.numpy(), ew.grad.numpy(), eb.grad.numpy()])
    for a, r, t in zip(*results, (to, tx.grad, tw.grad, tb.grad)):
        assert_close(a, t, atol=1e-5 * float(t.detach().abs().max()), rtol=1e-4)
        np.testing.assert_allclose(a, r, atol=1e-5 * float(np.abs(r).max()), rtol=1e-4)


@pytest.mark.parametrize("make", [
    lambda m: (m.nn.Conv2d(3, 4, 3, padding=1), (0, 3, 5, 5)),
    lambda m: (m.nn.Conv1d(3, 2, 3, stride=2), (0, 3, 7)),
    lambda m: (m.nn.Conv3d(2, 2, 2, groups=2), (0, 2, 3, 3, 3)),
    lambda m: (m.nn.ConvTranspose2d(3, 2, 3, stride=2, output_padding=1), (0, 3, 4, 4)),
])
def test_an_empty_batch_gives_an_empty_output_and_zero_gradients_as_pytorch(make):
    outs = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        layer, shape = make(lib)
        x = lib.zeros(shape, requires_grad=True)
        out = layer(x)
        (out.sum() + layer.weight.sum()).backward()  # the weight's gradient: ones, plus none from the batch
        outs.append((out.shape, x.grad.shape, layer.weight.grad.numpy(), layer.bias.grad.numpy()))
    (ts, tgs, tw, tb), (es, egs, ew, eb) = outs
    assert tuple(es) == tuple(ts) and tuple(egs) == tuple(tgs)
    np.testing.assert_array_equal(ew, tw)
    np.testing.assert_array_equal(eb, tb)

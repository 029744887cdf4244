"""Winograd on narrow images (a ResNet's 8x8 layers) in PyTorch's layout: its batch-last bands of tile rows gather
their padded input from (N, C, H, W) and scatter their output back into it on the thread that computes the band,
where the whole input's padded batch-last copy ran before the bands, and the whole output's copy back after them,
on the calling thread alone. The same bits as that composition, at 1, 2 and 3 threads; values against PyTorch's in
``tests/test_conv_fast.py``'s ``test_routed_conv2d_matches_torch``."""

import numpy as np
import pytest

import ember
from ember._kernels import policy
from ember.nn._ops import conv, conv_layout, winograd
from ember.nn._ops.conv_layout import batch_last_padded, to_nchw

pytestmark = pytest.mark.skipif(not policy.use_compiled(), reason="the banded (N, C, H, W) path is compiled only")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,o,pads,bias", [
    ((32, 16, 8, 8), 16, ((1, 1), (1, 1)), False),  # a ResNet's 8x8 layer, smaller
    ((33, 5, 7, 9), 6, ((1, 1), (1, 1)), True),     # odd sizes: the last tile row and column cropped
    ((4, 3, 5, 6), 5, ((0, 2), (2, 0)), True),      # asymmetric padding
    ((2, 2, 3, 3), 3, ((0, 0), (0, 0)), False),     # one output
])
def test_bands_equal_the_layout_copies_bit_for_bit(threads, dtype, shape, o, pads, bias):
    """``conv3x3_bands_nchw`` gives ``to_nchw(conv3x3(batch_last_padded(x, pads), w), bias)``'s bits and the same
    kept tiles, whatever the thread count (its bands split over threads)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((o, shape[1], 3, 3)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype) if bias else None
    ember.set_num_threads(1)
    ref, ref_tiles = winograd.conv3x3(batch_last_padded(x, pads), w, keep_tiles=True)
    ref = to_nchw(ref, b)
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        out, tiles = winograd.conv3x3_bands_nchw(x, w, pads, b, keep_tiles=True)
        assert out.shape == ref.shape and out.flags.c_contiguous
        assert out.tobytes() == ref.tobytes(), n
        assert len(tiles) == len(ref_tiles) and all(t.tobytes() == r.tobytes() for t, r in zip(tiles, ref_tiles))


def _step(x, w, b, up):
    ex = ember.tensor(x, requires_grad=True)
    ew, eb = ember.tensor(w, requires_grad=True), ember.tensor(b, requires_grad=True)
    eo = ember.nn.functional.conv2d(ex, ew, eb, padding=1)
    eo.backward(ember.tensor(up))
    return [eo.detach().numpy(), ex.grad.numpy(), ew.grad.numpy(), eb.grad.numpy()]


def test_conv2d_on_an_8x8_image_at_two_threads_copies_no_whole_array_on_the_calling_thread(threads, monkeypatch):
    """conv2d forward and backward on a ResNet's 8x8 layer (Winograd, batch-last tiles): no batch-last copy of the
    input or of the output gradient for the transforms, no copy of the output or of the input gradient back to
    (N, C, H, W) at two threads (before: two each way, on the calling thread; at one thread they stay); its output and
    gradients the bits of the layout copies' way, at 1 and 2 threads."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((32, 16, 8, 8)).astype(np.float32)
    w = (rng.standard_normal((16, 16, 3, 3)) / 3).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    up = rng.standard_normal((32, 16, 8, 8)).astype(np.float32)
    ember.set_num_threads(1)
    with monkeypatch.context() as m:
        m.setattr(winograd, "bands_nchw", lambda *a, **k: False)
        reference = _step(x, w, b, up)
    copies = []
    for module, name in ((conv, "batch_last_padded"), (conv, "to_nchw"), (conv_layout, "batch_last_padded")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda a, *r, _real=real, _name=name: copies.append(_name) or _real(a, *r))
    for n in (1, 2):
        ember.set_num_threads(n)
        ours = _step(x, w, b, up)
        for name, a, r in zip(("output", "input grad", "weight grad", "bias grad"), ours, reference):
            assert a.tobytes() == r.tobytes(), (name, n)
    # at one thread, the copies (faster there); at two, only the output gradient's batch-last copy whose sum is the
    # bias gradient (``to_batch_last``: PyTorch's bias-less ResNet layers take none)
    assert copies == ["batch_last_padded", "to_nchw", "batch_last_padded", "batch_last_padded", "to_nchw",
                      "batch_last_padded"]


@pytest.mark.parametrize("shape,o", [((32, 16, 8, 8), 16), ((33, 5, 7, 9), 6), ((2, 3, 2, 2), 4)])
def test_weight_gradient_bands_read_the_gradient_in_pytorchs_layout(threads, shape, o):
    """``weight_grad3x3_bands_nchw_rows(tiles, g)`` gives ``weight_grad3x3(tiles, to_batch_last(g))``'s bits (odd
    sizes: zeros beyond g's last row and column), at 1, 2 and 3 threads."""
    rng = np.random.default_rng(3)
    n, c, h, w = shape
    xb = batch_last_padded(rng.standard_normal(shape), ((1, 1), (1, 1)))
    _, tiles = winograd.conv3x3(xb, rng.standard_normal((o, c, 3, 3)), keep_tiles=True)
    g = rng.standard_normal((n, o, h, w))
    ember.set_num_threads(1)
    reference = winograd.weight_grad3x3(tiles, conv_layout.to_batch_last(g))
    for count in (1, 2, 3):
        ember.set_num_threads(count)
        bands, finish = winograd.weight_grad3x3_bands_nchw_rows(tiles, g)
        winograd.run_rows(bands)
        assert finish().tobytes() == reference.tobytes(), count


def test_bands_only_at_two_threads_and_for_narrow_images(threads):
    """The banded path is taken at more than one thread for images of at most ``policy.winograd_bands_max_tiles``
    tile columns (an 8x8 output: 4), not at one thread (the copies keep no thread waiting there) nor for a 14x14
    output (7 tiles: its gathers cost more than the copies), nor for arrays of two dtypes."""
    x, w = np.zeros((32, 16, 8, 8), np.float32), np.zeros((16, 16, 3, 3), np.float32)
    ember.set_num_threads(2)
    assert winograd.bands_nchw(8, x, w) and winograd.bands_nchw(7, x, w, None)
    assert not winograd.bands_nchw(14, x, w)
    assert not winograd.bands_nchw(8, x, w.astype(np.float64))
    ember.set_num_threads(1)
    assert not winograd.bands_nchw(8, x, w)

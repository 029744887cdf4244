"""Convolution outputs are laid out as PyTorch's: contiguous (N, C, *spatial), the same strides, for every flavour
(1-, 2-, 3-d, groups, dilation, stride, Winograd, transposed with and without output_padding), on the compiled and
on the NumPy layout copies; values and gradients equal PyTorch's."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember._kernels import policy
from ember.nn._ops import conv_layout

CONVS = [  # (name, input shape, weight shape, kwargs)
    ("conv1d", (2, 6, 9), (4, 3, 3), dict(padding=1, groups=2)),
    ("conv1d", (3, 4, 11), (5, 4, 4), dict(stride=2, dilation=2)),
    ("conv2d", (2, 6, 9, 8), (4, 6, 3, 3), dict(padding=1)),
    ("conv2d", (2, 6, 9, 8), (6, 2, 3, 2), dict(padding=(2, 1), stride=(2, 1), dilation=(1, 2), groups=3)),
    ("conv2d", (3, 5, 7, 7), (4, 5, 1, 1), dict()),  # 1x1, unpadded: the input copy is a pure re-layout
    ("conv2d", (32, 16, 6, 5), (16, 16, 3, 3), dict(padding=1)),  # Winograd
    ("conv3d", (2, 4, 5, 6, 7), (6, 2, 3, 3, 3), dict(padding=1, groups=2)),
    ("conv_transpose1d", (2, 4, 7), (4, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 4, 4), dict(stride=2, padding=1)),
    ("conv_transpose2d", (2, 6, 5, 6), (6, 2, 3, 3), dict(padding=1, groups=3, dilation=2)),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),  # cropped
    ("conv_transpose3d", (2, 4, 3, 4, 5), (4, 2, 3, 3, 3), dict(stride=(1, 2, 1), padding=1)),
]


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("name,xs,ws,kwargs", CONVS)
def test_output_and_gradients_laid_out_as_torch(compiled, bias, name, xs, ws, kwargs):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ws).astype(np.float32)
    nb = ws[0] if name.startswith("conv") and "transpose" not in name else ws[1] * kwargs.get("groups", 1)
    b = rng.standard_normal(nb).astype(np.float32) if bias else None
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    to = getattr(torch.nn.functional, name)(tx, tw, None if b is None else torch.tensor(b), **kwargs)
    up = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(up))
    with policy.override(compiled=compiled):
        ex, ew = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
        eo = getattr(ember.nn.functional, name)(ex, ew, None if b is None else ember.tensor(b), **kwargs)
        eo.backward(ember.tensor(up))
    assert eo.is_contiguous() and to.is_contiguous()
    assert eo.stride() == to.stride() and eo.shape == to.shape
    assert eo.view(eo.shape[0], -1).shape == (to.shape[0], to[0].numel())  # view needs the contiguous layout
    assert_close(eo, to, atol=1e-4, rtol=1e-4)
    assert ex.grad.is_contiguous() and ex.grad.stride() == tx.grad.stride()
    assert_close(ex.grad, tx.grad, atol=1e-4, rtol=1e-4)
    assert_close(ew.grad, tw.grad, atol=1e-3, rtol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,pads", [((3, 5, 7), ((2, 1),)), ((4, 3, 6, 5), ((1, 1), (0, 2))),
                                        ((2, 3, 4, 5, 3), ((1, 0), (0, 0), (2, 2))), ((5, 4, 3, 3), ((0, 0),) * 2),
                                        # more samples than the kernels read row by row together: one plane each
                                        ((16, 4, 8, 8), ((1, 1), (1, 1))), ((9, 3, 2, 4, 5), ((0, 1), (1, 0), (2, 1))),
                                        ((12, 2, 7), ((0, 0),)),
                                        # whole 8 x 8 blocks of samples and columns, with rows and samples past them
                                        ((19, 3, 5, 13), ((1, 1), (2, 0))), ((16, 2, 24), ((3, 1),)),
                                        ((8, 2, 3, 4, 16), ((0, 1), (1, 1), (0, 0)))])
def test_layout_copies_same_bits_compiled_and_numpy(dtype, shape, pads):
    """The compiled re-layouts (padded batch-last input, (N, C, *sp) output with bias) against the NumPy copies."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    bias = rng.standard_normal(shape[1]).astype(dtype)

    def run():
        xb = conv_layout.batch_last_padded(x, pads)
        return xb, conv_layout.to_nchw(xb, bias), conv_layout.to_nchw(xb), conv_layout.to_batch_last(x)

    with policy.override(compiled=True):
        fast = run()
    with policy.override(compiled=False):
        ref = run()
    for a, r in zip(fast, ref):
        assert a.flags.c_contiguous and a.dtype == r.dtype and a.shape == r.shape
        np.testing.assert_array_equal(a, r)
    inner = (slice(None),) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(shape[2:], pads)) + (slice(None),)
    np.testing.assert_array_equal(ref[0][inner], x.transpose(*range(1, x.ndim), 0))
    np.testing.assert_array_equal(ref[1], ref[0].transpose(x.ndim - 1, *range(x.ndim - 1))
                                  + bias.reshape(-1, *(1,) * (x.ndim - 2)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,crop", [((3, 9, 5), ((1, 2),)), ((4, 6, 5, 9), ((1, 1), (0, 2))),
                                        ((2, 5, 4, 6, 3), ((1, 0), (0, 0), (2, 1))), ((5, 7, 8, 16), ((2, 1), (1, 3)))])
def test_to_nchw_of_a_cropped_view_same_bits_compiled_and_numpy(dtype, shape, crop, monkeypatch):
    """A padded convolution's input gradient is the cropped interior of a batch-last array (a strided view): the
    compiled copy reads it in place, with the NumPy copy's bits (with and without a bias)."""
    rng = np.random.default_rng(2)
    full = rng.standard_normal(shape).astype(dtype)  # (C, *padded, N)
    view = full[(slice(None), *(slice(lo, n - hi) for n, (lo, hi) in zip(shape[1:-1], crop)), slice(None))]
    assert not view.flags.c_contiguous
    bias = rng.standard_normal(shape[0]).astype(dtype)
    calls = []
    kernel = conv_layout.compiled.to_nchw
    monkeypatch.setattr(conv_layout.compiled, "to_nchw", lambda *a: calls.append(1) or kernel(*a))
    for b in (bias, None):
        with policy.override(compiled=True):
            fast = conv_layout.to_nchw(view, b)
        with policy.override(compiled=False):
            ref = conv_layout.to_nchw(view, b)
        assert fast.flags.c_contiguous and fast.dtype == ref.dtype and fast.shape == ref.shape
        np.testing.assert_array_equal(fast, ref)
    assert calls  # the compiled copy ran on the view itself

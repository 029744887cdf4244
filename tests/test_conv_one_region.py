"""A convolution as one split over ember's threads: the passes around its GEMMs run inside the split, on the thread
that computes those samples, instead of on the calling thread alone before or after it. im2col in PyTorch's layout
(``conv_nchw``): each block of samples is padded, and its input gradient cropped, by the thread that computes it.
(The values against PyTorch's and the same bits at 1, 2 and 3 threads: ``tests/test_parallel.py``'s
``test_convolution_gemms_run_whole_on_one_openblas_thread``.)"""

import threading

import numpy as np
import pytest
import torch

import ember
from ember import _parallel


def _threads_calling(monkeypatch, module, name: str) -> list:
    """The (thread name, samples) of every call of ``module.name`` from now on."""
    seen = []
    real = getattr(module, name)

    def spy(a, *args, **kwargs):
        seen.append((threading.current_thread().name, a.shape[0]))
        return real(a, *args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def _count_handoffs(monkeypatch) -> list:
    """An entry per chunk handed to one of ember's workers from now on."""
    handoffs = []
    submit = _parallel._Worker.submit
    monkeypatch.setattr(_parallel._Worker, "submit", lambda self, *a: handoffs.append(1) or submit(self, *a))
    return handoffs


def test_im2col_convolution_pads_and_crops_on_the_threads_that_compute_the_samples(threads, monkeypatch):
    """A padded strided convolution in PyTorch's layout (a ResNet's stride-2 3x3): at two threads, its forward pads
    each half of the batch on the thread that then runs its im2col and GEMMs, and its backward crops each half's
    input gradient there too; one hand-off each way. (Before: the whole input padded, and the whole input gradient
    cropped, on the calling thread alone, outside the split.)"""
    from ember.nn._ops import conv_nchw

    ember.set_num_threads(2)
    pads = _threads_calling(monkeypatch, conv_nchw, "pad_spatial_into")
    crops = _threads_calling(monkeypatch, conv_nchw, "crop_spatial")
    x, w = ember.randn(32, 16, 32, 32, requires_grad=True), ember.randn(32, 16, 3, 3, requires_grad=True)
    g = ember.randn(32, 32, 16, 16)
    handoffs = _count_handoffs(monkeypatch)
    out = ember.nn.functional.conv2d(x, w, stride=2, padding=1)
    assert len(handoffs) == 1 and sorted(pads) == [("MainThread", 16), ("ember-intra-op_0", 16)]
    out.backward(g)
    assert len(handoffs) == 2 and sorted(crops) == [("MainThread", 16), ("ember-intra-op_0", 16)]


@pytest.mark.parametrize("x,w,kwargs", [
    ((32, 16, 32, 32), (32, 16, 3, 3), {"stride": 2, "padding": 1}),  # a ResNet's stride-2 3x3: col2im, cropped
    ((32, 8, 20, 20), (8, 8, 3, 3), {"padding": 1}),                  # stride 1: dx a convolution of padded g
    ((6, 4, 11, 9), (6, 2, 3, 2), {"padding": (2, 1), "groups": 2, "dilation": (1, 2)}),  # uneven pads, groups
])
@pytest.mark.parametrize("channels_last", [False, True])
def test_padded_im2col_convolution_is_pytorchs_with_the_same_bits_at_1_2_3_threads(threads, x, w, kwargs,
                                                                                   channels_last):
    """Padding per block of samples and cropping per block change no value: PyTorch's output and gradients, and
    the same bits for 1, 2 and 3 threads (an input in channels_last memory too, which is padded into PyTorch's
    layout)."""
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal(x).astype(np.float32), (rng.standard_normal(w) / 8).astype(np.float32)
    if channels_last:
        xs = np.ascontiguousarray(xs.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
    to = torch.nn.functional.conv2d(tx, tw, **kwargs)
    up = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(up))
    results = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        ex, ew = ember.tensor(xs, requires_grad=True), ember.tensor(ws, requires_grad=True)
        eo = ember.nn.functional.conv2d(ex, ew, **kwargs)
        eo.backward(ember.tensor(up))
        results.append([eo.detach().numpy(), ex.grad.numpy(), ew.grad.numpy()])
    for a, t in zip(results[0], (to, tx.grad, tw.grad)):
        np.testing.assert_allclose(a, t.detach().numpy(), atol=1e-5 * float(t.detach().abs().max()), rtol=1e-4)
    for other in results[1:]:
        for a, r in zip(other, results[0]):
            np.testing.assert_array_equal(a, r)

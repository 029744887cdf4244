"""A convolution as one split over ember's threads: the passes around its GEMMs run inside the split, on the thread
that computes those samples, instead of on the calling thread alone before or after it. im2col in PyTorch's layout
(``conv_nchw``): each block of samples is padded, and its input gradient cropped, by the thread that computes it.
(The values against PyTorch's and the same bits at 1, 2 and 3 threads: ``tests/test_conv_fast.py``'s
``test_im2col_path_same_bits_at_1_2_3_threads``.)"""

import threading

import numpy as np

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
    from ember._kernels import policy
    from ember.nn._ops import conv_nchw

    monkeypatch.setattr(policy, "omp_chunks", False)  # ember's pool's workers (under omp: tests/test_omp_chunks.py)
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


def test_a_channels_last_input_gives_the_bits_of_a_contiguous_one(threads):
    """An input in channels_last memory is padded per block of samples into PyTorch's layout, so it takes the
    compiled im2col as a contiguous one does (before: NumPy's per-offset copies of a padded channels_last array):
    the same output and gradients, bit for bit, at two threads. (The contiguous path against PyTorch, at 1, 2 and 3
    threads: ``tests/test_conv_fast.py``'s ``test_im2col_path_same_bits_at_1_2_3_threads``.)"""
    ember.set_num_threads(2)
    xs = np.random.default_rng(0).standard_normal((32, 16, 32, 32)).astype(np.float32)
    w = ember.randn(32, 16, 3, 3)
    g = ember.randn(32, 32, 16, 16)
    grads = []
    for x in (xs, np.ascontiguousarray(xs.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)):
        ex = ember.tensor(x, requires_grad=True)
        out = ember.nn.functional.conv2d(ex, w, stride=2, padding=1)
        out.backward(g)
        grads.append((out.detach().numpy(), ex.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)

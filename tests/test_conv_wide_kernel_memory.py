"""A convolution whose kernel spans the input's whole width (TextCNN: a (k, embedding) kernel over a sentence's
(length, embedding) image) computes its input gradient in memory of the order of the input, as PyTorch does.

ember's input gradient is the full convolution of the padded output gradient with the flipped kernel: its im2col
buffer holds out_h x C_out x kh x kw x (kw - 1 + 1) x N elements, quadratic in the kernel's width. For
649453932/Chinese-Text-Classification-Pytorch's TextCNN (batch 16, length 32, embedding 300, 256 filters) that is a
176 GiB buffer, where PyTorch's gradient needs a few MiB."""

import tracemalloc

import numpy as np
import pytest
import torch

import ember


def _grads(lib, x, w):
    xt = lib.tensor(x, requires_grad=True)
    wt = lib.tensor(w, requires_grad=True)
    lib.nn.functional.conv2d(xt, wt).relu().sum().backward()
    return xt.grad.numpy(), wt.grad.numpy()


@pytest.mark.xfail(strict=True, reason="ember/nn/_ops/conv.py's input gradient of a kernel as wide as its input "
                                       "is a full convolution whose im2col buffer grows with the kernel's width "
                                       "squared (left to the engineer who owns conv.py this round)")
def test_input_gradient_of_a_full_width_kernel_needs_memory_of_the_order_of_the_input():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 1, 8, 64)).astype(np.float32)  # (batch, channel, length, embedding)
    w = rng.standard_normal((4, 1, 3, 64)).astype(np.float32)  # 4 filters of 3 words
    expected = _grads(torch, x, w)
    _grads(ember, x[:1, :, :4, :5], w[:2, :, :2, :5])  # first-call allocations (lazy imports) left out
    tracemalloc.start()
    try:
        got = _grads(ember, x, w)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)
    # the input is 4 KiB and the weight 3 KiB; the im2col buffer of the full convolution is 3 MiB
    assert peak < 1024 * 1024, f"peak {peak} bytes"

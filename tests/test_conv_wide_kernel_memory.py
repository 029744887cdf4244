"""A convolution whose kernel spans the input's whole width (TextCNN: a (k, embedding) kernel over a sentence's
(length, embedding) image) computes its input gradient in memory of the order of the input, as PyTorch does.

ember took a stride-1 convolution's input gradient as the full convolution of the padded output gradient with the
flipped kernel, whose im2col buffer holds in_h x C_out x kh x kw x in_w x N elements: quadratic in the kernel's
width when the kernel is as wide as the input. For 649453932/Chinese-Text-Classification-Pytorch's TextCNN (batch
16, length 32, embedding 300, 256 filters) that was a 176 GiB buffer, where PyTorch's gradient needs a few MiB. Such
gradients now take col2im, as PyTorch's (``policy.transposed_as_conv_max_ratio``)."""

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


def test_input_gradient_of_a_full_width_kernel_needs_memory_of_the_order_of_the_input():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 1, 8, 64)).astype(np.float32)  # (batch, channel, length, embedding)
    w = rng.standard_normal((4, 1, 3, 64)).astype(np.float32)  # 4 filters of 3 words
    expected = _grads(torch, x, w)
    _grads(ember, x, w)  # first-call allocations (lazy imports, compiled kernels loaded or compiled) left out
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


@pytest.mark.parametrize("length", [8, 100])  # few output positions (batch-last) and many ((N, C, H, W) layout)
def test_full_width_kernel_gradients_and_double_backward_match_pytorch(length):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 2, length, 40)).astype(np.float64)
    w = rng.standard_normal((5, 2, 4, 40)).astype(np.float64)
    grads = []
    for lib in (torch, ember):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        out = lib.nn.functional.conv2d(xt, wt, padding=(1, 0))
        gx, gw = lib.autograd.grad((out * out).sum(), (xt, wt), create_graph=True)
        ggx, ggw = lib.autograd.grad((gx * gx).sum() + gw.sum(), (xt, wt))
        grads.append([a.detach().numpy() for a in (gx, gw, ggx, ggw)])
    for got, expected in zip(grads[1], grads[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_transposed_convolution_to_a_full_width_output_needs_memory_of_the_order_of_its_output():
    """conv_transpose2d of a (N, C, L, 1) input with a (C, O, 3, 64) kernel (the input gradient above as a forward):
    col2im of the GEMM's columns, as PyTorch's, not the full correlation's column matrix."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 6, 1)).astype(np.float32)
    w = rng.standard_normal((4, 1, 3, 64)).astype(np.float32)
    expected = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w)).numpy()
    ember.nn.functional.conv_transpose2d(ember.tensor(x), ember.tensor(w))
    tracemalloc.start()
    try:
        got = ember.nn.functional.conv_transpose2d(ember.tensor(x), ember.tensor(w)).numpy()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert peak < 1024 * 1024, f"peak {peak} bytes"

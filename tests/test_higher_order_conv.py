"""Gradients of gradients (create_graph=True) of linear, convolution, pooling, padding, resampling and embedding
layers, against PyTorch (``higher_order_oracle.check_second_order``: outputs, first- and second-order gradients,
float64, small shapes)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from higher_order_oracle import check_second_order
from oracle import assert_close

import ember


def F(m):
    return m.nn.functional


LINEAR = {
    "linear": (lambda m, x, w, b: F(m).linear(x, w, b), [(3, 4), (5, 4), (5,)]),
    "linear_no_bias_3d": (lambda m, x, w: F(m).linear(x, w), [(2, 3, 4), (5, 4)]),
    "linear_one_row": (lambda m, x, w, b: F(m).linear(x, w, b), [(1, 4), (2, 4), (2,)]),
    "linear_1d_input": (lambda m, x, w: F(m).linear(x, w), [(4,), (3, 4)]),
    "linear_tanh": (lambda m, x, w, b: m.tanh(F(m).linear(x, w, b)), [(3, 4), (5, 4), (5,)]),
    "bilinear": (lambda m, x, y, w, b: F(m).bilinear(x, y, w, b), [(3, 4), (3, 2), (5, 4, 2), (5,)]),
    "bilinear_3d_no_bias": (lambda m, x, y, w: F(m).bilinear(x, y, w), [(2, 3, 4), (2, 3, 2), (5, 4, 2)]),
}

CONV = {
    "conv1d": (lambda m, x, w, b: F(m).conv1d(x, w, b), [(2, 3, 7), (4, 3, 3), (4,)]),
    "conv1d_stride_pad": (lambda m, x, w, b: F(m).conv1d(x, w, b, stride=2, padding=1), [(2, 3, 7), (4, 3, 3), (4,)]),
    "conv1d_dilation_groups": (lambda m, x, w: F(m).conv1d(x, w, dilation=2, groups=3), [(2, 6, 9), (3, 2, 2)]),
    "conv1d_unbatched": (lambda m, x, w: F(m).conv1d(x, w, padding=1), [(3, 6), (2, 3, 3)]),
    "conv2d": (lambda m, x, w, b: F(m).conv2d(x, w, b), [(2, 2, 5, 5), (3, 2, 3, 3), (3,)]),
    "conv2d_stride_pad": (lambda m, x, w, b: F(m).conv2d(x, w, b, stride=2, padding=1),
                          [(2, 2, 6, 6), (4, 2, 3, 3), (4,)]),
    "conv2d_asym_stride_pad": (lambda m, x, w: F(m).conv2d(x, w, stride=(2, 1), padding=(0, 2)),
                               [(2, 2, 7, 5), (3, 2, 3, 2)]),
    "conv2d_groups_dilation": (lambda m, x, w: F(m).conv2d(x, w, groups=2, dilation=2, padding=2),
                               [(2, 4, 6, 6), (4, 2, 3, 3)]),
    "conv2d_depthwise_stride": (lambda m, x, w, b: F(m).conv2d(x, w, b, stride=2, groups=3),
                                [(2, 3, 7, 7), (6, 1, 3, 3), (6,)]),
    "conv2d_same_even_kernel": (lambda m, x, w: F(m).conv2d(x, w, padding="same"), [(1, 2, 5, 5), (3, 2, 2, 4)]),
    "conv2d_large_stride": (lambda m, x, w: F(m).conv2d(x, w, stride=3), [(2, 2, 8, 8), (2, 2, 2, 2)]),
    "conv2d_winograd_size": (lambda m, x, w: F(m).conv2d(x, w, padding=1), [(2, 8, 12, 12), (8, 8, 3, 3)]),
    "conv2d_x_times_x": (lambda m, x, w: F(m).conv2d(x * x, w, padding=1) * x[:, :1], [(1, 2, 4, 4), (3, 2, 3, 3)]),
    "conv3d": (lambda m, x, w, b: F(m).conv3d(x, w, b, padding=1), [(1, 2, 4, 4, 4), (3, 2, 3, 3, 3), (3,)]),
    "conv3d_stride_groups": (lambda m, x, w: F(m).conv3d(x, w, stride=(1, 2, 2), groups=2),
                             [(2, 4, 3, 5, 5), (2, 2, 2, 2, 2)]),
    "conv_transpose1d": (lambda m, x, w, b: F(m).conv_transpose1d(x, w, b, stride=2, padding=1),
                         [(2, 3, 5), (3, 2, 3), (2,)]),
    "conv_transpose2d": (lambda m, x, w, b: F(m).conv_transpose2d(x, w, b), [(2, 3, 4, 4), (3, 2, 3, 3), (2,)]),
    "conv_transpose2d_output_padding": (
        lambda m, x, w, b: F(m).conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        [(2, 3, 4, 4), (3, 2, 3, 3), (2,)]),
    "conv_transpose2d_groups_dilation": (
        lambda m, x, w: F(m).conv_transpose2d(x, w, stride=(2, 1), groups=2, dilation=2, padding=(1, 2)),
        [(2, 4, 3, 4), (4, 3, 2, 3)]),
    "conv_transpose3d": (lambda m, x, w: F(m).conv_transpose3d(x, w, stride=2), [(1, 2, 2, 3, 2), (2, 3, 2, 2, 2)]),
}

POOL = {
    "max_pool1d": (lambda m, x: F(m).max_pool1d(x, 2), [(2, 3, 8)]),
    "max_pool1d_overlap_pad_dilation": (lambda m, x: F(m).max_pool1d(x, 3, stride=2, padding=1, dilation=2),
                                        [(2, 3, 9)]),
    "max_pool2d": (lambda m, x: F(m).max_pool2d(x, 2), [(2, 3, 4, 4)]),
    "max_pool2d_overlap_ceil": (lambda m, x: F(m).max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
                                [(2, 2, 6, 5)]),
    "max_pool2d_unbatched": (lambda m, x: F(m).max_pool2d(x, (2, 1)), [(2, 4, 3)]),
    "max_pool2d_of_conv": (lambda m, x, w: F(m).max_pool2d(F(m).conv2d(x, w, padding=1), 2).flatten(1),
                           [(2, 2, 4, 4), (3, 2, 3, 3)]),
    "max_pool2d_squared": (lambda m, x: F(m).max_pool2d(x * x, 2, stride=1), [(1, 2, 4, 4)]),
    "avg_pool1d": (lambda m, x: F(m).avg_pool1d(x, 3, stride=2, padding=1), [(2, 3, 8)]),
    "avg_pool1d_exclude_pad_ceil": (
        lambda m, x: F(m).avg_pool1d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        [(2, 3, 8)]),
    "avg_pool2d": (lambda m, x: F(m).avg_pool2d(x, 2), [(2, 3, 4, 4)]),
    "avg_pool2d_overlap_pad": (lambda m, x: F(m).avg_pool2d(x, 3, stride=1, padding=1), [(2, 2, 5, 4)]),
    "avg_pool2d_divisor_override": (lambda m, x: F(m).avg_pool2d(x, 2, divisor_override=3), [(1, 2, 4, 6)]),
    "avg_pool2d_squared": (lambda m, x: F(m).avg_pool2d(x * x, (2, 3), stride=(1, 2)), [(2, 2, 5, 7)]),
    "adaptive_avg_pool1d": (lambda m, x: F(m).adaptive_avg_pool1d(x, 3), [(2, 3, 7)]),
    "adaptive_avg_pool2d": (lambda m, x: F(m).adaptive_avg_pool2d(x, (3, 2)), [(2, 3, 7, 5)]),
    "adaptive_avg_pool2d_global_of_conv": (
        lambda m, x, w: F(m).adaptive_avg_pool2d(F(m).conv2d(x, w) ** 2, 1), [(2, 2, 5, 5), (3, 2, 3, 3)]),
    "unfold": (lambda m, x: F(m).unfold(x, 2, stride=1, padding=1), [(2, 3, 4, 4)]),
    "unfold_strided_dilated": (lambda m, x: F(m).unfold(x * x, (2, 3), dilation=(2, 1), stride=(1, 2)),
                               [(1, 2, 5, 6)]),
    "fold": (lambda m, x: F(m).fold(x, (4, 4), 2), [(2, 12, 9)]),
    "fold_strided_padded": (lambda m, x: F(m).fold(x * x, (5, 5), 3, padding=1, stride=2), [(1, 18, 9)]),
}


@pytest.mark.parametrize("name", sorted(LINEAR))
def test_linear_second_order_matches_pytorch(name):
    fn, specs = LINEAR[name]
    check_second_order(fn, specs)


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths:UserWarning")
@pytest.mark.parametrize("name", sorted(CONV))
def test_convolution_second_order_matches_pytorch(name):
    fn, specs = CONV[name]
    check_second_order(fn, specs)


def test_convolution_third_order_matches_pytorch():
    """conv's recorded backward is convolutions, whose backward is convolutions again."""
    rng = np.random.default_rng(5)
    xa, wa = rng.standard_normal((2, 2, 6, 6)), rng.standard_normal((3, 2, 3, 3))
    results = []
    for lib in (ember, torch):
        x, w = lib.tensor(xa, requires_grad=True), lib.tensor(wa, requires_grad=True)
        y = (lib.nn.functional.conv2d(x, w, stride=2, padding=1) ** 2).sum()
        (gx,) = lib.autograd.grad(y, x, create_graph=True)
        (gw,) = lib.autograd.grad((gx ** 2).sum(), w, create_graph=True)
        results.append(lib.autograd.grad((gw * gw).sum(), [x, w]))
    for e, t in zip(*results):
        assert_close(e, t, atol=1e-8, rtol=1e-7)


def _wgan_gp_critic_grads(lib, arrays):
    """A conv critic's parameter gradients of the WGAN-GP penalty ((|d critic / d x| - 1)^2).mean()."""
    w1, b1, w2, b2, wl, bl, xr, xf, eps = (lib.tensor(a, requires_grad=i < 6) for i, a in enumerate(arrays))
    f = lib.nn.functional

    def leaky_relu(h):  # F.leaky_relu(h, 0.2), spelled in ops whose double backward is not this file's concern
        return lib.where(h > 0, h, 0.2 * h)

    def critic(x):
        h = leaky_relu(f.conv2d(x, w1, b1, stride=2, padding=1))
        h = leaky_relu(f.conv2d(h, w2, b2, stride=2, padding=1, groups=2))
        return f.linear(h.flatten(1), wl, bl)

    x = (eps * xr + (1 - eps) * xf).requires_grad_(True)
    (g,) = lib.autograd.grad(critic(x).sum(), x, create_graph=True)
    penalty = ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(xf).mean() - critic(xr).mean() + 10 * penalty
    loss.backward()
    return [p.grad for p in (w1, b1, w2, b2, wl, bl)]


def test_wgan_gp_penalty_gradients_of_a_conv_critic_match_pytorch():
    rng = np.random.default_rng(7)
    shapes = [(4, 3, 3, 3), (4,), (6, 2, 3, 3), (6,), (1, 24), (1,), (5, 3, 8, 8), (5, 3, 8, 8), (5, 1, 1, 1)]
    arrays = [rng.standard_normal(s) * 0.5 for s in shapes]
    arrays[-1] = rng.random((5, 1, 1, 1))
    for e, t in zip(_wgan_gp_critic_grads(ember, arrays), _wgan_gp_critic_grads(torch, arrays)):
        assert_close(e, t, atol=1e-9, rtol=1e-7)


@pytest.mark.parametrize("name", sorted(POOL))
def test_pooling_and_fold_second_order_matches_pytorch(name):
    fn, specs = POOL[name]
    check_second_order(fn, specs)

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
from ember.autograd.recorded import HigherOrderError


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
    "conv2d_of_reflect_pad": (lambda m, x, w: F(m).conv2d(F(m).pad(x, (1, 1, 1, 1), mode="reflect"), w),
                              [(1, 2, 4, 4), (3, 2, 3, 3)]),
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
    # (adaptive max pooling's gradient scatter-added into a plain array, which create_graph refused)
    "adaptive_max_pool1d": (lambda m, x: F(m).adaptive_max_pool1d(x * x, 3), [(2, 3, 7)]),
    "adaptive_max_pool2d_shared_bins": (lambda m, x: F(m).adaptive_max_pool2d(x * x, (3, 2)), [(2, 2, 5, 5)]),
    "adaptive_max_pool3d": (lambda m, x: F(m).adaptive_max_pool3d(x * x, 2), [(1, 2, 3, 5, 4)]),
    "adaptive_avg_pool2d_global_of_conv": (
        lambda m, x, w: F(m).adaptive_avg_pool2d(F(m).conv2d(x, w) ** 2, 1), [(2, 2, 5, 5), (3, 2, 3, 3)]),
    "unfold": (lambda m, x: F(m).unfold(x, 2, stride=1, padding=1), [(2, 3, 4, 4)]),
    "unfold_strided_dilated": (lambda m, x: F(m).unfold(x * x, (2, 3), dilation=(2, 1), stride=(1, 2)),
                               [(1, 2, 5, 6)]),
    "fold": (lambda m, x: F(m).fold(x, (4, 4), 2), [(2, 12, 9)]),
    "fold_strided_padded": (lambda m, x: F(m).fold(x * x, (5, 5), 3, padding=1, stride=2), [(1, 18, 9)]),
}

_IDX = np.array([[0, 2, 1], [3, 2, 2]])


def _bag(mode, reduce):
    """embedding_bag over the bags of ``_IDX``; PyTorch has no double backward of embedding_bag (its
    ``_embedding_bag_backward`` is not differentiable), so its side is the same bags by embedding + ``reduce``."""
    def fn(m, w, *psw):
        idx = m.tensor(_IDX)
        if m is torch:
            rows = F(m).embedding(idx, w)
            return reduce(rows * psw[0][..., None] if psw else rows)
        return F(m).embedding_bag(idx, w, mode=mode, per_sample_weights=psw[0] if psw else None)
    return fn


def _scaled_by_freq(m, w):
    """embedding(scale_grad_by_freq=True). PyTorch's double backward of it drops the scaling (its gradient of the
    weight gradient with respect to the output gradient is not divided by the counts, though the weight gradient
    is), so its side divides the gradient of each row by its count itself, the same first-order gradient."""
    idx = m.tensor(_IDX)
    if m is ember:
        return F(m).embedding(idx, w, scale_grad_by_freq=True)
    counts = m.bincount(idx.reshape(-1), minlength=w.shape[0]).clamp(min=1).to(w.dtype)[:, None]
    return F(m).embedding(idx, w / counts + (w - w / counts).detach())


def _dropout():
    """dropout's mask is random: PyTorch's side multiplies by the mask ember drew (ember runs first)."""
    drawn = {}

    def fn(m, x):
        if m is ember:
            ember.manual_seed(0)
            y = F(m).dropout(x * x, 0.5)
            drawn["mask"] = (y.detach().numpy() != 0) * 2.0
            return y
        return x * x * m.tensor(drawn["mask"])
    return fn


RESHAPE = {
    "dropout": (_dropout(), [(4, 5)]),
    "embedding": (lambda m, w: F(m).embedding(m.tensor(_IDX), w), [(4, 3)]),
    "embedding_padding_idx": (lambda m, w: F(m).embedding(m.tensor(_IDX), w * w, padding_idx=2), [(4, 3)]),
    "embedding_scale_grad_by_freq": (_scaled_by_freq, [(5, 2)]),
    "embedding_bag_sum": (_bag("sum", lambda r: r.sum(1)), [(4, 3)]),
    "embedding_bag_mean": (_bag("mean", lambda r: r.mean(1)), [(4, 3)]),
    "embedding_bag_max": (_bag("max", lambda r: r.amax(1)), [(4, 3)]),
    "embedding_bag_per_sample_weights": (_bag("sum", lambda r: r.sum(1)), [(4, 3), (2, 3)]),
    "pad_constant": (lambda m, x: F(m).pad(x, (1, 2, 0, 1), value=0.5), [(2, 3, 4, 4)]),
    "pad_constant_negative": (lambda m, x: F(m).pad(x * x, (-1, 2, 1, -2)), [(2, 3, 4, 4)]),
    "pad_reflect_1d": (lambda m, x: F(m).pad(x, (2, 1), mode="reflect"), [(2, 3, 5)]),
    "pad_reflect_2d": (lambda m, x: F(m).pad(x * x, (1, 2, 0, 1), mode="reflect"), [(2, 3, 4, 4)]),
    "pad_replicate_3d": (lambda m, x: F(m).pad(x, (1, 0, 2, 1, 1, 1), mode="replicate"), [(1, 2, 3, 3, 3)]),
    "pad_circular_2d": (lambda m, x: F(m).pad(x, (1, 2, 2, 1), mode="circular"), [(2, 3, 4, 4)]),
    "pad_reflect_negative": (lambda m, x: F(m).pad(x, (2, -1), mode="reflect"), [(2, 3, 5)]),
    "interpolate_nearest_2x": (lambda m, x: F(m).interpolate(x, scale_factor=2), [(2, 3, 4, 4)]),
    "interpolate_nearest_size_1d": (lambda m, x: F(m).interpolate(x * x, size=7), [(2, 3, 4)]),
    "interpolate_nearest_exact": (lambda m, x: F(m).interpolate(x, size=(3, 5), mode="nearest-exact"),
                                  [(1, 2, 4, 4)]),
    "interpolate_linear_align": (lambda m, x: F(m).interpolate(x, size=7, mode="linear", align_corners=True),
                                 [(2, 3, 4)]),
    "interpolate_bilinear": (lambda m, x: F(m).interpolate(x * x, size=(5, 7), mode="bilinear"), [(2, 3, 4, 4)]),
    "interpolate_bilinear_down_antialias": (
        lambda m, x: F(m).interpolate(x, size=(3, 2), mode="bilinear", antialias=True), [(1, 2, 7, 6)]),
    "interpolate_bicubic": (lambda m, x: F(m).interpolate(x, scale_factor=1.5, mode="bicubic"), [(1, 2, 4, 4)]),
    "interpolate_trilinear": (lambda m, x: F(m).interpolate(x, size=(3, 4, 2), mode="trilinear"),
                              [(1, 2, 2, 3, 3)]),
    "interpolate_area": (lambda m, x: F(m).interpolate(x, size=(3, 2), mode="area"), [(2, 2, 7, 5)]),
    "pixel_shuffle": (lambda m, x: F(m).pixel_shuffle(x * x, 2), [(2, 8, 3, 3)]),
    "pixel_unshuffle": (lambda m, x: F(m).pixel_unshuffle(x, 2), [(2, 2, 4, 6)]),
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


def _mlp(lib, params, x):
    w1, b1, w2, b2 = params
    return lib.nn.functional.linear(lib.tanh(lib.nn.functional.linear(x, w1, b1)), w2, b2)


def _maml_meta_grads(lib, arrays):
    """MAML: one inner SGD step on a support set (create_graph), the query loss's gradients of the initial weights."""
    params = [lib.tensor(a, requires_grad=True) for a in arrays[:4]]
    xs, ys, xq, yq = (lib.tensor(a) for a in arrays[4:])
    inner = ((_mlp(lib, params, xs) - ys) ** 2).mean()
    grads = lib.autograd.grad(inner, params, create_graph=True)
    fast = [p - 0.1 * g for p, g in zip(params, grads)]
    ((_mlp(lib, fast, xq) - yq) ** 2).mean().backward()
    return [p.grad for p in params]


def _pinn_grads(lib, arrays):
    """A physics-informed loss: the residual of u'' = -sin(x) for u an MLP, u'' by two create_graph gradients."""
    params = [lib.tensor(a, requires_grad=True) for a in arrays[:4]]
    x = lib.tensor(arrays[4], requires_grad=True)
    u = _mlp(lib, params, x)
    (ux,) = lib.autograd.grad(u.sum(), x, create_graph=True)
    (uxx,) = lib.autograd.grad(ux.sum(), x, create_graph=True)
    ((uxx + lib.sin(x)) ** 2).mean().backward()
    return [p.grad for p in params]


@pytest.mark.parametrize("program", [_maml_meta_grads, _pinn_grads])
def test_maml_and_pinn_gradients_through_linear_layers_match_pytorch(program):
    rng = np.random.default_rng(11)
    shapes = [(8, 1), (8,), (1, 8), (1,), (6, 1), (6, 1), (5, 1), (5, 1)]
    arrays = [rng.standard_normal(s) for s in shapes]
    arrays = arrays[:5] if program is _pinn_grads else arrays
    for e, t in zip(program(ember, arrays), program(torch, arrays)):
        if t is None:  # (u'' does not depend on the output bias)
            assert e is None
        else:
            assert_close(e, t, atol=1e-10, rtol=1e-8)


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


@pytest.mark.parametrize("name", sorted(RESHAPE))
def test_embedding_padding_and_resampling_second_order_matches_pytorch(name):
    fn, specs = RESHAPE[name]
    check_second_order(fn, specs)


def test_interpolate_second_order_past_the_dense_size_matches_pytorch():
    """Axes longer than resample's dense limit take gathers first-order; create_graph takes the matrices."""
    check_second_order(lambda m, x: F(m).interpolate(x, size=700, mode="linear"), [(1, 1, 400)])


@pytest.mark.parametrize("fn", [lambda w: ember.nn.functional.embedding(ember.tensor([1, 2, 1]), w, sparse=True),
                                lambda w: ember.nn.functional.embedding_bag(ember.tensor([[1, 2]]), w, sparse=True)])
def test_a_sparse_embedding_gradient_under_create_graph_is_a_clear_error(fn):
    w = ember.randn(4, 3, requires_grad=True)
    with pytest.raises(HigherOrderError, match=r"sparse=True\) cannot be differentiated twice"):
        ember.autograd.grad(fn(w).sum(), w, create_graph=True)


def _grid_sample(**kw):
    # grid points spread past [-1, 1], so that border and reflection padding clamp and reflect some
    return lambda m, x, g: F(m).grid_sample(x * x, m.tanh(g) * 1.3, **kw)


GRID_SAMPLE = {
    "bilinear_zeros": (_grid_sample(align_corners=False), [(2, 2, 4, 5), (2, 3, 3, 2)]),
    "bilinear_border_align": (_grid_sample(padding_mode="border", align_corners=True), [(1, 2, 4, 4), (1, 3, 2, 2)]),
    "bilinear_reflection": (_grid_sample(padding_mode="reflection", align_corners=False),
                            [(1, 2, 4, 4), (1, 3, 3, 2)]),
    "nearest": (_grid_sample(mode="nearest", align_corners=False), [(1, 2, 4, 4), (1, 3, 3, 2)]),
    "bicubic": (_grid_sample(mode="bicubic", align_corners=False), [(1, 2, 4, 4), (1, 2, 3, 2)]),
    "bicubic_border": (_grid_sample(mode="bicubic", padding_mode="border", align_corners=True),
                       [(1, 2, 4, 4), (1, 2, 3, 2)]),
    "trilinear_5d": (_grid_sample(align_corners=False), [(1, 2, 3, 4, 3), (1, 2, 2, 2, 3)]),
    "affine_grid": (lambda m, x, t: F(m).grid_sample(x, F(m).affine_grid(t, (2, 2, 3, 4), align_corners=False),
                                                     align_corners=False), [(2, 2, 4, 4), (2, 2, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRID_SAMPLE))
def test_grid_sample_second_order_matches_pytorch(name):
    fn, specs = GRID_SAMPLE[name]
    check_second_order(fn, specs)

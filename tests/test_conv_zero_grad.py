"""A convolution's backward of an all-zero output gradient (``conv.zero_grads``: zeros without the products), as
under a WGAN-GP penalty, where LeakyReLU's second derivative passes zeros to the convolutions before it: the same
gradients as the products give and as PyTorch's, NaN where an infinity or a NaN meets the zeros, and the path
really taken."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import assert_close
from wgan_gp_step import critic_step

import ember
from ember.nn._ops import conv, conv_transpose

# (name, call, x shape, w shape): every layout ConvNd computes in, and the transposed convolution's two paths
CASES = [
    ("nchw", lambda f, x, w, b: f.conv2d(x, w, b, padding=1), (2, 3, 9, 9), (4, 3, 3, 3)),
    ("batch_last_stride2", lambda f, x, w, b: f.conv2d(x, w, b, stride=2, padding=1), (3, 4, 8, 8), (6, 4, 4, 4)),
    ("winograd", lambda f, x, w, b: f.conv2d(x, w, b, padding=1), (2, 8, 24, 24), (8, 8, 3, 3)),
    ("groups_1d", lambda f, x, w, b: f.conv1d(x, w, b, groups=2), (2, 4, 7), (6, 2, 3)),
    ("conv3d", lambda f, x, w, b: f.conv3d(x, w, b, padding=1), (1, 2, 4, 4, 4), (3, 2, 3, 3, 3)),
    ("transposed", lambda f, x, w, b: f.conv_transpose2d(x, w, b, stride=2, padding=1), (2, 6, 5, 5), (6, 3, 4, 4)),
    ("transposed_winograd", lambda f, x, w, b: f.conv_transpose2d(x, w, b, stride=2, padding=1),
     (2, 16, 8, 8), (16, 8, 4, 4)),
]


def _grads(lib, call, arrays, upstream=None):
    x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
    out = call(lib.nn.functional, x, w, b)
    out.backward(lib.zeros_like(out) if upstream is None else lib.tensor(upstream))
    return [t.grad for t in (x, w, b)]


def _arrays(x_shape, w_shape, dtype, bias_size, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in (x_shape, w_shape, (bias_size,))]


def _bias_size(name, w_shape):
    return w_shape[1] if name.startswith("transposed") else w_shape[0]


@pytest.fixture
def taken(monkeypatch):
    """The calls of ``zero_grads`` that returned the zeros (ConvNd's and ConvTransposeNd's)."""
    hits = []

    def spy(*args):
        zeros = real(*args)
        hits.append(zeros is not None)
        return zeros

    real = conv.zero_grads
    monkeypatch.setattr(conv, "zero_grads", spy)
    monkeypatch.setattr(conv_transpose, "zero_grads", spy)
    return hits


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, call, x_shape, w_shape", CASES, ids=[c[0] for c in CASES])
def test_zero_output_gradient_gives_pytorchs_zeros(name, call, x_shape, w_shape, dtype, taken, monkeypatch):
    arrays = _arrays(x_shape, w_shape, dtype, _bias_size(name, w_shape))
    ours = _grads(ember, call, arrays)
    assert taken == [True]
    theirs = _grads(torch, call, arrays)
    monkeypatch.setattr(conv, "zero_grads", lambda *args: None)  # the products, as before the shortcut
    monkeypatch.setattr(conv_transpose, "zero_grads", lambda *args: None)
    products = _grads(ember, call, arrays)
    for e, t, p in zip(ours, theirs, products):
        a, b, c = e.numpy(), t.detach().numpy(), p.numpy()
        assert a.dtype == b.dtype == c.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(c))  # +0.0, as the GEMMs sum it
        assert a.flags.c_contiguous


NON_FINITE = [  # (stride 2 in (N, C, H, W): ember's stride-1 input gradient, a convolution of the zero-padded g,
    # also sends a NaN of w to positions no output reaches, where PyTorch's does not; not this file's concern)
    ("nchw", lambda f, x, w, b: f.conv2d(x, w, b, stride=2, padding=1), (2, 3, 20, 20), (4, 3, 3, 3)), CASES[1],
    CASES[5]]


@pytest.mark.parametrize("which", [0, 1])  # an infinity in x (w's gradient NaN there), a NaN in w (x's)
@pytest.mark.parametrize("name, call, x_shape, w_shape", NON_FINITE, ids=[c[0] for c in NON_FINITE])
def test_zero_output_gradient_with_a_non_finite_operand_gives_pytorchs_nans(name, call, x_shape, w_shape, which,
                                                                             taken):
    arrays = _arrays(x_shape, w_shape, np.float64, _bias_size(name, w_shape))
    arrays[which][(0,) * len(arrays[which].shape)] = np.inf if which == 0 else np.nan
    ours, theirs = _grads(ember, call, arrays), _grads(torch, call, arrays)
    assert taken == [False]
    for e, t in zip(ours, theirs):
        np.testing.assert_array_equal(np.isnan(e.numpy()), np.isnan(t.detach().numpy()))
        assert_close(e, t, atol=1e-12, rtol=1e-12)


def test_a_nonzero_gradient_with_zeros_at_the_sampled_elements_takes_the_products(taken):
    x_shape, w_shape = (2, 3, 9, 9), (4, 3, 3, 3)
    arrays = _arrays(x_shape, w_shape, np.float64, 4)
    upstream = np.zeros((2, 4, 9, 9))
    upstream[1, 2, 4, 5] = -1.5  # one element, none of the nine read first
    call = CASES[0][1]
    ours, theirs = _grads(ember, call, arrays, upstream), _grads(torch, call, arrays, upstream)
    assert taken == [False]
    for e, t in zip(ours, theirs):
        assert_close(e, t, atol=1e-12, rtol=1e-12)


def _wgan_gp_step(lib, arrays):
    """One WGAN-GP critic step's gradients (critic of convolutions and nn.LeakyReLU, bench/workloads.py's): the
    penalty's double backward sends LeakyReLU's zero second derivative into the critic's forward on x_hat."""
    return critic_step(lib, lambda nn: nn.Sequential(
        nn.Conv2d(3, 4, 4, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(4, 8, 4, stride=2, padding=1),
        nn.LeakyReLU(0.2), nn.Conv2d(8, 8, 3, padding=1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(8 * 4 * 4, 1),
    ), arrays)


def test_wgan_gp_critic_step_matches_pytorch_and_skips_the_zero_backwards(taken):
    rng = np.random.default_rng(3)
    shapes = [(4, 3, 16, 16), (4, 3, 16, 16), (4, 1, 1, 1), (4, 3, 4, 4), (4,), (8, 4, 4, 4), (8,), (8, 8, 3, 3),
              (8,), (1, 128), (1,)]
    arrays = [(rng.standard_normal(s) * 0.3).astype(np.float32) for s in shapes]
    arrays[2] = rng.random((4, 1, 1, 1)).astype(np.float32)
    ours, theirs = _wgan_gp_step(ember, arrays), _wgan_gp_step(torch, arrays)
    assert sum(taken) == 3  # the three convolutions of the critic on x_hat, whose gradients are zeros
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())  # x_hat's: zeros, as PyTorch's
    for e, t in zip(ours, theirs):
        assert_close(e, t, atol=1e-5, rtol=1e-4)

"""``policy.inter_op`` for a batch-last im2col convolution's backward: its input gradient (GEMMs, col2im, the copy
back to (N, C, *in)) whole on ember's worker while its weight gradient (GEMMs and their sum) runs whole on the
calling thread (``_parallel.side_by_side``): one hand-off where the split of both and col2im's took two. The same
bits as the split, the gradients in their places, PyTorch's values; and a WGAN-GP critic step's parameter gradients
(a double backward beside these first-order backwards) bit for bit with it off."""

import threading

import numpy as np
import pytest
import torch
from wgan_gp_step import critic_step

import ember
from ember import _parallel
from ember._kernels import policy
from ember.nn._ops import conv

# convolutions of at most ``policy.batch_last_max_positions`` output positions: the batch-last im2col path
CASES = [
    ((16, 16, 16, 16), (32, 16, 4, 4), {"stride": 2, "padding": 1}),  # 8 x 8 out: the critic's second layer
    ((16, 32, 8, 8), (24, 32, 4, 4), {"stride": 2, "padding": 1}),    # 4 x 4 out: its third
    ((8, 12, 9, 9), (16, 6, 3, 3), {"stride": 2, "groups": 2}),       # groups, no padding
]


def _grads(x, w, b, g, kwargs):
    ex, ew, eb = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
    ember.nn.functional.conv2d(ex, ew, eb, **kwargs).backward(ember.tensor(g))
    return ex.grad.numpy(), ew.grad.numpy(), eb.grad.numpy()


@pytest.mark.parametrize("x_shape,w_shape,kwargs", CASES)
def test_input_and_weight_gradients_side_by_side_same_bits(threads, x_shape, w_shape, kwargs, monkeypatch):
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal(x_shape, dtype=np.float32), rng.standard_normal(w_shape, dtype=np.float32)
    b = rng.standard_normal(w_shape[0], dtype=np.float32)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    out = torch.nn.functional.conv2d(tx, tw, tb, **kwargs)
    g = rng.standard_normal(tuple(out.shape), dtype=np.float32)
    out.backward(torch.tensor(g))
    monkeypatch.setattr(policy, "min_parallel_elements", 1 << 10)  # (two threads from these small inputs on)
    ran_on = []  # the thread of each of the two computations
    real = conv.side_by_side

    def noted(fn):
        def run():
            ran_on.append(threading.get_ident())
            return fn()
        return run

    monkeypatch.setattr(conv, "side_by_side", lambda first, second, elements:
                        real(noted(first), noted(second), elements))
    ember.set_num_threads(2)
    got = {}
    for inter_op in (False, True):
        with policy.override(inter_op=inter_op):
            got[inter_op] = _grads(x, w, b, g, kwargs)
    assert len(ran_on) == 2 and ran_on[0] != ran_on[1]  # with inter_op on only, on two threads
    for one, two, want in zip(got[False], got[True], (tx.grad, tw.grad, tb.grad)):
        assert one.shape == want.shape and two.flags.c_contiguous
        np.testing.assert_array_equal(two, one)
        np.testing.assert_allclose(two, want.numpy(), rtol=1e-4, atol=1e-4)
    ember.set_num_threads(1)  # and one thread's bits: each whole in turn
    with policy.override(inter_op=True):
        for one, two in zip(_grads(x, w, b, g, kwargs), got[True]):
            np.testing.assert_array_equal(one, two)


def test_side_by_side_is_one_hand_off(threads, monkeypatch):
    """Two gradients, one hand-off to the worker (the split of both and col2im's take one each)."""
    ember.set_num_threads(2)
    monkeypatch.setattr(policy, "min_parallel_elements", 1 << 10)
    x_shape, w_shape, kwargs = CASES[0]
    ex, ew = ember.randn(*x_shape, requires_grad=True), ember.randn(*w_shape, requires_grad=True)
    g = ember.randn(*ember.nn.functional.conv2d(ex, ew, **kwargs).shape)
    handed = []
    real = _parallel._Worker.submit
    monkeypatch.setattr(_parallel._Worker, "submit", lambda self, *a: handed.append(a) or real(self, *a))
    counts = {}
    for inter_op in (False, True):
        out = ember.nn.functional.conv2d(ex, ew, **kwargs)
        handed.clear()
        with policy.override(inter_op=inter_op):
            out.backward(g)
        counts[inter_op] = len(handed)
    assert counts[True] == 1 and counts[False] >= 2  # (off: the products' split, col2im's, the copy back's)


def _critic_step_grads(lib, arrays):
    """The WGAN-GP critic step's loss and gradients as arrays, float32: the benchmark's critic, narrower."""
    return [t.detach().numpy() for t in critic_step(lib, lambda nn: nn.Sequential(
        nn.Conv2d(3, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
        nn.Conv2d(8, 16, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
        nn.Conv2d(16, 32, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 1),
    ), arrays)]


def test_wgan_gp_critic_step_side_by_side_same_bits_and_pytorchs_values(threads, monkeypatch):
    rng = np.random.default_rng(11)
    batch = 16
    arrays = [rng.standard_normal((batch, 3, 32, 32), dtype=np.float32) for _ in range(2)]
    arrays.append(rng.uniform(0, 1, (batch, 1, 1, 1)).astype(np.float32))
    for shape in ((8, 3, 4, 4), (8,), (16, 8, 4, 4), (16,), (32, 16, 4, 4), (32,), (1, 512), (1,)):
        arrays.append((rng.standard_normal(shape) * 0.2).astype(np.float32))
    want = _critic_step_grads(torch, arrays)
    monkeypatch.setattr(policy, "min_parallel_elements", 1 << 10)
    ember.set_num_threads(2)
    sides = []
    real = conv.side_by_side
    monkeypatch.setattr(conv, "side_by_side", lambda *a: sides.append(1) or real(*a))
    got = {}
    for inter_op in (False, True):
        with policy.override(inter_op=inter_op):
            got[inter_op] = _critic_step_grads(ember, arrays)
    # the second and third layers' backward of the critics on fake and real images take both gradients side by side
    # (the interpolated images' critic is differentiated through the penalty's recorded transposed convolutions)
    assert len(sides) == 4
    for one, two, t in zip(got[False], got[True], want):
        np.testing.assert_array_equal(two, one)
        # float32 sums in other orders than PyTorch's: within 1e-5 of each gradient's largest element (x_hat's is
        # zeros: LeakyReLU's second derivative)
        np.testing.assert_allclose(two, t, rtol=1e-4, atol=1e-5 * np.abs(t).max())

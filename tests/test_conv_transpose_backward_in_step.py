"""A transposed convolution's backward (im2col path): the convolution of g and the weight gradient from g's columns
computed row by row in one split over ember's threads (``conv.forward_and_weight_grad``, ``run_rows_in_step``): the
bits of the two computed in turn, at one, two and three threads, and PyTorch's values."""

import numpy as np
import pytest
import torch

import ember
from ember import _parallel
from ember._kernels import policy
from ember.nn._ops import conv
from ember.nn._ops.conv_layout import batch_last_padded, to_batch_last


def test_run_rows_in_step_runs_each_row_of_the_first_before_the_same_row_of_the_second(threads):
    ember.set_num_threads(2)
    written = np.zeros(64, dtype=np.int64)
    read = np.zeros(64, dtype=np.int64)

    def first(lo, hi):
        written[lo:hi] += 1

    def second(lo, hi):
        read[lo:hi] = written[lo:hi]  # a row not written yet reads 0

    _parallel.run_rows_in_step(_parallel.Rows(first, 64, 10**7), _parallel.Rows(second, 64, 10**7))
    assert (written == 1).all() and (read == 1).all()


# (x, w, stride, padding, output_padding, groups): the WGAN-GP critic's 4 x 4 stride-2 layers transposed
# (row GEMMs), a 1-d one (one GEMM over all positions), a grouped one, a 5 x 5 stride-1 one (not Winograd),
# output_padding (a cropped g)
CASES = [
    ((8, 64, 4, 4), (64, 32, 4, 4), 2, 1, 0, 1),
    ((8, 32, 8, 8), (32, 3, 4, 4), 2, 1, 0, 1),
    ((6, 8, 20), (8, 6, 3), 2, 1, 1, 1),
    ((4, 8, 6, 6), (8, 3, 3, 3), 2, 0, 1, 2),
    ((4, 6, 7, 7), (6, 5, 5, 5), 1, 2, 0, 1),
]


@pytest.mark.parametrize("case", CASES)
def test_transposed_convolution_gradients_in_step_same_bits_and_pytorchs_values(threads, case, monkeypatch):
    x_shape, w_shape, stride, padding, output_padding, groups = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    fn = {3: "conv_transpose1d", 4: "conv_transpose2d"}[len(x_shape)]
    kw = {"stride": stride, "padding": padding, "output_padding": output_padding, "groups": groups}
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tout = getattr(torch.nn.functional, fn)(tx, tw, **kw)
    g = rng.standard_normal(tout.shape).astype(np.float32)
    tout.backward(torch.tensor(g))
    fused = []
    real = conv.run_rows_in_step
    monkeypatch.setattr(conv, "run_rows_in_step", lambda *a: fused.append(a) or real(*a))
    got = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        ex, ew = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
        # (the 4 x 4 stride-2 ones take Winograd on g's phases otherwise: tests/test_conv_phases.py)
        with policy.override(strided_winograd=False):
            getattr(ember.nn.functional, fn)(ex, ew, **kw).backward(ember.tensor(g))
        got.append((ex.grad.numpy(), ew.grad.numpy()))
    assert len(fused) == 3  # the in-step path, at every count
    for gx, gw in got:
        np.testing.assert_array_equal(gx, got[0][0])
        np.testing.assert_array_equal(gw, got[0][1])
    np.testing.assert_allclose(got[0][0], tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[0][1], tw.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [1, 2])
def test_forward_and_weight_grad_gives_the_bits_of_the_two_in_turn(threads, n):
    """Against the way before: ``forward_batch_last`` then ``weight_grad`` of its columns."""
    ember.set_num_threads(n)
    rng = np.random.default_rng(1)
    g = rng.standard_normal((16, 64, 8, 8)).astype(np.float32)  # the transposed convolution's output gradient
    x = rng.standard_normal((16, 128, 4, 4)).astype(np.float32)  # its input
    w = rng.standard_normal((128, 64, 4, 4)).astype(np.float32)  # conv(g, w): 64 -> 128 channels, stride 2
    gpad, xb = batch_last_padded(g, ((1, 1), (1, 1))), to_batch_last(x)
    out, gw = conv.forward_and_weight_grad(gpad, w, xb, (2, 2), (1, 1), 1)
    want_out, cols, layout = conv.forward_batch_last(gpad, w, (2, 2), (1, 1), 1, True)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(gw, conv.weight_grad(cols, xb, w.shape, 1, layout))

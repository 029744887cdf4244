"""The DCGAN transposed convolution's Winograd path (ember/nn/_ops/conv_transpose_winograd.py) at two threads: its
forward and backward each hand work to ember's worker three times (the input or output-gradient transform with its
layout copy and the weight transform; the GEMM stacks; the output or input-gradient transform with its copy out and
the weight gradient's GEMM), where one split per pass took eight or nine, each a wake of a sleeping worker on an idle
machine. The values against PyTorch and the same bits as one thread (and as NumPy's reference kernels:
``tests/test_conv_transpose_winograd.py``)."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember import _parallel
from ember._kernels import policy
from ember.nn._ops import conv_transpose_winograd as ctw


def _layer_run(m, x, w, b, up):
    tx, tw, tb = (m.tensor(a, requires_grad=True) for a in (x, w, b))
    out = m.nn.functional.conv_transpose2d(tx, tw, tb, stride=2, padding=1)
    out.backward(m.tensor(up))
    return [t.detach().numpy() for t in (out, tx.grad, tw.grad, tb.grad)]


@pytest.fixture
def layer(monkeypatch):
    """(x, w, b, up) of a layer that takes the path and splits every pass: 12 -> 10 channels, 10 x 7 inputs
    (padded to whole tiles), OpenBLAS's blocks as at two OpenBLAS threads (the weight transform's and the weight
    gradient's GEMMs in blocks)."""
    monkeypatch.setattr(ctw, "_MIN_SAVING", 0)
    monkeypatch.setattr(policy, "transposed_winograd_min_channels", 0)
    monkeypatch.setattr(policy, "transposed_winograd_min_work", 0)
    monkeypatch.setattr(policy, "min_parallel_elements", 1 << 10)
    monkeypatch.setattr(policy, "blas_threads", 2)
    monkeypatch.setattr(policy, "blas_threaded_mnk", 1 << 10)
    monkeypatch.setattr(policy, "omp_chunks", False)  # ember's pool's workers (under omp: numba's threads)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 12, 10, 7)).astype(np.float32)
    w = rng.standard_normal((12, 10, 4, 4)).astype(np.float32)
    b = rng.standard_normal(10).astype(np.float32)
    up = rng.standard_normal((6, 10, 20, 14)).astype(np.float32)
    return x, w, b, up


@pytest.mark.parametrize("needs_x", [True, False])
def test_three_hand_offs_each_way(threads, monkeypatch, layer, needs_x):
    ember.set_num_threads(2)
    submitted, phase = [], ["forward"]
    real = _parallel._Worker.submit
    monkeypatch.setattr(_parallel._Worker, "submit", lambda self, *a: submitted.append(phase[0]) or real(self, *a))
    for name in ("forward", "backward"):
        fn = getattr(ctw, name)
        monkeypatch.setattr(ctw, name, lambda *a, _fn=fn, _name=name: phase.__setitem__(0, _name) or _fn(*a))
    x, w, b, up = layer
    tx, tw, tb = ember.tensor(x, requires_grad=needs_x), ember.tensor(w, requires_grad=True), ember.tensor(b)
    out = ember.nn.functional.conv_transpose2d(tx, tw, tb, stride=2, padding=1)
    assert submitted == ["forward"] * 3
    out.backward(ember.tensor(up))
    # without the input gradient: the transform of g (its copy in the split) and the weight gradient's two GEMMs
    assert submitted[3:] == ["backward"] * (3 if needs_x else 2)
    assert (tx.grad is not None) is needs_x


def test_two_threads_as_pytorch_and_one_thread(threads, layer):
    results = []
    for n in (1, 2):
        ember.set_num_threads(n)
        results.append(_layer_run(ember, *layer))
    for a, r in zip(results[1], results[0]):
        np.testing.assert_array_equal(a, r)
    for a, t in zip(results[1], _layer_run(torch, *layer)):
        assert_close(a, t, atol=2e-4, rtol=1e-4)


def test_numpy_kernels_split_the_same(threads, layer):
    """The NumPy reference transforms and copies (``EMBER_KERNELS=numpy``) run in the same splits: the same bits
    at two threads as at one."""
    results = []
    with policy.override(compiled=False):
        for n in (1, 2):
            ember.set_num_threads(n)
            results.append(_layer_run(ember, *layer))
    for a, r in zip(results[1], results[0]):
        np.testing.assert_array_equal(a, r)

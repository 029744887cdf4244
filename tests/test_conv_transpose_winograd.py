"""The DCGAN transposed convolution (4x4 kernel, stride 2, padding 1) by Winograd F(4, 2)
(ember/nn/_ops/conv_transpose_winograd.py) against PyTorch: values and every gradient, sizes that fill whole tiles
and sizes padded to them, which inputs need gradients, double backward; its compiled transforms against the NumPy
reference (the same bits), and the same bits at any thread count."""

import numpy as np
import pytest
import torch
from oracle import assert_close, check

import ember
from ember._kernels import policy
from ember.nn._ops import conv_transpose_winograd as ctw

TOL = {np.float32: dict(atol=2e-4, rtol=1e-4), np.float64: dict(atol=1e-10, rtol=1e-10)}
compiled_only = pytest.mark.skipif(not policy.use_compiled(), reason="numba is not installed (or EMBER_KERNELS=numpy)")


@pytest.fixture
def traced(monkeypatch):
    """Every size takes the path (``_MIN_SAVING`` and the policy's size thresholds 0); the list of
    ``forward``/``backward`` calls it made."""
    monkeypatch.setattr(ctw, "_MIN_SAVING", 0)
    monkeypatch.setattr(policy, "transposed_winograd_min_channels", 0)
    monkeypatch.setattr(policy, "transposed_winograd_min_work", 0)
    calls = []
    for name in ("forward", "backward"):
        fn = getattr(ctw, name)
        monkeypatch.setattr(ctw, name, lambda *a, _fn=fn, _name=name: calls.append(_name) or _fn(*a))
    return calls


def _ct(m, x, w, b=None):
    return m.nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x,w", [
    ((3, 5, 8, 8), (5, 4, 4, 4)),    # whole tiles
    ((2, 3, 4, 12), (3, 6, 4, 4)),   # one tile row
    ((2, 3, 5, 7), (3, 2, 4, 4)),    # padded to whole tiles
    ((2, 2, 1, 1), (2, 3, 4, 4)),    # one input position: a tile of padding
    ((3, 6, 9), (3, 2, 4, 4)),       # unbatched
])
def test_values_and_gradients_as_pytorch(traced, dtype, x, w):
    check(_ct, [x, w, (w[1],)], dtype=dtype, **TOL[dtype])
    check(_ct, [x, w], dtype=dtype, **TOL[dtype])  # no bias
    assert traced == ["forward", "backward"] * 2


def test_module_dcgan_layer(traced):
    """nn.ConvTranspose2d(128, 64, 4, 2, 1) at the benchmark's size: float32 sums of 512 terms, by scale."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 128, 16, 16)).astype(np.float32)
    up = rng.standard_normal((8, 64, 32, 32)).astype(np.float32)
    w, b = (rng.standard_normal((128, 64, 4, 4)) / 20).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    results = []
    for m in (ember, torch):
        layer = m.nn.ConvTranspose2d(128, 64, 4, 2, 1)
        layer.weight.data, layer.bias.data = m.tensor(w), m.tensor(b)
        t = m.tensor(x, requires_grad=True)
        out = layer(t)
        out.backward(m.tensor(up))
        results.append((out, t.grad, layer.weight.grad, layer.bias.grad))
    for a, t in zip(*results):
        assert_close(a, t, atol=1e-5 * float(t.detach().abs().max()), rtol=1e-4)
    assert traced == ["forward", "backward"]


@pytest.mark.parametrize("needs", [(True, False, False), (False, True, False), (False, False, True),
                                   (False, True, True)])
def test_only_the_gradients_asked_for(traced, needs):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in ((2, 3, 4, 8), (3, 2, 4, 4), (2,))]
    up = rng.standard_normal((2, 2, 8, 16))
    grads = []
    for m in (ember, torch):
        ts = [m.tensor(a, requires_grad=n) for a, n in zip(arrays, needs)]
        _ct(m, *ts).backward(m.tensor(up))
        grads.append([t.grad for t in ts])
    for a, t in zip(*grads):
        assert (a is None) == (t is None)
        if t is not None:
            assert_close(a, t, 1e-10, 1e-10)


def test_double_backward_as_pytorch(traced):
    """create_graph: the first backward records convolutions of g (the node's own kernels cannot); the gradient
    penalty's second derivative into the weight as PyTorch's."""
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((2, 3, 4, 4)), rng.standard_normal((3, 2, 4, 4)), rng.standard_normal(2)
    results = []
    for m in (ember, torch):
        tx, tw, tb = (m.tensor(a, requires_grad=True) for a in (x, w, b))
        out = _ct(m, tx, tw, tb)
        (gx,) = m.autograd.grad((out ** 2).sum(), tx, create_graph=True)
        (gw,) = m.autograd.grad((gx ** 2).sum(), tw)
        results.append((out, gx, gw))
    for a, t in zip(*results):
        assert_close(a, t, 1e-9, 1e-9)
    assert traced[0] == "forward"


@pytest.mark.parametrize("hw, taken", [((4, 4), True), ((8, 8), True), ((16, 16), True), ((4, 64), True),
                                       ((5, 5), False), ((6, 6), False), ((2, 2), False), ((1, 1), False)])
def test_taken_where_it_saves_work(monkeypatch, hw, taken):
    """Winograd where its products are at most 1/1.5 of direct arithmetic's (tiles of 4x4 inputs); col2im else,
    and everywhere with ``policy.transposed_winograd`` off, and for other configurations."""
    monkeypatch.setattr(policy, "transposed_winograd_min_channels", 0)
    monkeypatch.setattr(policy, "transposed_winograd_min_work", 0)
    x, w = np.zeros((2, 3, *hw), np.float32), np.zeros((3, 5, 4, 4), np.float32)
    dcgan = ((2, 2), ((1, 1), (1, 1)), (1, 1), 1)
    assert ctw.applies(x, w, *dcgan) is taken
    with policy.override(transposed_winograd=False):
        assert not ctw.applies(x, w, *dcgan)
    big = np.zeros((2, 4, 16, 16), np.float32)
    assert not ctw.applies(big, np.zeros((4, 5, 4, 4), np.float32), (2, 2), ((2, 2), (2, 2)), (1, 1), 1)
    assert not ctw.applies(big, np.zeros((4, 5, 4, 4), np.float32), (2, 2), ((1, 0), (1, 0)), (1, 1), 1)  # out pad
    assert not ctw.applies(big, np.zeros((4, 5, 3, 3), np.float32), (2, 2), ((1, 1), (1, 1)), (1, 1), 1)
    assert not ctw.applies(big, np.zeros((4, 2, 4, 4), np.float32), (2, 2), ((1, 1), (1, 1)), (1, 1), 2)
    assert not ctw.applies(big.astype(np.float16), np.zeros((4, 5, 4, 4), np.float16), *dcgan)


@pytest.mark.parametrize("x, o, taken", [
    ((32, 128, 16, 16), 64, True),    # the benchmark's layer
    ((64, 512, 4, 4), 256, True),     # a DCGAN generator's first strided layer
    ((32, 128, 8, 8), 64, True),
    ((8, 128, 8, 8), 64, False),      # too little work: the transforms' passes would not pay
    ((64, 64, 32, 32), 3, False),     # a 3-channel output layer: 100 GEMMs of 3 rows
    ((16, 32, 4, 4), 16, False),      # a small layer
])
def test_taken_for_layers_large_enough(x, o, taken):
    """The shipped size thresholds: Winograd for wide, large layers (where it was measured faster), col2im for
    small ones and narrow outputs."""
    w = np.zeros((x[1], o, 4, 4), np.float32)
    assert ctw.applies(np.zeros(x, np.float32), w, (2, 2), ((1, 1), (1, 1)), (1, 1), 1) is taken


def _run(x, w, b, up):
    tx, tw, tb = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
    out = _ct(ember, tx, tw, tb)
    out.backward(ember.tensor(up))
    return [out.detach().numpy(), tx.grad.numpy(), tw.grad.numpy(), tb.grad.numpy()]


def _data(shape, o, dtype, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((shape[1], o, 4, 4)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    up = rng.standard_normal((shape[0], o, 2 * shape[2], 2 * shape[3])).astype(dtype)
    return x, w, b, up


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 6, 8, 8), (3, 4, 5, 7)])
def test_compiled_transforms_same_bits_as_numpy(traced, monkeypatch, dtype, shape):
    from ember._kernels import conv_transpose as kernels

    calls = []
    for name in ("tile", "untile"):
        fn = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *a, _fn=fn, _name=name: calls.append(_name) or _fn(*a))
    data = _data(shape, 5, dtype)
    with policy.override(compiled=True):
        fast = _run(*data)
    with policy.override(compiled=False):
        ref = _run(*data)
    assert set(calls) == {"tile", "untile"}
    for a, r in zip(fast, ref):
        assert a.dtype == r.dtype and a.shape == r.shape
        np.testing.assert_array_equal(a, r)


@pytest.mark.parametrize("blas_threads,one_blas", [(1, True), (2, True), (2, False)])
def test_same_bits_at_1_2_3_threads(threads, traced, monkeypatch, blas_threads, one_blas):
    """Transforms split by rows and the GEMM stack by product (with OpenBLAS set to one thread, or in blocks it keeps
    on one thread when it has several): the same bits for any count of ember's threads."""
    monkeypatch.setattr(policy, "blas_threads", blas_threads)
    monkeypatch.setattr(policy, "one_blas_thread", one_blas)
    monkeypatch.setattr(policy, "min_parallel_elements", 1 << 10)
    data = _data((8, 16, 8, 8), 32, np.float32)
    results = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        results.append(_run(*data))
    for other in results[1:]:
        for a, r in zip(other, results[0]):
            np.testing.assert_array_equal(a, r)

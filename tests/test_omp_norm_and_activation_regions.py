"""LayerNorm, RMSNorm, GELU and SiLU as one region on numba's OpenMP threads (``policy.omp``), each form the region
kernels take: with and without a weight and a bias, float32 and float64, forward and every gradient, against
PyTorch and bit for bit against one thread. The region forms are separate calls (``kernel.parallel`` with its own
arguments: LayerNorm's gradient is told to centre, RMSNorm's not), so a wrong argument there leaves every serial
test passing; no other test but tests/test_omp_kernels.py's transformer block (one LayerNorm, one RMSNorm, both
with weights, float32) turns ``policy.omp`` on."""

import numpy as np
import pytest
import torch

import ember
from ember._kernels import _omp, policy

pytestmark = pytest.mark.skipif(not (policy.use_compiled() and _omp.available()),
                                reason="numba's omp threading layer is not available here (no libgomp.so.1?)")


def _layer_norm(m, x, w, b):
    return m.nn.functional.layer_norm(x, x.shape[-1:], w, b, 1e-5)


def _rms_norm(m, x, w, b):
    return m.nn.functional.rms_norm(x, x.shape[-1:], w, 1e-5)


def _gelu(m, x, w, b):
    return m.nn.functional.gelu(x)


def _silu(m, x, w, b):
    return m.nn.functional.silu(x)


CASES = {"layer_norm": (_layer_norm, True, True), "layer_norm without bias": (_layer_norm, True, False),
         "layer_norm without affine": (_layer_norm, False, False), "rms_norm": (_rms_norm, True, False),
         "rms_norm without weight": (_rms_norm, False, False), "gelu": (_gelu, False, False),
         "silu": (_silu, False, False)}


@pytest.fixture
def omp_requests(monkeypatch):
    """The thread counts asked of numba's OpenMP layer during the test (empty while no op took a region)."""
    calls = []
    use = _omp.use_threads
    monkeypatch.setattr(_omp, "use_threads", lambda n: (calls.append(n), use(n)))
    return calls


def _run(m, fn, x_np, g_np, with_w, with_b):
    """The output and the gradients of the input, the weight and the bias, as float64 NumPy arrays (None where
    there is no such argument)."""
    f = x_np.shape[-1]
    x = m.tensor(x_np, requires_grad=True)
    w = m.tensor(np.linspace(0.5, 1.5, f, dtype=x_np.dtype), requires_grad=True) if with_w else None
    b = m.tensor(np.linspace(-0.3, 0.2, f, dtype=x_np.dtype), requires_grad=True) if with_b else None
    y = fn(m, x, w, b)
    y.backward(m.tensor(g_np))
    return [None if t is None else t.detach().numpy().copy() for t in
            (y, x.grad, None if w is None else w.grad, None if b is None else b.grad)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(CASES))
def test_region_forms_match_torch_and_one_thread(case, dtype, threads, omp_requests):
    fn, with_w, with_b = CASES[case]
    if case == "silu" and dtype == np.float64:
        pytest.skip("SiLU's compiled kernel is float32's only (float64 takes NumPy's passes, no region)")
    rng = np.random.default_rng(3)
    x_np = (rng.standard_normal((64, 96)) * 2 + 0.5).astype(dtype)  # 6 Ki elements: a region from 1 Ki
    g_np = rng.standard_normal((64, 96)).astype(dtype)
    ember.set_num_threads(2)
    with policy.override(omp=True, omp_min_elements=1 << 10):
        regions = _run(ember, fn, x_np, g_np, with_w, with_b)
    assert omp_requests and set(omp_requests) == {2}  # forward and backward took numba's threads
    omp_requests.clear()
    ember.set_num_threads(1)
    with policy.override(omp=True, omp_min_elements=1 << 10):
        one = _run(ember, fn, x_np, g_np, with_w, with_b)
    assert not omp_requests  # one thread: the serial kernels
    expected = _run(torch, fn, x_np, g_np, with_w, with_b)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for got, serial, want in zip(regions, one, expected):
        assert (got is None) == (want is None)
        if got is not None:
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.view(np.uint8), serial.view(np.uint8))
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", ["layer_norm", "rms_norm"])
def test_gradient_regions_are_split_by_rows(case, threads, omp_requests):
    """The row kernels' gradient takes a region by its rows, each row one thread's: one row of 4 Ki features runs
    serially, 4 Ki rows of one feature on both threads (the counts asked of numba's layer), the values the same
    as PyTorch's either way."""
    fn, with_w, with_b = CASES[case]
    rng = np.random.default_rng(4)
    ember.set_num_threads(2)
    for shape, wanted in (((1, 4096), []), ((4096, 1), [2])):
        x_np, g_np = rng.standard_normal(shape), rng.standard_normal(shape)
        with policy.override(omp=True, omp_min_elements=1 << 10):
            x = ember.tensor(x_np, requires_grad=True)
            w = ember.tensor(np.linspace(0.5, 1.5, shape[1]), requires_grad=True)
            y = fn(ember, x, w, None)
            omp_requests.clear()
            y.backward(ember.tensor(g_np))
        assert omp_requests == wanted, shape
        want = _run(torch, fn, x_np, g_np, with_w, with_b)
        np.testing.assert_allclose(x.grad.numpy(), want[1], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(w.grad.numpy(), want[2], rtol=1e-10, atol=1e-10)

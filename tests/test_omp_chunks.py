"""ember's pool's chunks on numba's OpenMP threads (``policy.omp_chunks`` under ``policy.omp``, ``_omp.run_chunks``):
``parallel_for`` runs the same chunks as one region, on numba's threads and never on ember's workers; an exception in
a chunk is raised after every chunk finished; nested splits run inline; and the convolutions (Winograd, im2col,
batch-last, transposed, per-sample gradients), whose bands, samples and GEMM blocks are such chunks, give the bits of
ember's pool and of one thread at 2 and 3 threads, and PyTorch's values."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch
from conftest import ROOT
from oracle import assert_close

import ember
from ember import _parallel
from ember._kernels import _omp, openblas, policy

omp_only = pytest.mark.skipif(not (policy.use_compiled() and _omp.available()),
                              reason="numba's omp threading layer is not available here (no libgomp.so.1?)")


def _count_handoffs(monkeypatch) -> list:
    """An entry per chunk handed to one of ember's workers from now on."""
    handoffs = []
    submit = _parallel._Worker.submit
    monkeypatch.setattr(_parallel._Worker, "submit", lambda self, *a: handoffs.append(1) or submit(self, *a))
    return handoffs


@omp_only
@pytest.mark.parametrize("count", [2, 3])
def test_parallel_for_runs_its_chunks_on_numbas_threads(count, threads, monkeypatch):
    handoffs = _count_handoffs(monkeypatch)
    ember.set_num_threads(count)
    seen = []
    workers = {t.native_id for t in threading.enumerate() if t.name.startswith("ember-intra-op")}

    def chunk(lo: int, hi: int) -> None:
        seen.append((lo, hi, threading.get_native_id(), _parallel.in_worker(), openblas.held()))

    with policy.override(omp=True, omp_chunks=True):
        _parallel.parallel_for(chunk, 10, 1 << 20)
    assert sorted(s[:2] for s in seen) == [(10 * i // count, 10 * (i + 1) // count) for i in range(count)]
    assert not handoffs and not {s[2] for s in seen} & workers
    assert len({s[2] for s in seen}) >= 2  # more than one of numba's threads
    assert all(s[3] and (s[4] or not openblas.functions()) for s in seen)  # a worker's chunk, OpenBLAS held
    assert not _parallel.in_worker() and not openblas.held()
    seen.clear()
    with policy.override(omp=True, omp_chunks=False):  # the A/B's other side: ember's pool
        _parallel.parallel_for(chunk, 10, 1 << 20)
    assert len(handoffs) == count - 1 and sorted(s[:2] for s in seen)[0] == (0, 10 // count)


@omp_only
def test_a_chunks_exception_is_raised_after_every_chunk_ran(threads):
    ember.set_num_threads(2)
    done = []

    def chunk(lo: int, hi: int) -> None:
        done.append(lo)
        if lo == 0:
            raise ValueError("chunk failed")

    with policy.override(omp=True, omp_chunks=True), pytest.raises(ValueError, match="chunk failed"):
        _parallel.parallel_for(chunk, 10, 1 << 20)
    assert sorted(done) == [0, 5] and not openblas.held()
    after = []  # the pool lock was released: the next split runs in two chunks again
    with policy.override(omp=True, omp_chunks=True):
        _parallel.parallel_for(lambda lo, hi: after.append(lo), 10, 1 << 20)
    assert sorted(after) == [0, 5]


@omp_only
def test_a_split_inside_a_chunk_runs_inline(threads, monkeypatch):
    ember.set_num_threads(2)
    inner = []
    regions = []
    run = _omp.run_chunks
    monkeypatch.setattr(_omp, "run_chunks", lambda fn, bounds: (regions.append(len(bounds) - 1), run(fn, bounds)))

    def chunk(lo: int, hi: int) -> None:
        _parallel.parallel_for(lambda a, b: inner.append((lo, a, b)), 8, 1 << 20)

    with policy.override(omp=True, omp_chunks=True):
        _parallel.parallel_for(chunk, 10, 1 << 20)
    assert regions == [2] and sorted(inner) == [(0, 0, 8), (5, 0, 8)]


@omp_only
def test_numbas_worker_keeps_its_python_thread_state_between_regions(threads):
    # A ctypes callback on a thread Python did not start gets a new thread state each call unless one is kept
    # (``_omp._keep_state``): its thread-local data (``_parallel``'s, NumPy's error state) would be lost every chunk,
    # and the state's creation and teardown were half of a region's CPU.
    ember.set_num_threads(2)
    local = threading.local()
    seen = []

    def chunk(lo: int, hi: int) -> None:
        if threading.get_ident() != threading.main_thread().ident:
            seen.append((threading.get_ident(), getattr(local, "chunks", 0)))
            local.chunks = getattr(local, "chunks", 0) + 1

    with policy.override(omp=True, omp_chunks=True):
        for _ in range(6):
            _parallel.parallel_for(chunk, 2, 1 << 20)
    assert len(seen) == 6
    by_thread = {}
    for ident, count in seen:  # each worker counts up from where its last chunk left its thread-local data
        assert count == by_thread.get(ident, count)
        by_thread[ident] = count + 1
    assert seen[-1][1] > 0


def _conv_step(kind: str, x_np, w_np, up_np):
    """Forward and backward of one convolution: output, input gradient, weight gradient, bias gradient."""
    x, w = ember.tensor(x_np, requires_grad=True), ember.tensor(w_np, requires_grad=True)
    b = ember.tensor(np.linspace(-0.5, 0.5, w_np.shape[1 if kind == "transpose" else 0], dtype=x_np.dtype),
                     requires_grad=True)
    f = ember.nn.functional
    if kind == "winograd":
        y = f.conv2d(x, w, b, padding=1)
    elif kind == "strided":
        y = f.conv2d(x, w, b, stride=2, padding=1)
    elif kind == "grouped":
        y = f.conv2d(x, w, b, padding=2, dilation=2, groups=2)
    else:
        y = f.conv_transpose2d(x, w, b, stride=2, padding=1)
    y.backward(ember.tensor(up_np))
    return [t.detach().numpy().copy() for t in (y, x.grad, w.grad, b.grad)]


def _torch_step(kind: str, x_np, w_np, up_np):
    x, w = torch.tensor(x_np, requires_grad=True), torch.tensor(w_np, requires_grad=True)
    b = torch.tensor(np.linspace(-0.5, 0.5, w_np.shape[1 if kind == "transpose" else 0], dtype=x_np.dtype),
                     requires_grad=True)
    f = torch.nn.functional
    y = {"winograd": lambda: f.conv2d(x, w, b, padding=1), "strided": lambda: f.conv2d(x, w, b, stride=2, padding=1),
         "grouped": lambda: f.conv2d(x, w, b, padding=2, dilation=2, groups=2),
         "transpose": lambda: f.conv_transpose2d(x, w, b, stride=2, padding=1)}[kind]()
    if up_np is None:
        return y.shape
    y.backward(torch.tensor(up_np))
    return [t.detach().numpy() for t in (y, x.grad, w.grad, b.grad)]


# (kind, input shape, weight shape): ragged batches (13, 7, 5) and tile counts (odd widths: 11, 15, 9 tiles)
CASES = [
    ("winograd", (13, 16, 22, 30), (24, 16, 3, 3)),  # Winograd F(2x2, 3x3), direct (N, C, H, W) transforms
    ("winograd", (7, 32, 9, 7), (32, 32, 3, 3)),  # narrow images: batch-last bands gathering from (N, C, H, W)
    ("strided", (13, 8, 30, 30), (16, 8, 3, 3)),  # im2col in (N, C, H, W), blocks of samples
    ("strided", (9, 16, 12, 10), (24, 16, 3, 3)),  # few output positions: batch-last, one GEMM per output row
    ("grouped", (5, 8, 17, 19), (12, 4, 3, 3)),
    ("transpose", (7, 32, 9, 11), (32, 16, 4, 4)),  # ConvTranspose2d's col2im
]


@omp_only
@pytest.mark.parametrize("kind, x_shape, w_shape, dtype", [(*case, np.float32) for case in CASES]
                         + [(*CASES[0], np.float64), (*CASES[-1], np.float64)])
def test_convolutions_with_chunks_on_omp_threads_give_the_one_thread_bits(kind, x_shape, w_shape, dtype, threads,
                                                                          monkeypatch):
    rng = np.random.default_rng(sum(x_shape))
    x = rng.standard_normal(x_shape).astype(dtype)
    w = (rng.standard_normal(w_shape) / 4).astype(dtype)
    up = rng.standard_normal(tuple(_torch_step(kind, x, w, None))).astype(dtype)
    expected = _torch_step(kind, x, w, up)
    handoffs = _count_handoffs(monkeypatch)
    regions = []
    run = _omp.run_chunks
    monkeypatch.setattr(_omp, "run_chunks", lambda fn, bounds: (regions.append(len(bounds) - 1), run(fn, bounds)))
    results = {}
    for n in (2, 3):
        ember.set_num_threads(n)
        with policy.override(omp=True, omp_chunks=True):
            results[n, "chunks"] = _conv_step(kind, x, w, up)
        assert regions and not handoffs  # the convolution's splits ran as regions, none on ember's workers
        regions.clear()
        with policy.override(omp=False):
            results[n, "pool"] = _conv_step(kind, x, w, up)
        assert not regions and handoffs
        handoffs.clear()
    ember.set_num_threads(1)
    with policy.override(omp=True, omp_chunks=True):
        one = _conv_step(kind, x, w, up)
    assert not regions and not handoffs
    for name, got in results.items():
        for a, b in zip(got, one):
            np.testing.assert_array_equal(a, b, err_msg=str(name))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for a, t in zip(one, expected):
        assert_close(a, t, atol=tol * float(np.abs(t).max()), rtol=tol)


@omp_only
def test_per_sample_gradients_with_chunks_on_omp_threads_give_the_one_thread_bits(threads, monkeypatch):
    """``vmap(grad)`` of a small CNN (the per-example convolutions' and products' splits: ``func/_per_example``)."""
    from ember.func import functional_call, grad, vmap

    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Conv2d(3, 16, 3, padding=1), ember.nn.ReLU(), ember.nn.Conv2d(16, 16, 3),
                                ember.nn.Flatten(), ember.nn.Linear(16 * 10 * 10, 10))
    params = {k: v.detach() for k, v in model.named_parameters()}
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((29, 3, 12, 12)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 10, 29))

    def loss(p, xi, yi):
        out = functional_call(model, p, (xi.unsqueeze(0),))
        return ember.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    def per_sample():
        return {k: v.numpy().copy() for k, v in vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y).items()}

    regions = []
    run = _omp.run_chunks
    monkeypatch.setattr(_omp, "run_chunks", lambda fn, bounds: (regions.append(len(bounds) - 1), run(fn, bounds)))
    ember.set_num_threads(2)
    with policy.override(omp=True, omp_chunks=True):
        two = per_sample()
    assert regions
    ember.set_num_threads(1)
    one = per_sample()
    for k in one:
        np.testing.assert_array_equal(two[k], one[k], err_msg=k)


# What libgomp would read when numba's ``omp`` layer loads it (numba's ``omppool`` module links it), then after.
_SPIN_SEEN = """
import os, sys
seen = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == 'numba.np.ufunc.omppool':
            seen.append(os.environ.get('GOMP_SPINCOUNT'))
sys.meta_path.insert(0, Watch())
import numpy as np, ember
from ember._kernels import policy
policy.omp_spin_count = {spin!r}
ember.set_num_threads(2)
ember.relu(ember.tensor(np.ones(1 << 20, np.float32)))  # a region: the layer starts
print(policy.use_omp(), seen, os.environ.get('GOMP_SPINCOUNT'))
"""


@omp_only
@pytest.mark.parametrize("spin, env, expected", [
    (20000, {}, "True ['20000'] None"),  # set while libgomp loads, removed after
    (20000, {"GOMP_SPINCOUNT": "123"}, "True ['123'] 123"),  # the program's own choice stands
    (20000, {"OMP_WAIT_POLICY": "passive"}, "True [None] None"),
])
def test_the_workers_spin_is_set_only_while_numbas_layer_loads(spin, env, expected):
    base = {k: v for k, v in os.environ.items() if k not in ("EMBER_KERNELS", "EMBER_OMP_KERNELS", "GOMP_SPINCOUNT",
                                                              "OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER")}
    out = subprocess.run([sys.executable, "-W", "error", "-c", _SPIN_SEEN.replace("{spin!r}", repr(spin))],
                         env={**base, "PYTHONPATH": ROOT, "EMBER_OMP_KERNELS": "1",
                              **env}, capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == expected

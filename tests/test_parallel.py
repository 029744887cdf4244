"""The intra-op thread pool: chunks cover every row once, errors surface, results equal one thread's."""

import threading

import numpy as np
import pytest
import torch

import ember
from ember import _parallel
from ember._kernels import policy


def test_set_num_threads_matches_torch_errors(threads):
    ember.set_num_threads(3)
    assert ember.get_num_threads() == 3
    for bad in (0, -1, 2.0):
        with pytest.raises(RuntimeError) as ours:
            ember.set_num_threads(bad)
        with pytest.raises(RuntimeError) as theirs:
            torch.set_num_threads(bad)
        assert str(theirs.value).split(",")[0] in str(ours.value)


def test_env_sets_the_default(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "5")
    assert _parallel._threads_from_env() == 5
    monkeypatch.setenv("OMP_NUM_THREADS", "junk")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    assert _parallel._threads_from_env() >= 1


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_every_row_once_in_parallel(threads, n):
    ember.set_num_threads(n)
    rows = 1000
    seen = np.zeros(rows, dtype=np.int64)
    calls = []

    def fn(a, b):
        seen[a:b] += 1
        calls.append(threading.current_thread().name)

    _parallel.parallel_for(fn, rows, elements=rows * 1000)
    assert (seen == 1).all()
    assert len(calls) == n  # split into one chunk per thread
    assert (len(set(calls)) > 1) == (n > 1)  # the pool took part


def test_small_work_stays_on_the_calling_thread(threads):
    ember.set_num_threads(4)
    names = []
    _parallel.parallel_for(lambda a, b: names.append((a, b, threading.current_thread().name)), 100, elements=100)
    assert names == [(0, 100, threading.current_thread().name)]


def test_error_in_a_chunk_is_raised_after_all_finish(threads):
    ember.set_num_threads(2)
    done = []

    def fn(a, b):
        if a == 0:
            raise ValueError("chunk failed")
        done.append(b)

    with pytest.raises(ValueError, match="chunk failed"):
        _parallel.parallel_for(fn, 10, elements=1 << 20)
    assert done == [10]


def test_nested_calls_do_not_deadlock(threads):
    ember.set_num_threads(2)
    out = np.zeros((8, 1 << 14))

    def inner(a, b):
        def leaf(c, d):
            out[a:b, c:d] += 1
        _parallel.parallel_for(leaf, out.shape[1], elements=(b - a) * out.shape[1])

    _parallel.parallel_for(inner, 8, elements=out.size)
    assert (out == 1).all()


def test_parallel_rows_same_bits_as_one_thread(threads):
    x = np.random.default_rng(0).standard_normal((257, 300)).astype(np.float32)

    def kernel(a, o):
        np.tanh(a, out=o)
        np.multiply(o, a, out=o)

    results = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        out = np.empty_like(x)
        _parallel.parallel_rows(kernel, x, out)
        results.append(out)
    assert all(np.array_equal(results[0], r) for r in results[1:])


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("shape", [(700_000,), (3000, 97), (5,), ()])
def test_parallel_blocks_every_row_once_in_cache_sized_blocks(threads, n, shape):
    ember.set_num_threads(n)
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    out = np.zeros_like(x)
    pieces = []

    def fn(a, o):
        pieces.append(a.nbytes)
        o += a + 1

    _parallel.parallel_blocks(fn, x, out)
    np.testing.assert_array_equal(out, x + 1)  # every row exactly once
    row_bytes = x.nbytes // len(x) if x.ndim else x.nbytes
    assert max(pieces) <= max(policy.block_bytes, row_bytes)
    if x.nbytes > 2 * policy.block_bytes:
        assert len(pieces) >= x.nbytes // policy.block_bytes


@pytest.mark.parametrize("code, env, expected", [
    ("import ember", {}, "4"),  # idle OpenBLAS workers sleep at once instead of spinning
    ("import numpy, ember", {}, None),  # too late once NumPy has loaded OpenBLAS: left alone
    ("import ember", {"EMBER_BLAS_TUNING": "0"}, None),
    ("import ember", {"OPENBLAS_THREAD_TIMEOUT": "10"}, "10"),  # the user's own setting wins
])
def test_openblas_thread_timeout_set_before_numpy_loads(code, env, expected):
    import os
    import subprocess
    import sys

    base = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_THREAD_TIMEOUT", "EMBER_BLAS_TUNING")}
    out = subprocess.run([sys.executable, "-c", f"{code}; import os; print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"],
                         env={**base, **env}, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == str(expected)


def test_elementwise_kernels_split_only_from_their_own_threshold(threads, monkeypatch):
    monkeypatch.setattr(policy, "min_elementwise_elements", 1 << 19)  # the shipped value (`threads` lowers it)
    ember.set_num_threads(2)
    for rows, expected in ((200, 1), (600, 2)):  # x 1000 elements: below and above 512 Ki
        calls: list[int] = []
        _parallel.parallel_rows(lambda a, seen=calls: seen.append(len(a)), np.zeros((rows, 1000), np.float32))
        assert len(calls) == expected and sum(calls) == rows
    calls = []  # parallel_for's own threshold stays 64 Ki (convolution bands, pooling)
    _parallel.parallel_for(lambda a, b: calls.append(b - a), 200, elements=200 * 1000)
    assert len(calls) == 2


def test_stack_matmul_splits_the_stack_with_the_bits_of_one_thread(threads, monkeypatch):
    """A stack of GEMMs (attention's per-head products) is split along its first dim among the threads; each product
    runs in blocks that depend on OpenBLAS's thread count only, so the bits are the same at any count of ember's
    threads (and NumPy's own, for products OpenBLAS keeps whole on one thread)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 3, 16, 8)).astype(np.float32)
    b = rng.standard_normal((6, 3, 8, 12)).astype(np.float32)
    expected = np.matmul(a, b)
    seen: list[int] = []
    real_for = _parallel.parallel_for

    def spy(fn, rows, elements, min_elements=None):
        seen.append(rows)
        return real_for(fn, rows, elements, min_elements)

    monkeypatch.setattr(_parallel, "parallel_for", spy)
    blocked = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        with policy.override(min_parallel_elements=64):
            np.testing.assert_array_equal(_parallel.stack_matmul(a, b), expected)
            np.testing.assert_array_equal(_parallel.stack_matmul(a.swapaxes(-1, -2).copy().swapaxes(-1, -2), b),
                                          expected)  # a transposed view: the same products
            # products OpenBLAS would thread itself: in blocks of columns it keeps on one thread
            with policy.override(blas_threaded_mnk=16 * 8 * 8, blas_threads=2):
                blocked.append(_parallel.stack_matmul(a, b))
    assert seen and set(seen) == {6}  # split along the first dim
    for other in blocked:
        np.testing.assert_array_equal(other, blocked[0])
    np.testing.assert_allclose(blocked[0], expected, rtol=1e-5, atol=1e-5)
    seen.clear()
    # the plain product: broadcast stacks, mixed dtypes
    np.testing.assert_array_equal(_parallel.stack_matmul(a, b[0]), np.matmul(a, b[0]))
    np.testing.assert_array_equal(_parallel.stack_matmul(a, b.astype(np.float64)), np.matmul(a, b.astype(np.float64)))
    assert not seen
    with pytest.raises(ValueError):  # NumPy's own error for mismatched inner dims
        _parallel.stack_matmul(a, b.swapaxes(-1, -2))
    # a stack of one (attention's (1, H, T, T) at batch 1): split along the next dim, the same bits
    ember.set_num_threads(2)
    with policy.override(min_parallel_elements=64):
        for lead in ((1,), (1, 1)):
            one_a, one_b = a[:1].reshape(*lead, *a.shape[1:]), b[:1].reshape(*lead, *b.shape[1:])
            got = _parallel.stack_matmul(one_a, one_b)
            assert got.shape == (*lead, 3, 16, 12)
            np.testing.assert_array_equal(got, expected[:1].reshape(got.shape))
    assert seen == [3, 3]


@pytest.mark.parametrize("m, k, n", [(64, 1568, 10), (10, 64, 1568), (37, 50, 301)])
def test_matmul_in_blocks_on_several_threads_with_the_bits_of_one(threads, m, k, n):
    """A GEMM OpenBLAS would thread itself runs in blocks of rows (n < m) or columns it keeps on one thread, the
    blocks split over ember's threads: the same bits at 1, 2 and 3 threads, and more than one thread takes part."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    names: set[str] = set()
    real_matmul = np.matmul

    def spy(x, y, out=None):
        names.add(threading.current_thread().name)
        return real_matmul(x, y, out=out)

    results = []
    with policy.override(blas_threaded_mnk=m * k * n // 4, blas_threads=2, min_parallel_elements=64):
        for count in (1, 2, 3):
            ember.set_num_threads(count)
            names.clear()
            _parallel.xp.matmul = spy
            try:
                # and a transposed view (OpenBLAS's other packing: its own bits, at every count)
                results.append((_parallel.matmul(a, b), _parallel.matmul(a.T.copy().T, b)))
            finally:
                _parallel.xp.matmul = real_matmul
            assert (len(names) > 1) == (count > 1)
    for other in results[1:]:
        for r, o in zip(results[0], other):
            np.testing.assert_array_equal(o, r)
    results = [r[0] for r in results]
    np.testing.assert_allclose(results[0], a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    with policy.override(blas_threaded_mnk=m * k * n // 4, blas_threads=2, min_parallel_elements=64):
        np.testing.assert_array_equal(_parallel.matmul(a[None], b), results[0][None])  # a stack of one: blocked
        # the plain product: mixed dtypes, a stack of several
        np.testing.assert_array_equal(_parallel.matmul(a, b.astype(np.float64)), np.matmul(a, b.astype(np.float64)))
        np.testing.assert_array_equal(_parallel.matmul(np.stack([a, a]), b), np.matmul(np.stack([a, a]), b))
    with policy.override(blas_threaded_mnk=m * k * n):  # a product OpenBLAS keeps on one thread: whole
        np.testing.assert_array_equal(_parallel.matmul(a, b), np.matmul(a, b))


def test_linear_same_bits_at_1_2_3_threads_with_blocked_gemms(threads):
    """Linear's three GEMMs (forward, input and weight gradients) of a mid-sized layer under a policy that would
    block them: the bits of one thread at any count of ember's threads, and PyTorch's values. (Linear keeps its
    GEMMs on OpenBLAS's threads: blocked on ember's, the GPT-style and MLP steps at two threads took 1.2-1.5x
    their time on an idle machine.)"""
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((64, 392)).astype(np.float32), rng.standard_normal((10, 392)).astype(np.float32)
    bias, up = rng.standard_normal(10).astype(np.float32), rng.standard_normal((64, 10)).astype(np.float32)
    results = []
    with policy.override(blas_threaded_mnk=1 << 16, blas_threads=2, min_parallel_elements=64):
        for count in (1, 2, 3):
            ember.set_num_threads(count)
            ex, ew, eb = (ember.tensor(v, requires_grad=True) for v in (x, w, bias))
            y = ember.nn.functional.linear(ex, ew, eb)
            y.backward(ember.tensor(up))
            results.append([t.detach().numpy().copy() for t in (y, ex.grad, ew.grad, eb.grad)])
    for other in results[1:]:
        for r, o in zip(results[0], other):
            np.testing.assert_array_equal(r, o)
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x, w, bias))
    ty = torch.nn.functional.linear(tx, tw, tb)
    ty.backward(torch.tensor(up))
    for r, t in zip(results[0], (ty, tx.grad, tw.grad, tb.grad)):
        np.testing.assert_allclose(r, t.detach().numpy(), rtol=1e-4, atol=1e-4)


def test_relu_forward_splits_from_the_one_call_threshold(threads, monkeypatch):
    """ReLU's forward is one NumPy call per chunk: it splits over threads from ``min_parallel_pass_elements`` (the
    ``threads`` fixture lowers it to 64 Ki), not from the threshold of many-pass kernels, with the bits of one
    thread, NaN included."""
    monkeypatch.setattr(policy, "min_elementwise_elements", 1 << 30)  # the many-pass threshold: not ReLU's
    monkeypatch.setattr(policy, "omp", False)  # (NumPy's maximum per chunk: not the compiled kernel's one region)
    x = np.random.default_rng(7).standard_normal((64, 32, 14, 14)).astype(np.float32)  # 392 Ki elements
    x[0, 0, 0, :3] = (np.nan, -0.0, 0.0)
    names: set[str] = set()
    real_maximum = np.maximum

    def spy(*args, **kwargs):
        names.add(threading.current_thread().name)
        return real_maximum(*args, **kwargs)

    results = []
    for count in (1, 2, 3):
        ember.set_num_threads(count)
        names.clear()
        monkeypatch.setattr(np, "maximum", spy)
        results.append(ember.relu(ember.tensor(x)).numpy())
        monkeypatch.setattr(np, "maximum", real_maximum)
        assert (len(names) > 1) == (count > 1)
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])
    np.testing.assert_array_equal(results[0], torch.relu(torch.tensor(x)).numpy())


def test_attention_and_matmul_same_bits_at_1_2_3_threads(threads):
    """Scaled dot-product attention and a batched ``@`` (forward and backward) give one thread's bits on more."""
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((8, 2, 32, 16)).astype(np.float32) for _ in range(4)]
    results = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        with policy.override(min_parallel_elements=64):
            q, k, v = (ember.tensor(a, requires_grad=True) for a in arrays[:3])
            y = ember.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            z = (q @ k.transpose(-1, -2)) @ v
            (y * ember.tensor(arrays[3])).sum().backward(retain_graph=True)
            (z * ember.tensor(arrays[3])).sum().backward()
            results.append([t.detach().numpy().copy() for t in (y, z, q.grad, k.grad, v.grad)])
    for other in results[1:]:
        for r, o in zip(results[0], other):
            np.testing.assert_array_equal(r, o)


@pytest.mark.parametrize("failing_chunk", ["caller", "worker"])
def test_an_exception_in_a_chunk_leaves_the_workers_in_step(threads, failing_chunk):
    """After a chunk raises (the caller's own or a worker's, as a Ctrl-C in the caller's chunk does), parallel_for
    still waits for every chunk: the next call returns only when all its rows are written."""
    import time

    ember.set_num_threads(3)

    def failing(lo, hi):
        if (hi == 30) == (failing_chunk == "caller"):
            raise ValueError("boom")
        time.sleep(0.02)

    out = np.zeros(30)

    def fill(lo, hi):
        if hi != 30:
            time.sleep(0.02)
        out[lo:hi] = 1

    for _ in range(3):
        with pytest.raises(ValueError, match="boom"):
            _parallel.parallel_for(failing, 30, elements=10**7)
        for _ in range(3):
            out[:] = 0
            _parallel.parallel_for(fill, 30, elements=10**7)
            assert out.sum() == 30


@pytest.fixture
def openblas(monkeypatch):
    """NumPy's OpenBLAS (set, get) at two threads for the test, restored after; skips where it cannot be found."""
    from ember._kernels import openblas

    found = openblas.functions()
    if not found:
        pytest.skip("NumPy's OpenBLAS cannot be found and set at run time here")
    before = found[1]()
    found[0](2)
    monkeypatch.setattr(policy, "blas_threads", 2)
    monkeypatch.setattr(policy, "one_blas_thread", True)
    yield found
    found[0](before)


def test_one_blas_thread_sets_openblas_to_one_and_restores_it(openblas):
    """Inside: OpenBLAS on one thread and no GEMM blocks (whole GEMMs); nested blocks keep it until the outer one
    ends, an exception too; after: OpenBLAS's count and the blocks as before."""
    seen = []

    def inner():
        seen.append(("inner", openblas[1](), _parallel.gemm_block(64, 128, 512)))

    def outer(fail: bool):
        _parallel.on_one_blas_thread(inner)
        seen.append(("outer", openblas[1](), _parallel.gemm_block(64, 128, 512)))
        if fail:
            raise ValueError("in the block")

    assert _parallel.gemm_block(64, 128, 512) == policy.blas_threaded_mnk // (128 * 64)
    _parallel.on_one_blas_thread(outer, False)
    with pytest.raises(ValueError):
        _parallel.on_one_blas_thread(outer, True)
    assert seen == [("inner", 1, None), ("outer", 1, None)] * 2
    assert openblas[1]() == 2 and _parallel.gemm_block(64, 128, 512) == policy.blas_threaded_mnk // (128 * 64)
    with policy.override(one_blas_thread=False):
        _parallel.on_one_blas_thread(inner)
    assert seen[-1] == ("inner", 2, policy.blas_threaded_mnk // (128 * 64))


def test_a_convolution_of_one_sample_keeps_openblas_threads(openblas, monkeypatch):
    """One sample's GEMMs are most of its convolution's work: OpenBLAS's threads split them (inference on one large
    image), as before ``one_blas_thread``; a batch of two runs on one OpenBLAS thread."""
    from ember.nn._ops import conv_nchw

    seen = []
    real = conv_nchw.matmul_blocks
    monkeypatch.setattr(conv_nchw, "matmul_blocks",
                        lambda a, b, out, block: seen.append((batch, openblas[1]())) or real(a, b, out, block))
    w = ember.randn(64, 64, 3, 3)
    for batch in (1, 2):
        ember.nn.functional.conv2d(ember.randn(batch, 64, 40, 40), w, stride=2, padding=1)  # im2col per sample
    assert sorted(set(seen)) == [(1, 2), (2, 1)]
    assert openblas[1]() == 2


@pytest.mark.parametrize("fn,x,w,kwargs", [
    ("conv_transpose2d", (32, 64, 8, 8), (64, 64, 4, 4), {"stride": 2, "padding": 1}),  # the DCGAN layer (Winograd)
    ("conv2d", (32, 64, 8, 8), (64, 64, 3, 3), {"padding": 1}),                         # Winograd, batch-last
    ("conv2d", (32, 16, 16, 16), (32, 16, 3, 3), {"stride": 2, "padding": 1}),          # im2col (N, C, H, W)
    ("conv2d", (32, 16, 16, 16), (32, 16, 4, 4), {"stride": 2, "padding": 1}),          # im2col batch-last
    ("conv2d", (32, 16, 16, 16), (16, 16, 3, 3), {"padding": 1}),                       # Winograd (N, C, H, W)
    ("conv2d", (32, 16, 16, 16), (32, 16, 1, 1), {"stride": 2}),                        # a ResNet's 1x1 shortcut
    ("conv2d", (16, 8, 9, 9), (12, 4, 3, 3), {"padding": 2, "dilation": 2, "groups": 2}),  # batch-last, stride 1
])
def test_convolution_gemms_run_whole_on_one_openblas_thread(threads, openblas, monkeypatch, fn, x, w, kwargs):
    """With OpenBLAS on two threads, a convolution's GEMMs (forward and backward) run whole, with OpenBLAS on one
    thread while they run, split over ember's threads with the same bits for 1, 2 and 3 of them, PyTorch's values;
    OpenBLAS's count is back to two after. (GEMMs cut into blocks OpenBLAS keeps on one thread ran at 60-65 % of a
    whole GEMM's speed; GEMMs on OpenBLAS's threads kept the calling thread spinning.)"""
    from ember.nn._ops import conv, conv_nchw, winograd

    monkeypatch.setattr(policy, "blas_threaded_mnk", 1 << 12)  # every GEMM here would be blocked or threaded
    calls = []
    for mod in (conv, conv_nchw, winograd):
        real = mod.matmul_blocks
        monkeypatch.setattr(mod, "matmul_blocks",
                            lambda a, b, out, block, real=real: calls.append((block, openblas[1]())) or
                            real(a, b, out, block))
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal(x).astype(np.float32), (rng.standard_normal(w) / 8).astype(np.float32)
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
    to = getattr(torch.nn.functional, fn)(tx, tw, **kwargs)
    up = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(up))
    results = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        ex, ew = ember.tensor(xs, requires_grad=True), ember.tensor(ws, requires_grad=True)
        eo = getattr(ember.nn.functional, fn)(ex, ew, **kwargs)
        eo.backward(ember.tensor(up))
        results.append([eo.detach().numpy(), ex.grad.numpy(), ew.grad.numpy()])
    assert calls and set(calls) == {(None, 1)}
    assert openblas[1]() == 2
    for a, t in zip(results[0], (to, tx.grad, tw.grad)):
        np.testing.assert_allclose(a, t.detach().numpy(), atol=1e-5 * float(t.detach().abs().max()), rtol=1e-4)
    for other in results[1:]:
        for a, r in zip(other, results[0]):
            np.testing.assert_array_equal(a, r)


def test_set_num_threads_sets_numpys_openblas_as_torch_sets_its_blas():
    """``torch.set_num_threads(1)`` (a common line in RL and multiprocessing code) keeps PyTorch's matrix
    multiplies on one thread; ember's are NumPy's OpenBLAS, whose count the call sets too. Left at start-up,
    a (97 x 51) @ (51 x 204) float64 GEMM of an LSTMCell ran on OpenBLAS's two threads, 100x slower than on one
    while other processes kept the second core busy."""
    from ember._kernels import openblas

    found = openblas.functions()
    if not found:
        pytest.skip("no OpenBLAS library found in this process (another BLAS): nothing to set")
    getter = found[1]
    saved = ember.get_num_threads(), getter()
    try:
        for n in (1, 3, 2):
            ember.set_num_threads(n)
            assert getter() == n
        # a hold (a GEMM kept on one thread) restores the count set while it was on, not the one before it
        assert openblas.hold()
        ember.set_num_threads(3)
        assert getter() == 1
        openblas.release()
        assert getter() == 3
    finally:
        _parallel.set_num_threads(saved[0])
        found[0](saved[1])


@pytest.fixture
def handed(monkeypatch):
    """The chunks handed to ember's workers while a test runs (the list fills as ``_Worker.submit`` is called);
    OpenBLAS's thread count left alone, as the ``threads`` fixture leaves it (no GEMM in these tests), and
    ``policy.omp`` off (under ``EMBER_OMP_KERNELS=1`` the kernels would take numba's threads, not the workers)."""
    from ember._kernels import openblas

    monkeypatch.setattr(openblas, "set_threads", lambda n: None)
    monkeypatch.setattr(policy, "omp", False)
    chunks: list = []
    submit = _parallel._Worker.submit

    def counted(self, fn, lo, hi):
        chunks.append(fn)
        submit(self, fn, lo, hi)

    monkeypatch.setattr(_parallel._Worker, "submit", counted)
    return chunks


@pytest.mark.parametrize("shape, split", [((32, 32, 16, 16), False), ((32, 16, 32, 32), True)])
def test_relu_and_batch_norm_split_from_512_ki_elements(shape, split, handed):
    """At the shipped thresholds, ReLU's forward and gradient and BatchNorm's training forward and backward run on
    the calling thread below ``min_parallel_pass_elements`` (512 Ki: a ResNet's 256 Ki activation, whose calls take
    0.07-0.17 ms, less than a hand-off to a sleeping worker costs on an idle 2-core machine) and are split over two
    threads from it; the same values either way."""
    saved = ember.get_num_threads()
    x = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    try:
        results = []
        for count in (2, 1):
            ember.set_num_threads(count)
            handed.clear()
            bn = ember.nn.BatchNorm2d(shape[1])
            t = ember.tensor(x, requires_grad=True)
            y = ember.relu(bn(t))
            y.backward(ember.ones_like(y))
            results.append([y.detach().numpy(), t.grad.numpy()])
            if count == 2:
                assert len(handed) == (4 if split else 0)  # BatchNorm and ReLU, forward and backward: one each
    finally:
        ember.set_num_threads(saved)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("rows, split", [(1024, False), (4096, True)])
def test_row_kernels_split_from_512_ki_elements(rows, split, handed):
    """At the shipped thresholds, the compiled row kernels (LayerNorm's forward and backward, softmax and its
    gradient, the embedding's gather) run on the calling thread below ``min_parallel_pass_elements`` (512 Ki: the
    GPT-style step's (1024, 128) activations, whose calls take less than a hand-off to a sleeping worker costs on
    an idle 2-core machine) and are split over two threads from it; the same values either way."""
    saved = ember.get_num_threads()
    rng = np.random.default_rng(9)
    x = rng.standard_normal((rows, 128)).astype(np.float32)
    table = rng.standard_normal((50, 128)).astype(np.float32)
    idx = rng.integers(0, 50, rows)
    try:
        results = []
        for count in (2, 1):
            ember.set_num_threads(count)
            handed.clear()
            ember.manual_seed(0)
            norm = ember.nn.LayerNorm(128)
            t = ember.tensor(x, requires_grad=True)
            w = ember.tensor(table, requires_grad=True)
            y = ember.softmax(norm(t), dim=-1) * ember.nn.functional.embedding(ember.tensor(idx), w)
            y.backward(ember.ones_like(y))
            results.append([y.detach().numpy(), t.grad.numpy(), w.grad.numpy()])
            if count == 2:
                assert bool(handed) == (split and policy.use_compiled())
    finally:
        ember.set_num_threads(saved)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)

"""Mid-sized GEMMs with OpenBLAS held to one thread (``ember._kernels.openblas``): NumPy's product (to rounding:
OpenBLAS's threaded double-precision GEMM sums some shapes in another order), the count held only inside the
product and restored after it, whatever happens."""

import threading

import numpy as np
import pytest

import ember
from ember._kernels import openblas
from ember._kernels.policy import policy

pytestmark = pytest.mark.skipif(not openblas.functions(), reason="NumPy here is not built with OpenBLAS")

# Every product in these tests is in the held range, and OpenBLAS counted as threaded.
HOLD_ALL = {"blas_threaded_mnk": 0, "blas_one_thread_mnk": 1 << 40, "blas_threads": 2}


class _Spy:
    """Stands in for the array module inside ``openblas``: records OpenBLAS's thread count at each product."""

    ndarray = np.ndarray

    def __init__(self, fail: bool = False) -> None:
        self.seen: list[int] = []
        self.fail = fail

    def matmul(self, a, b, out=None):
        self.seen.append(openblas.functions()[1]())
        if self.fail:
            raise ValueError("boom")
        return np.matmul(a, b, out=out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_held_product_is_numpys_product(dtype, two_blas_threads):
    rng = np.random.default_rng(0)
    for _ in range(25):
        m, k, n = (int(v) for v in rng.integers(8, 300, 3))
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((n, k)).astype(dtype).T  # a transposed operand, as Linear's w.T
        with policy.override(**HOLD_ALL):
            got = openblas.matmul(a, b)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-4)


def test_count_is_one_inside_and_restored_after(monkeypatch, two_blas_threads):
    spy = _Spy()
    monkeypatch.setattr(openblas, "xp", spy)
    a = np.ones((64, 128), np.float32)
    b = np.ones((128, 384), np.float32)
    with policy.override(blas_threaded_mnk=1 << 18, blas_one_thread_mnk=1 << 22, blas_threads=2):
        openblas.matmul(a, b)  # 3.1 M multiply-adds: held
        openblas.matmul(a[:8, :32], b[:32, :64])  # 16 Ki: OpenBLAS keeps it on one thread anyway, not held
        openblas.matmul(np.ones((512, 512), np.float32), np.ones((512, 512), np.float32))  # 134 M: threaded
    with policy.override(blas_threaded_mnk=1 << 18, blas_one_thread_mnk=1 << 22, blas_threads=1):
        openblas.matmul(a, b)  # OpenBLAS started on one thread: nothing to hold
    assert spy.seen == [1, 2, 2, 2]
    assert two_blas_threads() == 2


def test_count_restored_when_the_product_raises(monkeypatch, two_blas_threads):
    monkeypatch.setattr(openblas, "xp", _Spy(fail=True))
    with policy.override(**HOLD_ALL), pytest.raises(ValueError, match="boom"):
        openblas.matmul(np.ones((4, 4)), np.ones((4, 4)))
    assert two_blas_threads() == 2


def test_threads_holding_at_once_restore_the_count_once_all_are_done(two_blas_threads):
    a = np.ones((96, 96), np.float32)
    errors = []

    def run():
        try:
            for _ in range(300):
                openblas.matmul(a, a)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    with policy.override(**HOLD_ALL):
        threads = [threading.Thread(target=run) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    assert not errors and not any(t.is_alive() for t in threads)
    assert two_blas_threads() == 2  # never left at another thread's "1"


def test_linear_runs_its_gemms_held(monkeypatch, two_blas_threads):
    spy = _Spy()
    monkeypatch.setattr(openblas, "xp", spy)
    ember.manual_seed(0)
    layer = ember.nn.Linear(128, 384)
    x = ember.randn(64, 128, requires_grad=True)
    with policy.override(blas_threaded_mnk=1 << 18, blas_one_thread_mnk=1 << 22, blas_threads=2):
        layer(x).sum().backward()
    assert spy.seen == [1, 1, 1]  # forward, the input's gradient, the weight's gradient
    assert two_blas_threads() == 2


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_child_forked_while_held_gets_the_count_back(two_blas_threads):
    import os
    import warnings

    assert openblas.hold()
    try:
        with warnings.catch_warnings():  # (Python 3.12+ warns of fork in a process with threads; this child execs nothing)
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: nothing holds OpenBLAS here
            ok = not openblas.held() and openblas.functions()[1]() == 2
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        openblas.release()
    assert os.waitstatus_to_exitcode(status) == 0
    assert two_blas_threads() == 2


def test_numpys_own_openblas_is_the_one_held():
    """SciPy ships another OpenBLAS: holding that one left NumPy's threads as they were."""
    pytest.importorskip("scipy.linalg")
    first = openblas._candidate_paths()[0]
    assert "numpy" in first and "scipy.libs" not in first


def test_shipped_hold_covers_a_gpt_forward_at_batch_1_not_a_training_batch(monkeypatch, two_blas_threads):
    """At the shipped thresholds (OpenBLAS on two threads), the GEMMs of GPT inference at batch 1 (64 rows: 2-4 M
    multiply-adds, ~100 µs on one thread, less than waking OpenBLAS's sleeping second thread costs idle) run held
    to one thread; a training batch's (1024 rows: 50 M) and the LM head of 1024 rows (8.5 M) keep both."""
    spy = _Spy()
    monkeypatch.setattr(openblas, "xp", spy)
    shapes = [(64, 128, 384), (64, 128, 512), (64, 512, 128), (1024, 128, 384), (1024, 128, 65)]
    with policy.override(blas_threads=2):
        for m, k, n in shapes:
            openblas.matmul(np.ones((m, k), np.float32), np.ones((n, k), np.float32).T)
    assert spy.seen == [1, 1, 1, 2, 2]
    assert two_blas_threads() == 2

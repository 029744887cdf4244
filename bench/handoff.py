"""What one hand-off to ember's worker thread costs in wall clock, against a chunk done on the calling thread, and
PyTorch's own threads on the same kind of work.

    python bench/handoff.py            # on an idle machine: a busy one hides the cost of waking a sleeping thread

Rows: ``parallel_for`` of two empty chunks (the hand-off alone) and of a compiled 128 Ki-element kernel split in two,
against the same kernel on the calling thread; a Python lock ping-pong between two threads (the floor for any
hand-off a Python worker takes); ``torch.exp`` over 128 Ki float32 at one and two threads (PyTorch's OpenMP
workers spin before they sleep). Then ember's own kernels three ways: ReLU's gradient over 128 Ki float32 and
BatchNorm's training forward over (32, 16, 1024) on the calling thread (the serial kernel; and the ``parallel=True``
kernel held to one thread: what compiling for threads costs), split in two over ember's pool, and as one parallel
region on numba's OpenMP threads (``kernel.parallel``, where the ``omp`` layer loads). Medians of 400 calls.
``OMP_WAIT_POLICY`` / ``GOMP_SPINCOUNT`` in the environment set how long numba's OpenMP workers spin.
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")
HERE = os.path.dirname(os.path.abspath(__file__))
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, os.path.dirname(HERE))

CALLS = 400


def median_us(fn) -> float:
    times = []
    for _ in range(CALLS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def ping_pong_us() -> float:
    there, back = threading.Lock(), threading.Lock()
    there.acquire()
    back.acquire()

    def worker():
        for _ in range(CALLS + 1):
            there.acquire()
            back.release()

    threading.Thread(target=worker, daemon=True).start()

    def round_trip():
        there.release()
        back.acquire()

    round_trip()
    return median_us(round_trip)


def ember_kernels_us(x, out) -> dict[str, float]:
    """ember's ReLU gradient and BatchNorm forward kernels: serial, parallel-compiled on one thread, ember's pool,
    numba's OpenMP threads."""
    import numpy as np

    from ember._kernels import _omp, policy
    from ember._kernels import activation as act
    from ember._kernels import batch_norm as bn

    rows = {}
    planes = np.random.default_rng(1).standard_normal((32, 16, 1024)).astype(np.float32)
    mean, var, pout, none = np.empty(16, np.float32), np.empty(16, np.float32), np.empty_like(planes), planes[0, 0, :0]
    omp = policy.compiled and _omp.available()
    kernels = {
        "relu_grad 128 Ki": (act.relu_grad, lambda k, lo, hi: k(x[lo:hi], x[lo:hi], out[lo:hi]), x.size),
        "BatchNorm forward (32, 16, 1024)": (bn.forward, lambda k, lo, hi: k(planes, none, none, 1e-5, lo, hi, mean,
                                                                             var, pout), 16),
    }
    for label, (kern, call, n) in kernels.items():
        rows.update(three_ways(label, kern, call, n, omp))
    return rows


def three_ways(label: str, kern, call, n: int, omp: bool) -> dict[str, float]:
    from ember import _parallel
    from ember._kernels import _omp, policy

    rows = {f"{label}, serial kernel": median_us(lambda: call(kern, 0, n))}
    if omp:
        _omp.use_threads(1)
        rows[f"{label}, parallel=True kernel, 1 thread"] = median_us(lambda: call(kern.parallel, 0, n))
    with policy.override(omp=False):
        rows[f"{label}, ember's pool, 2 chunks"] = median_us(
            lambda: _parallel.parallel_kernel(kern, call, n, 1 << 30, 2))
    if omp:
        with policy.override(omp=True):
            rows[f"{label}, numba's OpenMP, 2 threads"] = median_us(
                lambda: _parallel.parallel_kernel(kern, call, n, 1 << 30, 2))
    return rows


def main() -> None:
    import numpy as np

    import ember
    from ember import _parallel
    from ember._kernels._jit import load_numba

    ember.set_num_threads(2)
    numba = load_numba()
    x = np.random.default_rng(0).random(1 << 17, dtype=np.float32)
    out = np.empty_like(x)
    rows = {}
    rows["parallel_for, two empty chunks"] = median_us(lambda: _parallel.parallel_for(lambda a, b: None, 2, 1 << 30, 2))
    if numba is not None:
        @numba.njit(nogil=True, cache=False)
        def affine(x, out, lo, hi):
            for i in range(lo, hi):
                out[i] = x[i] * np.float32(1.5) + np.float32(0.5)

        affine(x, out, 0, 8)
        n = x.size
        rows["compiled 128 Ki kernel, calling thread"] = median_us(lambda: affine(x, out, 0, n))
        rows["compiled 128 Ki kernel, split in two"] = median_us(
            lambda: _parallel.parallel_for(lambda a, b: affine(x, out, a, b), n, 1 << 30, 2))
    rows["Python lock ping-pong (round trip)"] = ping_pong_us()
    if numba is not None:
        rows.update(ember_kernels_us(x, out))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        tx, tout = torch.from_numpy(x.copy()), torch.empty(x.size)
        for threads in (1, 2):
            torch.set_num_threads(threads)
            rows[f"torch.exp 128 Ki, {threads} thread(s)"] = median_us(lambda: torch.exp(tx, out=tout))
    for label, us in rows.items():
        print(f"{label:<68}{us:>10.1f} us")


if __name__ == "__main__":
    main()

"""What one hand-off to ember's worker thread costs in wall clock, against a chunk done on the calling thread, and
PyTorch's own threads on the same kind of work.

    python bench/handoff.py            # on an idle machine: a busy one hides the cost of waking a sleeping thread

Rows: ``parallel_for`` of two empty chunks (the hand-off alone) and of a compiled 128 Ki-element kernel split in two,
against the same kernel on the calling thread; a Python lock ping-pong between two threads (the floor for any
hand-off a Python worker takes); ``torch.exp`` over 128 Ki float32 at one and two threads (PyTorch's OpenMP
workers spin before they sleep). Medians of 400 calls.
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
        print(f"{label:<45}{us:>10.1f} us")


if __name__ == "__main__":
    main()

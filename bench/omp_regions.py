"""Where one parallel region on numba's OpenMP threads pays, by size: BatchNorm's training forward and ReLU, the serial
compiled kernel on the calling thread against ``kernel.parallel`` on two threads, back to back in one process (the
measurement behind ``policy.omp_min_elements``).

    python bench/omp_regions.py                        # numba's OpenMP workers spin between regions (the default)
    GOMP_SPINCOUNT=2000 python bench/omp_regions.py    # they sleep almost at once: each region wakes one

Rows: float32 (32, 16, M) BatchNorm planes and the same elements flat for ReLU, 16 Ki to 256 Ki elements; the 20th
percentile and the median of 200 calls, µs. Needs numba's ``omp`` layer (libgomp.so.1); runs with ``policy.omp``
on whatever the environment says.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from functools import partial

HERE = os.path.dirname(os.path.abspath(__file__))
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402

import ember  # noqa: E402
from ember._kernels import _omp, policy  # noqa: E402
from ember._kernels import activation as act  # noqa: E402
from ember._kernels import batch_norm as bn  # noqa: E402

CALLS = 200


def timed(fn) -> tuple[float, float]:
    """(20th percentile, median) of CALLS calls of fn, µs."""
    fn()
    ts = []
    for _ in range(CALLS):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
    ts.sort()
    return ts[len(ts) // 5] / 1e3, statistics.median(ts) / 1e3


def main() -> None:
    policy.omp = True
    if not (policy.use_compiled() and _omp.available()):
        print("numba's omp threading layer is not available here (no libgomp.so.1?)")
        return
    ember.set_num_threads(2)
    _omp.use_threads(2)
    rng = np.random.default_rng(0)
    print("elements   BatchNorm serial / region   ReLU serial / region   (20th percentile / median, µs)")
    for ki in (16, 32, 64, 128, 256):
        c = 16
        x = rng.standard_normal((32, c, ki * 1024 // (32 * c))).astype(np.float32)
        w, b = np.ones(c, np.float32), np.zeros(c, np.float32)
        mean, var, out = np.empty(c, np.float32), np.empty(c, np.float32), np.empty_like(x)
        flat, flat_out = x.reshape(-1), out.reshape(-1)
        rows = [timed(partial(k, x, w, b, 1e-5, 0, c, mean, var, out)) for k in (bn.forward, bn.forward.parallel)]
        rows += [timed(partial(k, flat, flat_out)) for k in (act.relu, act.relu.parallel)]
        print(f"{ki:5d} Ki   " + "   ".join(f"{p:6.0f}/{m:<6.0f}" for p, m in rows), flush=True)


if __name__ == "__main__":
    main()

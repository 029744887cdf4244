"""``torch.rand(n)`` by the compiled mt19937 draw against the NumPy path, CPU time per call (the evidence behind
``KernelPolicy.min_compiled_draw``).

    PYTHONPATH=<an ember checkout> python bench/compiled_draw_threshold.py [--repeat 7] [--sizes 4,16,32,64,256]

Sizes in Ki values (float32). Each path is pinned by ``policy.override(min_compiled_draw=...)``; the two alternate
in each repeat (order swapped every other repeat) and each row prints the medians. The values are checked
identical on both paths first (float32 and float64, and the generator's position after).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import ember  # noqa: E402
from ember._kernels.policy import policy  # noqa: E402

PATHS = {"compiled": {"min_compiled_draw": 1}, "numpy": {"min_compiled_draw": 1 << 62}}


def check_same_values(n: int) -> None:
    drawn = {}
    for name, pinned in PATHS.items():
        with policy.override(**pinned):
            ember.manual_seed(1)
            drawn[name] = [ember.rand(n).numpy().copy(), ember.rand(n, dtype=ember.float64).numpy().copy(),
                           ember.rand(3).numpy().copy()]
    assert all(np.array_equal(a, b) for a, b in zip(drawn["compiled"], drawn["numpy"])), n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="4,16,32,64,96,128,256")
    args = parser.parse_args()
    sizes = [int(s) << 10 for s in args.sizes.split(",")]
    for n in sizes:
        check_same_values(n)
    print(f"values identical on both paths; load {os.getloadavg()[0]:.1f}")
    times: dict = {(n, name): [] for n in sizes for name in PATHS}
    for rep in range(args.repeat):
        order = list(PATHS) if rep % 2 == 0 else list(PATHS)[::-1]
        for n in sizes:
            calls = max(3, (1 << 21) // n)
            for name in order:
                with policy.override(**PATHS[name]):
                    start = time.process_time()
                    for _ in range(calls):
                        ember.rand(n)
                    times[(n, name)].append((time.process_time() - start) / calls * 1e6)
    for n in sizes:
        compiled, numpy_path = (statistics.median(times[(n, name)]) for name in PATHS)
        print(f"{n >> 10:4d} Ki  compiled {compiled:8.1f} us  numpy {numpy_path:8.1f} us  "
              f"numpy / compiled {numpy_path / compiled:5.2f}")
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

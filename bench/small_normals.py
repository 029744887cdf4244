"""Small normal draws (below the kernel policy's ``min_compiled_elements``): ember's two paths against PyTorch, in
one process, one thread, CPU time.

    PYTHONPATH=$PWD python bench/small_normals.py [--repeat 7]

Each row: least µs of CPU time a call over ``--repeat`` blocks, the three columns' blocks interleaved: ember's
NumPy path (compiled kernels off: what a process's first draws take, before numba is imported or the NumPy-path
budget ``normal_numpy_budget_s`` is spent), ember's compiled transform (the path from then on) and PyTorch, and the
ratio of each ember column to PyTorch's. Sizes 1 and 15 take the scalar path (one pair per two values) on both.
Run against a checkout without the compiled small-draw path (``PYTHONPATH``), the compiled column is left empty.
Nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402 (after the thread count is set)

import ember  # noqa: E402
from ember._kernels.policy import policy  # noqa: E402


def rows(m):
    x32, x64 = m.empty(1000), m.empty(1000, dtype=m.float64)
    out = {f"randn({n})": (lambda n=n: m.randn(n)) for n in (1, 15, 16, 100, 1000, 4096, 16383)}
    out["normal_(0.5, 2) of 1000"] = lambda: x32.normal_(0.5, 2)
    out["randn(1000) float64"] = lambda: m.randn(1000, dtype=m.float64)
    out["normal_(0.5, 2) of 1000 float64"] = lambda: x64.normal_(0.5, 2)
    return out


def per_call_us(fn, seconds: float = 0.02) -> float:
    """µs of CPU time a call, over a block of calls lasting about ``seconds``."""
    calls = max(1, int(seconds / _one(fn)))
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls * 1e6


def _one(fn) -> float:
    start = time.perf_counter()
    fn()
    return max(time.perf_counter() - start, 1e-6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    numpy_off = {"compiled": False}
    has_compiled = hasattr(policy, "normal_numpy_budget_s")
    compiled = {"normal_numpy_budget_s": 0.0} if has_compiled else {}  # the compiled transform at any size
    ours, theirs = rows(ember), rows(torch)
    with policy.override(**compiled):
        for fn in ours.values():  # numba's import and the kernels' load, before any timing
            fn()
    print(f"{'call':34s} {'NumPy path':>11s} {'compiled':>9s} {'PyTorch':>8s}   ratios (µs of CPU a call, least)")
    for name, fn in ours.items():
        best = {"numpy": [], "compiled": [], "torch": []}
        for _ in range(args.repeat):
            with policy.override(**numpy_off):
                best["numpy"].append(per_call_us(fn))
            if has_compiled:
                with policy.override(**compiled):
                    best["compiled"].append(per_call_us(fn))
            best["torch"].append(per_call_us(theirs[name]))
        a, t = min(best["numpy"]), min(best["torch"])
        b = min(best["compiled"], default=float("nan"))
        print(f"{name:34s} {a:11.1f} {b:9.1f} {t:8.1f}   {a / t:6.1f}x {b / t:5.1f}x")


if __name__ == "__main__":
    main()

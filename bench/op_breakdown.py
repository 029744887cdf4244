"""Where the CPU time of one recorded ``x + y`` on 4-element tensors goes, built up piece by piece (one thread).

    python bench/op_breakdown.py               # 15 rounds
    python bench/op_breakdown.py --rounds 9

Each row times a function that does the work of the rows above it and one piece more: NumPy's add of the two
arrays, the floating-point error state around it, the result tensor's fields, then ``graph.apply_same`` (its
call and its tests added) without and with a recorded node, ``ops.elementwise.add`` and the operator itself; apart, the
general path (``Add.apply``) and PyTorch's ``x + y``. Least and median µs per call over the rounds (blocks of 2,000
calls, every row once per round, so drift on a shared machine hits all rows alike); the difference between two
rows is what that piece costs. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import operator
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402 (after the thread counts are set)
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's ember
import ember  # noqa: E402
from ember._backend import quiet_enter, quiet_exit  # noqa: E402
from ember._tensor import Tensor  # noqa: E402
from ember.autograd import graph  # noqa: E402
from ember.ops import elementwise  # noqa: E402

_new = object.__new__
_add = operator.add


def cases(x, y, tx, ty) -> dict:
    """row name -> (under no_grad, a zero-argument call)."""

    def ufunc():
        return _add(x._data, y._data)

    def quiet():
        q = quiet_enter()
        try:
            return _add(x._data, y._data)
        finally:
            quiet_exit(q)

    def tensor():
        q = quiet_enter()
        try:
            out = _add(x._data, y._data)
        finally:
            quiet_exit(q)
        r = _new(Tensor)  # (apply_same's fields, inline as there)
        r._data = out
        r._grad = None
        r._output_nr = 0
        r._vc = [0]
        r._base = None
        r._grad_accumulator = None
        r._hooks = None
        r._post_acc_hooks = None
        r._retains_grad = False
        r._grad_slot = None
        r._grad_fn = None
        r._requires_grad = False
        return r

    xd, yd = x.detach(), y.detach()
    same, add, cls = graph.apply_same, elementwise.add, elementwise.Add
    return {
        "1 NumPy add of the arrays": (False, ufunc),
        "2 + the floating-point error state": (False, quiet),
        "3 + the result tensor's 12 fields": (False, tensor),
        "4 apply_same, nothing recorded (+ its call, its tests)": (False, lambda: same(cls, _add, xd, yd)),
        "5 apply_same recorded (node, edges, shapes)": (False, lambda: same(cls, _add, x, y)),
        "6 ops.elementwise.add recorded": (False, lambda: add(x, y)),
        "7 x + y recorded": (False, lambda: x + y),
        "x + y under no_grad": (True, lambda: x + y),
        "Add.apply(x, y), the general path": (False, lambda: cls.apply(x, y)),
        "PyTorch x + y recorded": (False, lambda: tx + ty),
        "PyTorch x + y under no_grad": (True, lambda: tx + ty),
    }


def per_call(fn, calls: int) -> float:
    start = time.process_time()
    for _ in range(calls // 10):
        fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn()  # noqa: E702 (fewer loop turns per call)
    return (time.process_time() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed block")
    args = parser.parse_args()
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    x, y = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    rows = cases(x, y, tx, ty)
    times: dict[str, list[float]] = {name: [] for name in rows}
    for r in range(args.rounds + 1):  # round 0 warms up
        for name, (no_grad, fn) in rows.items():
            if no_grad:
                with ember.no_grad(), torch.no_grad():
                    t = per_call(fn, args.calls)
            else:
                t = per_call(fn, args.calls)
            if r:
                times[name].append(t)
    print(f"{'row':<58}{'least µs':>10}{'median':>8}")
    for name, ts in times.items():
        ts.sort()
        print(f"{name:<58}{ts[0]:>10.3f}{ts[len(ts) // 2]:>8.3f}")


if __name__ == "__main__":
    main()

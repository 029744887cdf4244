"""The cost of one small op, ember against PyTorch, in µs of CPU time at one thread.

    python bench/op_overhead.py                 # every op, three modes (a few minutes)
    python bench/op_overhead.py --ops x+y relu  # some of them
    python bench/op_overhead.py --rounds 9      # fewer rounds, for a smoke test

Each op runs on tiny tensors (4 elements; a (1, 16) batch for Linear), so what is timed is the per-op
machinery (argument checks, dtype promotion, the output tensor, recording the graph), not the arithmetic.
Three modes: ``grad`` (inputs that require grad: the op is recorded), ``plain`` (inputs that do not) and
``no_grad`` (inputs that require grad, under ``no_grad()``). Both frameworks run in this one process, in
alternating blocks (the order flips every round, so drift on a shared machine hits both alike); the table
shows the least and the median µs per op over the rounds and the ratio of the least. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402 (after the thread counts are set)
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's ember
import ember  # noqa: E402

MODES = ("grad", "plain", "no_grad")


def cases(fw, mode: str) -> dict:
    """name -> a zero-argument call of the op, on ``fw``'s tensors for ``mode``."""
    rng = np.random.default_rng(0)
    rg = mode != "plain"
    x, y = (fw.tensor(rng.standard_normal(4).astype(np.float32), requires_grad=rg) for _ in range(2))
    w = fw.tensor(rng.standard_normal((4, 4)).astype(np.float32), requires_grad=rg)
    lin = fw.nn.Linear(16, 16).requires_grad_(rg)
    xb = fw.tensor(rng.standard_normal((1, 16)).astype(np.float32))
    F = fw.nn.functional
    return {"x+y": lambda: x + y, "x*y": lambda: x * y, "x+1.0": lambda: x + 1.0, "x.sum()": lambda: x.sum(),
            "relu": lambda: F.relu(x), "x@w": lambda: x @ w, "x.view(2,2)": lambda: x.view(2, 2),
            "Linear b1": lambda: lin(xb)}


def per_op(fn, calls: int) -> float:
    """µs of CPU time per call of ``fn`` over ``calls`` calls."""
    start = time.process_time()
    for _ in range(calls // 10):
        fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn()  # noqa: E702 (fewer loop turns per call)
    return (time.process_time() - start) / calls * 1e6


def measure(fns: dict, no_grad: bool, rounds: int, calls: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"torch": [], "ember": []}
    for r in range(rounds + 1):  # round 0 warms up
        for name in (("torch", "ember") if r % 2 == 0 else ("ember", "torch")):
            fw = torch if name == "torch" else ember
            with fw.no_grad() if no_grad else fw.enable_grad():
                t = per_op(fns[name], calls)
            if r:
                times[name].append(t)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", nargs="+", help="op names (default: all)")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--rounds", type=int, default=25, help="alternating rounds per row")
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed block")
    args = parser.parse_args()
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    print(f"{'op':<14}{'mode':<9}{'PyTorch min':>12}{'median':>8}{'ember min':>10}{'median':>8}{'ratio':>7}")
    for mode in args.modes:
        ops = {"torch": cases(torch, mode), "ember": cases(ember, mode)}
        for op in args.ops or list(ops["torch"]):
            t = measure({k: v[op] for k, v in ops.items()}, mode == "no_grad", args.rounds, args.calls)
            tm, em = min(t["torch"]), min(t["ember"])
            print(f"{op:<14}{mode:<9}{tm:>12.2f}{statistics.median(t['torch']):>8.2f}{em:>10.2f}"
                  f"{statistics.median(t['ember']):>8.2f}{em / tm:>7.2f}", flush=True)


if __name__ == "__main__":
    main()

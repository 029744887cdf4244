"""ember alone: each op's forward and backward in wall clock (exclusive of the ops nested in it), per step.

    OMP_NUM_THREADS=1 python bench/op_wall.py llama16 --json one.json
    OMP_NUM_THREADS=2 python bench/op_wall.py llama16 --json two.json
    python bench/op_wall.py --compare one.json two.json     # the largest rows side by side, and their ratio

Why: ``bench/step_split.py`` splits a step's CPU time at one thread; at two threads what matters is wall clock, and
which ops gain from the second core (OpenBLAS's GEMMs, ember's split kernels) or lose to the hand-off. Run the two
thread counts in separate processes (OpenBLAS's thread count is fixed at start-up), on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(1, os.path.dirname(HERE))


def measure(name: str, steps: int) -> dict[str, float]:
    import workloads
    from _node_phases import wrap_node_phases

    import ember

    totals: dict[str, float] = defaultdict(float)
    nested = [0.0]  # the time of the ops running inside the current one, per level

    def wrap(label, fn):
        def timed(*args, **kwargs):
            nested.append(0.0)
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                totals[label] += elapsed - nested.pop()
                nested[-1] += elapsed

        return timed

    builder, batch = workloads.WORKLOADS[name][:2]
    step = builder(ember, batch)
    for i in range(3):
        step(i)
    wrap_node_phases(wrap)
    for i in range(3):
        step(i)
    totals.clear()
    start = time.perf_counter()
    for i in range(steps):
        step(i)
    wall = (time.perf_counter() - start) / steps * 1e3
    rows = {label: t / steps * 1e3 for label, t in totals.items()}
    rows["<outside the ops>"] = wall - sum(rows.values())
    rows["<step>"] = wall
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", nargs="?")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--json", help="write the rows (ms per step) here")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two --json files: rows side by side")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    if args.compare:
        a, b = (json.load(open(f)) for f in args.compare)
        print(f"{'op':<40}{'A (ms)':>10}{'B (ms)':>10}{'B / A':>8}")
        for label in sorted(a, key=lambda k: -a[k])[:args.top]:
            ratio = b.get(label, 0.0) / a[label] if a[label] else float("nan")
            print(f"{label:<40}{a[label]:>10.2f}{b.get(label, 0.0):>10.2f}{ratio:>8.2f}")
        return
    if not args.workload:
        parser.error("a workload (bench/workloads.py) or --compare")
    rows = measure(args.workload, args.steps)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f)
    for label in sorted(rows, key=lambda k: -rows[k])[:args.top]:
        print(f"{label:<40}{rows[label]:>10.2f}")


if __name__ == "__main__":
    main()

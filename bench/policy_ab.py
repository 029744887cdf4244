"""ember at two threads with one ``policy`` setting off and on, alternating in one process: per-thread CPU time and
wall clock a step.

    python bench/policy_ab.py inter_op wgan_gp32 per_sample_grads64 cnn64 resnet32 convt32
    python bench/policy_ab.py --threads 1 inter_op wgan_gp32

The field (a boolean of ``ember._kernels.policy``) is set False, then True, each for a block of steps after one
step unmeasured, the order flipping every round, so drift on a shared machine hits both alike. Per step, medians over
the rounds: the calling thread's CPU (``main``), ember's workers', every other thread's (OpenBLAS's), the wall clock
(and its least) and the hand-offs to ember's workers (``thread_share.py``'s meters).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if not os.environ.get("PYTHONPATH"):  # this checkout's ember
    sys.path.insert(1, os.path.dirname(HERE))


def measure(field: str, name: str, rounds: int, steps: int) -> None:
    from thread_share import Meter, _count_handoffs
    from workloads import WORKLOADS

    import ember
    from ember._kernels import policy

    build, batch, label = WORKLOADS[name]
    step = build(ember, batch)
    meter, handoffs = Meter(), _count_handoffs()
    per = {value: [[], [], [], [], []] for value in (False, True)}  # main, workers, other, wall, hand-offs
    for r in range(rounds):
        for value in ((False, True) if r % 2 == 0 else (True, False)):
            with policy.override(**{field: value}):
                step(0)
                handoffs.clear()
                before, w0 = meter.read(), time.perf_counter()
                for i in range(steps):
                    step(i)
                w1, after = time.perf_counter(), meter.read()
            row = per[value]
            for i in range(3):
                row[i].append((after[i] - before[i]) / steps / 1e6)
            row[3].append((w1 - w0) / steps * 1e3)
            row[4].append(len(handoffs) / steps)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"{name} ({label}), threads {ember.get_num_threads()}, ms a step (medians of {rounds} x {steps}; "
          f"load {load})")
    for value, row in per.items():
        main, workers, other, wall, hand = (statistics.median(r) for r in row)
        print(f"  {field}={value!s:5s} main {main:7.2f}  workers {workers:6.2f}  other {other:6.2f}  all "
              f"{main + workers + other:7.2f}  wall {wall:7.2f} (least {min(row[3]):7.2f})  hand-offs {hand:.0f}",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("field", help="a boolean field of ember._kernels.policy")
    parser.add_argument("workloads", nargs="+")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)  # before NumPy loads
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # as thread_share.py and run_all.py
    import ember

    ember.set_num_threads(args.threads)
    for name in args.workloads:
        measure(args.field, name, args.rounds, args.steps)


if __name__ == "__main__":
    main()

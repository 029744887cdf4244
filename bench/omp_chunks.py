"""ember at two threads with numba's OpenMP threads off, on beside ember's pool, and on for the pool's chunks too:
the three alternating in one process (``policy.override``), per-thread CPU time and wall clock a step.

    EMBER_OMP_KERNELS=1 python bench/omp_chunks.py resnet32 wgan_gp32 per_sample_grads64 cnn64
    GOMP_SPINCOUNT=300000 EMBER_OMP_KERNELS=1 python bench/omp_chunks.py resnet32   # GNU OpenMP's default spin

Configurations: ``off`` (``policy.omp`` and ``omp_gemm`` off: ember's Python pool and OpenBLAS's threads), ``pool``
(``omp`` on, ``omp_chunks`` off: the row kernels, BatchNorm and ReLU as OpenMP regions, the convolutions' chunks on
ember's pool), ``chunks`` (``omp`` and ``omp_chunks`` on: one set of threads, ``_omp.run_chunks``). Each round runs a
block of steps per configuration, after one step of it unmeasured. Per step, medians over the rounds: the calling
thread's CPU (``main``), ember's workers', every other thread's (numba's OpenMP worker, OpenBLAS's), the wall clock
(and its least) and the hand-offs to ember's workers. ``EMBER_OMP_KERNELS=1`` must be set for the process (numba's
layer is chosen on first use; ``omp_gemm`` follows it); the spin of numba's workers is ``policy.omp_spin_count``
unless ``GOMP_SPINCOUNT`` is set. On a shared machine run it raised (``setsid``, ``echo -15 >
/proc/self/autogroup``, ``nice -n -15``): the wall clock still moves with the load, the CPU split less.
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

CONFIGS = {"off": {"omp": False, "omp_gemm": False}, "pool": {"omp": True, "omp_chunks": False},
           "chunks": {"omp": True, "omp_chunks": True}}


def measure(name: str, rounds: int, steps: int, configs: dict = CONFIGS) -> None:
    """Each of ``configs`` (name: the ``policy`` fields it overrides) in turn, every round, on one model of
    ``name``: the medians printed a row per configuration."""
    from thread_share import Meter, _count_handoffs
    from workloads import WORKLOADS

    import ember
    from ember._kernels import policy

    build, batch, label = WORKLOADS[name]
    step = build(ember, batch)
    meter, handoffs = Meter(), _count_handoffs()
    per = {c: [[], [], [], [], []] for c in configs}  # main, workers, other, wall, hand-offs: a step, per round
    for r in range(rounds):
        order = list(configs.items())
        for config, fields in (order if r % 2 == 0 else order[::-1]):  # the order flipping every round
            with policy.override(**fields):
                step(0)
                handoffs.clear()
                before, w0 = meter.read(), time.perf_counter()
                for i in range(steps):
                    step(i)
                w1, after = time.perf_counter(), meter.read()
            row = per[config]
            for i in range(3):
                row[i].append((after[i] - before[i]) / steps / 1e6)
            row[3].append((w1 - w0) / steps * 1e3)
            row[4].append(len(handoffs) / steps)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"{name} ({label}), threads {ember.get_num_threads()}, ms a step (medians of {rounds} x {steps}; "
          f"load {load})")
    for config, row in per.items():
        main, workers, other, wall, hand = (statistics.median(r) for r in row)
        print(f"  {config:15s} main {main:7.2f}  workers {workers:6.2f}  other {other:6.2f}  all "
              f"{main + workers + other:7.2f}  wall {wall:7.2f} (least {min(row[3]):7.2f})  hand-offs {hand:.0f}",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="+")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    if os.environ.get("EMBER_OMP_KERNELS", "").strip().lower() not in ("1", "on", "true", "yes"):
        parser.error("set EMBER_OMP_KERNELS=1 (numba's OpenMP layer is chosen on first use)")
    import ember

    ember.set_num_threads(args.threads)
    for name in args.workloads:
        measure(name, args.rounds, args.steps)


if __name__ == "__main__":
    main()

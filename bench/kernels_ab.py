"""ember alone: its compiled kernels against its NumPy kernels, alternating in one process.

    python bench/kernels_ab.py resnet32 cnn64 emb_sgd gpt16 gpt_infer64        # one thread, CPU time per step
    python bench/kernels_ab.py --threads 2 --wall resnet32                      # two threads, wall clock

One model per workload (``workloads.py``), warmed up under both settings of ``ember._kernels.policy.compiled``,
then 9 rounds of 4 steps under each setting, the order flipping every round, so drift on a shared machine hits
both alike. Prints the median ms per step of each and their ratio. ``--threads`` sets OpenBLAS's and ember's
threads (before NumPy loads).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def compare(name: str, clock, rounds: int = 9, steps: int = 4) -> tuple[float, float]:
    """(median ms per step with the NumPy kernels, with the compiled kernels) for one workload."""
    from workloads import WORKLOADS

    import ember
    from ember._kernels import policy

    build, batch, _ = WORKLOADS[name]
    step = build(ember, batch)
    times: dict[bool, list[float]] = {True: [], False: []}
    for compiled in (True, False):
        with policy.override(compiled=compiled):
            for i in range(3):
                step(i)
    for r in range(rounds):
        for compiled in ((True, False) if r % 2 else (False, True)):
            with policy.override(compiled=compiled):
                start = clock()
                for i in range(steps):
                    step(i)
                times[compiled].append((clock() - start) / steps * 1e3)
    return statistics.median(times[False]), statistics.median(times[True])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="+")
    parser.add_argument("--wall", action="store_true", help="wall clock instead of the process's CPU time")
    parser.add_argument("--threads", type=int, default=1, help="BLAS and ember threads (default 1)")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)  # before NumPy loads
    clock = time.perf_counter if args.wall else time.process_time
    for name in args.workloads:
        numpy_ms, compiled_ms = compare(name, clock)
        print(f"{name:12s} NumPy kernels {numpy_ms:8.2f} ms  compiled {compiled_ms:8.2f} ms  "
              f"compiled / NumPy {compiled_ms / numpy_ms:.2f}", flush=True)


if __name__ == "__main__":
    main()

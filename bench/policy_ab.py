"""ember at two threads with one ``policy`` setting off and on, alternating in one process: per-thread CPU time and
wall clock a step.

    python bench/policy_ab.py inter_op wgan_gp32 per_sample_grads64 cnn64 resnet32 convt32
    python bench/policy_ab.py --threads 1 inter_op wgan_gp32
    python bench/policy_ab.py linear_grads_at_once,linear_forward_halves llama16   # two fields, off and on together

The field (a boolean of ``ember._kernels.policy``, or several, comma-separated, set together) is set False, then
True, each for a block of steps after one step unmeasured, the order flipping every round, so drift on a shared
machine hits both alike. Per step, medians over the rounds: the calling thread's CPU (``main``), ember's workers',
every other thread's (OpenBLAS's), the wall clock (and its least) and the hand-offs to ember's workers
(``omp_chunks.py``'s loop and ``thread_share.py``'s meters).
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if not os.environ.get("PYTHONPATH"):  # this checkout's ember
    sys.path.insert(1, os.path.dirname(HERE))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("field", help="a boolean field of ember._kernels.policy (several: comma-separated)")
    parser.add_argument("workloads", nargs="+")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)  # before NumPy loads
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # as thread_share.py and run_all.py
    import ember

    ember.set_num_threads(args.threads)
    from omp_chunks import measure

    fields = args.field.split(",")
    configs = {f"{args.field}={value}": dict.fromkeys(fields, value) for value in (False, True)}
    for name in args.workloads:
        measure(name, args.rounds, args.steps, configs)


if __name__ == "__main__":
    main()

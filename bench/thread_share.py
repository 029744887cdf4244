"""ember alone: how much of a step's CPU time runs on the calling thread while the other cores idle.

    python bench/thread_share.py --threads 2 resnet32 cnn64 convt32
    python bench/thread_share.py --threads 2 --ops resnet32        # and per op (forward / backward)
    PYTHONPATH=../other-checkout python bench/thread_share.py ...  # another checkout's ember, to compare

Wall-clock ratios at two threads are unreliable on a shared machine; CPU time per thread is not: the kernel counts
each thread's time on a core (``/proc/self/task/*/schedstat``, nanoseconds) whatever else the machine runs. For
each workload (``workloads.py``), per step: the calling thread's CPU time (``main``), that of ember's workers and
that of every other thread of the process (OpenBLAS's), and ``main - workers``, the calling thread's time that no
worker matched: a lower bound on the time the step ran on one core (with work split evenly over two threads, main
and workers would be equal). OpenBLAS's threads spin a while after a threaded GEMM before they sleep (unless
``OPENBLAS_THREAD_TIMEOUT`` is small: this script sets 4, as ember does when it is imported before NumPy, and
run_all.py); that spin counts as theirs.

The hand-offs per step (chunks handed to ember's workers) are counted too: each wakes a sleeping worker, which on the
idle 2-core VM costs 50-300 µs of wall clock that no thread's CPU time shows; and the times the calling thread and the
workers blocked per step (``blocked``: on the worker's locks, or on the GIL while the other thread holds it), each a
wake of the same cost.

``--ops`` also times every op's forward and backward (each ``Node`` subclass), the optimizer's step, and the rest
(the autograd engine, Python between ops) on the calling thread's and ember's workers' CPU clocks, and prints them
largest ``main - workers`` first (OpenBLAS's threads have no clock readable per op; their total is per step).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if not os.environ.get("PYTHONPATH"):  # this checkout's ember (PYTHONPATH=another/checkout measures that one's)
    sys.path.insert(1, os.path.dirname(HERE))


def _task_times() -> dict[int, int]:
    """CPU time (ns) of every thread of this process, by thread id."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                out[int(tid)] = int(f.read().split()[0])
        except OSError:  # a thread that just ended
            pass
    return out


def _sleeps(tid: int) -> int:
    """How many times thread ``tid`` has blocked (``voluntary_ctxt_switches``: on a lock, the GIL, a futex): each
    wants a wake later, which on the idle 2-core VM costs about what a hand-off does."""
    try:
        with open(f"/proc/self/task/{tid}/status") as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches"):
                    return int(line.split()[1])
    except OSError:  # a thread that just ended
        pass
    return 0


class Meter:
    """(main, ember's workers, other threads) CPU ns at a reading; main is the calling thread."""

    def __init__(self) -> None:
        self.main_tid = threading.get_native_id()

    def read(self) -> tuple[int, int, int]:
        t = _task_times()
        main = t.pop(self.main_tid)
        workers = {th.native_id for th in threading.enumerate() if th.name.startswith("ember-intra-op")}
        ours = sum(v for k, v in t.items() if k in workers)
        return main, ours, sum(t.values()) - ours

    def sleeps(self) -> tuple[int, int]:
        """(main, ember's workers) times blocked so far (``_sleeps``)."""
        workers = [th.native_id for th in threading.enumerate() if th.name.startswith("ember-intra-op")]
        return _sleeps(self.main_tid), sum(_sleeps(t) for t in workers)

    def clocks(self) -> list[int]:
        """The CPU clocks of the calling thread and ember's workers (cheap to read: no /proc)."""
        workers = [th.ident for th in threading.enumerate() if th.name.startswith("ember-intra-op")]
        ids = [threading.get_ident(), *workers]
        return [time.pthread_getcpuclockid(i) for i in ids]


class OpMeter:
    """Per op (forward, backward of each Node subclass, optimizer step): summed CPU ns of each thread group."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self.totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        self.depth = 0
        self.ids: list[int] = []

    def read(self) -> tuple[int, int]:
        """(main, ember's workers) CPU ns."""
        main = time.clock_gettime_ns(self.ids[0])
        return main, sum(time.clock_gettime_ns(i) for i in self.ids[1:])

    def wrap(self, label: str, fn):
        def timed(*args, **kwargs):
            if self.depth or not self.ids:
                return fn(*args, **kwargs)
            self.depth = 1
            before = self.read()
            try:
                return fn(*args, **kwargs)
            finally:
                after = self.read()
                self.depth = 0
                row = self.totals[label]
                row[0] += after[0] - before[0]
                row[1] += after[1] - before[1]
                row[2] += 1

        return timed

    def install(self) -> None:
        from _node_phases import wrap_node_phases

        from ember.optim import Optimizer

        wrap_node_phases(self.wrap)
        for cls in [Optimizer, *Optimizer.__subclasses__()]:
            if "step" in cls.__dict__:
                cls.step = self.wrap(f"{cls.__name__}.step", cls.__dict__["step"])


_HANDOFFS: list = []  # an entry per chunk handed to one of ember's workers


def _count_handoffs() -> list:
    """``_HANDOFFS``, emptied, and from now on given an entry at every chunk handed to one of ember's workers
    (``_Worker.submit``): each a wake of a sleeping thread, 50-300 µs of wall clock on the idle 2-core VM
    (docs/benchmarks.md), which the threads' CPU time does not show."""
    from ember import _parallel

    submit = _parallel._Worker.submit
    if not getattr(submit, "counted", False):
        def counted(self, *args):
            _HANDOFFS.append(None)
            return submit(self, *args)

        counted.counted = True
        _parallel._Worker.submit = counted
    _HANDOFFS.clear()
    return _HANDOFFS


def measure(name: str, steps: int, rounds: int, ops: bool) -> None:
    from workloads import WORKLOADS

    import ember

    build, batch, label = WORKLOADS[name]
    handoffs = _count_handoffs()
    meter = Meter()
    opm = OpMeter(meter)
    if ops:
        opm.install()
    step = build(ember, batch)
    for i in range(3):
        step(i)
    opm.ids = meter.clocks()  # (the workers exist now)
    opm.totals.clear()
    per: list[list[float]] = [[], [], [], []]  # main, workers, other threads, wall: ms per step, per round
    handoffs.clear()
    slept = [0, 0]  # main's and the workers' blocks, in all
    for _ in range(rounds):
        s0 = meter.sleeps()
        before, w0 = meter.read(), time.perf_counter()
        for i in range(steps):
            step(i)
        w1, after = time.perf_counter(), meter.read()
        s1 = meter.sleeps()
        slept = [slept[0] + s1[0] - s0[0], slept[1] + s1[1] - s0[1]]
        for i in range(3):
            per[i].append((after[i] - before[i]) / steps / 1e6)
        per[3].append((w1 - w0) / steps * 1e3)
    main, ours, blas, wall = (statistics.median(p) for p in per)
    print(f"{name} ({label}), threads {ember.get_num_threads()}, ms per step (medians of {rounds} x {steps}): "
          f"main {main:.2f}, ember workers {ours:.2f}, other threads {blas:.2f}; main - workers {main - ours:.2f} "
          f"({(main - ours) / main:.0%} of main); wall {wall:.2f}; hand-offs {len(handoffs) / rounds / steps:.0f}; "
          f"blocked: main {slept[0] / rounds / steps:.0f}, workers {slept[1] / rounds / steps:.0f}", flush=True)
    if ops:
        n = rounds * steps
        in_ops = sum(r[0] for r in opm.totals.values())
        rows = sorted(opm.totals.items(), key=lambda kv: -(kv[1][0] - kv[1][1]))
        print(f"  {'op':34s} {'calls':>5s} {'main':>7s} {'workers':>7s} {'main-wk':>7s}  ms/step")
        for label_, (m, o, c) in rows:
            if m / n < 0.05e6:
                continue
            print(f"  {label_:34s} {c / n:5.1f} {m / n / 1e6:7.2f} {o / n / 1e6:7.2f} {(m - o) / n / 1e6:7.2f}")
        rest = (sum(per[0]) * steps * 1e6 - in_ops) / n / 1e6
        print(f"  {'rest (engine, Python between ops)':34s} {'':5s} {rest:7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="+")
    parser.add_argument("--threads", type=int, default=2, help="BLAS and ember threads (default 2)")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ops", action="store_true", help="per op and phase as well")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)  # before NumPy loads
    # as ember sets it when imported before NumPy, and run_all.py for its children (workloads.py imports NumPy first)
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    for name in args.workloads:
        measure(name, args.steps, args.rounds, args.ops)


if __name__ == "__main__":
    main()

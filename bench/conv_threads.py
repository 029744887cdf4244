"""ember alone: each convolution sub-step's CPU time on the calling thread and on ember's workers, at one and at two
threads, in one process, alternating.

    python bench/conv_threads.py resnet32                  # 1 and 2 threads, per sub-step
    python bench/conv_threads.py --configs 1 2 2b resnet32  # and 2b: ember's 2 threads, OpenBLAS whole GEMMs on 1
    python bench/conv_threads.py --configs 1 2 2m resnet32  # and 2m: numba's OpenMP threads where a kernel can
    PYTHONPATH=../other-checkout python bench/conv_threads.py resnet32   # another checkout's ember

Why: at two threads a step's CPU time (calling thread + workers) exceeds its one-thread time; this says which
sub-step grows. CPU time per thread (``time.thread_time_ns`` inside a sub-step, on whichever thread runs it) is
what the kernel counts for that thread, whatever else the machine runs; wall clock on a shared machine is not.

The process starts with OpenBLAS on 2 threads (as ``bench/run_all.py --threads 2``). Configurations, switched
between rounds: ``1``: ember on 1 thread, OpenBLAS set to 1 thread at run time and ``policy.blas_threads`` 1 (as
``--threads 1``: every GEMM whole, on one core); ``2``: ember and OpenBLAS on 2 (as ``--threads 2``); ``2b``: ember
on 2, OpenBLAS on 1 and ``policy.blas_threads`` 1 (no GEMM cut into blocks: what ``one_blas_thread`` gives every
convolution when on); ``2o``: config ``2`` with ``policy.one_blas_thread`` the opposite of the shipped setting (``2``
keeps it: off since it measured slower idle); ``2m``: config ``2`` with ``policy.omp`` on (the kernels that have a
``kernel.parallel`` form split over numba's OpenMP threads, not ember's Python workers); ``2w``: config ``2`` with
``policy.winograd_bands_nchw`` off (Winograd on narrow images between whole-array layout copies on the calling thread,
as before 2026-12-06). Each configuration's wall
clock per step is printed too (on a shared machine it flatters hand-offs between threads: a wake to a busy core is
cheap).

Sub-steps: the compiled kernels (im2col / col2im, Winograd transforms, layout copies, BatchNorm, ReLU), the GEMMs
(``matmul_blocks`` as each module calls it, labelled by module), and each autograd op's forward / backward as a
whole (``op:``, the calling thread's and the workers' CPU clocks around it; what no sub-step accounts for is
Python between them, hand-offs and NumPy passes), and the hand-offs to ember's workers (the calling thread's CPU in
``submit``).
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import importlib
import os
import pkgutil
import statistics
import sys
import threading
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(1, os.path.dirname(HERE))


def _process_ns() -> int:
    """CPU time of every thread of the process (ns)."""
    return time.clock_gettime_ns(time.CLOCK_PROCESS_CPUTIME_ID)


def _openblas_setter():
    """NumPy's OpenBLAS ``set_num_threads``: the one ember holds to one thread (``ember._kernels.openblas``), else
    found here (the symbol's name depends on the build)."""
    try:
        from ember._kernels import openblas
    except ImportError:  # (an older checkout)
        openblas = None
    if openblas is not None and openblas.functions():
        return openblas.functions()[0]
    import numpy

    libs = glob.glob(os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs", "*openblas*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                return fn
    raise RuntimeError("NumPy's OpenBLAS not found")


class SubSteps:
    """Per label, summed CPU ns on the calling thread and on other threads, and calls."""

    def __init__(self) -> None:
        self.main = threading.get_ident()
        self.totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        self.worker_clocks: list[int] = []
        self.depth = 0

    def kernel(self, label: str, fn):
        def timed(*args, **kwargs):
            t0 = time.thread_time_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                row = self.totals[label]
                row[0 if threading.get_ident() == self.main else 1] += time.thread_time_ns() - t0
                row[2] += 1

        if hasattr(fn, "compiled"):  # an ember kernel: its ``parallel`` dispatcher timed too (numba's OpenMP
            subs = self             # threads' CPU is in "other threads", not in the kernel's row)

            class Timed:
                __call__ = staticmethod(timed)

                @property
                def parallel(self):
                    return subs.kernel(label + " (omp)", fn.parallel)

            return Timed()
        return timed

    def op(self, label: str, fn):
        """An autograd op: the calling thread's CPU and every worker's, around the whole call."""
        def timed(*args, **kwargs):
            if self.depth or threading.get_ident() != self.main:
                return fn(*args, **kwargs)
            self.depth = 1
            m0 = time.thread_time_ns()
            w0 = sum(time.clock_gettime_ns(c) for c in self.worker_clocks)
            try:
                return fn(*args, **kwargs)
            finally:
                row = self.totals[label]
                row[0] += time.thread_time_ns() - m0
                row[1] += sum(time.clock_gettime_ns(c) for c in self.worker_clocks) - w0
                row[2] += 1
                self.depth = 0

        return timed

    def install(self) -> None:
        from _node_phases import wrap_node_phases

        import ember._kernels as kernels_pkg
        import ember.func._per_example as per_example
        import ember.nn._ops.conv as conv
        import ember.nn._ops.conv_nchw as conv_nchw
        import ember.nn._ops.conv_transpose_winograd as ctw
        import ember.nn._ops.winograd as winograd
        from ember._kernels import _jit

        # every compiled kernel its callers reach through its module (``compiled.input_tiles(...)``)
        for info in pkgutil.iter_modules(kernels_pkg.__path__):
            if info.name.startswith("_") or info.name == "policy":
                continue
            mod = importlib.import_module(f"ember._kernels.{info.name}")
            for attr, value in list(vars(mod).items()):
                if isinstance(value, _jit.kernel) and not (value._inline or value._reduction):
                    setattr(mod, attr, self.kernel(f"{info.name}.{attr}", value))
        for mod, label in ((conv, "gemm conv (batch-last)"), (conv_nchw, "gemm conv_nchw"),
                           (winograd, "gemm winograd"), (ctw, "gemm convT winograd"),
                           (per_example, "gemm per-example")):
            for attr in ("matmul_blocks", "matmul", "stack_matmul"):
                if hasattr(mod, attr):
                    setattr(mod, attr, self.kernel(f"{label} ({attr})", getattr(mod, attr)))
        from ember import _parallel

        submit = _parallel._Worker.submit

        def counted(worker, *args):  # hand-offs to ember's workers (CPU time of the submitting call)
            t0 = time.thread_time_ns()
            submit(worker, *args)
            row = self.totals["hand-offs (submit)"]
            row[0] += time.thread_time_ns() - t0
            row[2] += 1

        _parallel._Worker.submit = counted
        wrap_node_phases(lambda name, fn: self.op(f"op:{name}", fn))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload")
    parser.add_argument("--configs", nargs="+", default=["1", "2"])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--min-ms", type=float, default=0.2, help="hide sub-steps below this (ms per step)")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = "2"
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    from workloads import WORKLOADS

    import ember
    from ember._kernels.policy import policy

    blas = _openblas_setter()
    subs = SubSteps()
    subs.install()
    build, batch, label = WORKLOADS[args.workload]
    step = build(ember, batch)

    shipped_hold = policy.one_blas_thread

    def configure(cfg: str) -> None:
        threads, blas_threads = {"1": (1, 1), "2": (2, 2), "2b": (2, 1), "2o": (2, 2), "2m": (2, 2), "2w": (2, 2)}[cfg]
        ember.set_num_threads(threads)
        blas(blas_threads)
        policy.blas_threads = blas_threads
        policy.one_blas_thread = shipped_hold != (cfg == "2o")
        policy.omp = cfg == "2m"
        policy.winograd_bands_nchw = cfg != "2w"

    for cfg in args.configs:
        configure(cfg)
        for i in range(2):
            step(i)
    subs.worker_clocks = [time.pthread_getcpuclockid(t.ident) for t in threading.enumerate()
                          if t.name.startswith("ember-intra-op")]
    rounds: dict[str, list[dict[str, list[int]]]] = {c: [] for c in args.configs}
    whole: dict[str, list[tuple[float, float, float, float]]] = {c: [] for c in args.configs}
    for r in range(args.rounds):
        for cfg in (args.configs if r % 2 == 0 else args.configs[::-1]):
            configure(cfg)
            subs.totals.clear()
            t0 = time.perf_counter_ns()
            a0 = _process_ns()
            m0 = time.thread_time_ns()
            w0 = sum(time.clock_gettime_ns(c) for c in subs.worker_clocks)
            for i in range(args.steps):
                step(i)
            m1 = time.thread_time_ns()
            w1 = sum(time.clock_gettime_ns(c) for c in subs.worker_clocks)
            a1 = _process_ns()
            t1 = time.perf_counter_ns()
            others = (a1 - a0) - (m1 - m0) - (w1 - w0)  # OpenBLAS's threads (and numba's, Python's others)
            whole[cfg].append(((m1 - m0) / args.steps / 1e6, (w1 - w0) / args.steps / 1e6, others / args.steps / 1e6,
                               (t1 - t0) / args.steps / 1e6))
            rounds[cfg].append({k: list(v) for k, v in subs.totals.items()})
    print(f"{args.workload} ({label}); ms of CPU per step, medians of {args.rounds} rounds x {args.steps} steps; "
          f"load {os.getloadavg()[0]:.1f}")
    for cfg in args.configs:
        m = statistics.median(w[0] for w in whole[cfg])
        wk = statistics.median(w[1] for w in whole[cfg])
        ot = statistics.median(w[2] for w in whole[cfg])
        walls = sorted(w[3] for w in whole[cfg])
        print(f"  config {cfg}: main {m:.2f} + workers {wk:.2f} + other threads {ot:.2f} = {m + wk + ot:.2f}; "
              f"wall clock median {statistics.median(walls):.2f} (min {walls[0]:.2f}, max {walls[-1]:.2f})")
    labels = sorted({k for c in args.configs for rd in rounds[c] for k in rd})

    def med(cfg: str, key: str, i: int) -> float:
        return statistics.median(rd.get(key, [0, 0, 0])[i] for rd in rounds[cfg]) / args.steps / 1e6

    head = "".join(f" {'main ' + c:>9s} {'wk ' + c:>8s} {'sum ' + c:>8s}" for c in args.configs)
    print(f"  {'sub-step':44s} {'calls':>5s}{head}")
    table = []
    for key in labels:
        vals = [(med(c, key, 0), med(c, key, 1)) for c in args.configs]
        if max(a + b for a, b in vals) < args.min_ms:
            continue
        table.append((key, vals))
    table.sort(key=lambda kv: (not kv[0].startswith("op:"), -sum(kv[1][-1])))
    for key, vals in table:
        calls = statistics.median(rd.get(key, [0, 0, 0])[2] for rd in rounds[args.configs[-1]]) / args.steps
        cells = "".join(f" {a:9.2f} {b:8.2f} {a + b:8.2f}" for a, b in vals)
        print(f"  {key:44s} {calls:5.0f}{cells}")


if __name__ == "__main__":
    main()

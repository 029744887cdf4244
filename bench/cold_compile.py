"""ember's first steps on an empty numba cache: each workload's first step (CPU time, compiling included) and the CPU
time numba spent on each compiled kernel, largest first.

    NUMBA_CACHE_DIR=$(mktemp -d) python bench/cold_compile.py per_sample_grads64 wgan_gp32 resnet32 gpt16
    NUMBA_CACHE_DIR=$(mktemp -d) EMBER_OMP_KERNELS=1 python bench/cold_compile.py ...   # with ``policy.omp`` on
    NUMBA_CACHE_DIR=$(mktemp -d) python bench/cold_compile.py --program tests/programs/binary_evidential.py

``--program`` runs a whole PyTorch script under ``ember.compat`` instead (its own thread settings; its output
discarded) and reports its CPU time from ember's import on, with the same table.

Run it with ``NUMBA_CACHE_DIR`` a new, empty folder (else the kernels load from the cache and the figures are the
warm start's). Each kernel's time is the CPU its dispatcher's first call for a signature took (numba compiling it;
a helper compiled into a kernel is counted in that kernel's time as well as its own line, so the lines add up to
more than the steps). ``[par]`` marks the ``kernel.parallel`` compilation (numba's ``parallel=True``: its own
machine code beside the serial kernel's). Two threads, as the two-thread benchmark rows run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if not os.environ.get("PYTHONPATH"):  # this checkout's ember
    sys.path.insert(1, os.path.dirname(HERE))

_SECONDS: dict[str, float] = defaultdict(float)  # CPU seconds compiling, per kernel
_SIGNATURES: dict[str, int] = defaultdict(int)


def _time_compilations() -> None:
    """Every ember kernel's dispatcher, as it is made, counts the CPU time of its compilations in ``_SECONDS``."""
    from ember._kernels import _jit

    make = _jit.kernel.compiled

    def compiled(self, parallel: bool = False):
        dispatcher = make(self, parallel)
        if getattr(dispatcher, "_ember_timed", False):
            return dispatcher
        compile_for_args = dispatcher._compile_for_args
        label = f"{self.py.__module__.rsplit('.', 1)[-1]}.{self.__name__}{' [par]' if parallel else ''}"

        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return compile_for_args(*args, **kwargs)
            finally:
                _SECONDS[label] += time.process_time() - start
                _SIGNATURES[label] += 1

        dispatcher._compile_for_args = timed
        dispatcher._ember_timed = True
        return dispatcher

    _jit.kernel.compiled = compiled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*")
    parser.add_argument("--program", help="a PyTorch script (and no workloads) run under ember.compat")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--top", type=int, default=30, help="kernels listed (default 30)")
    args = parser.parse_args()
    if args.program:
        _run_program(args.program, args.top)
        return
    from workloads import WORKLOADS

    import ember

    ember.set_num_threads(args.threads)
    _time_compilations()
    cpu, wall = time.process_time(), time.perf_counter()
    for name in args.workloads:
        build, batch, label = WORKLOADS[name]
        start = time.process_time()
        build(ember, batch)(0)
        print(f"{name} ({label}): first step {time.process_time() - start:.2f} s of CPU", flush=True)
    _report(cpu, wall, args.top)


def _report(cpu: float, wall: float, top: int) -> None:
    print(f"all: {time.process_time() - cpu:.1f} s of CPU, {time.perf_counter() - wall:.1f} s of wall clock; "
          f"{len(_SECONDS)} kernels compiled, {sum(_SIGNATURES.values())} signatures")
    for label, seconds in sorted(_SECONDS.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {seconds:6.2f} s  {_SIGNATURES[label]:2d}  {label}")


def _run_program(script: str, top: int) -> None:
    """``script`` under ``ember.compat`` (as ``python -m ember.compat script``), its output discarded; then the
    table."""
    import contextlib
    import io
    import runpy

    cpu, wall = time.process_time(), time.perf_counter()
    import ember.compat

    ember.compat.install()
    _time_compilations()
    script = os.path.abspath(script)
    sys.argv, sys.path[0] = [script], os.path.dirname(script)
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(script, run_name="__main__")
    _report(cpu, wall, top)


if __name__ == "__main__":
    main()

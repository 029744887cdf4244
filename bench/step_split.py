"""ember alone, one thread: where a workload's step spends its CPU time, and how much of it is Python.

    python bench/step_split.py per_sample_grads64 wgan_gp32
    python bench/step_split.py --batch 1 wgan_gp32          # the same step on tiny tensors: the fixed cost
    python bench/step_split.py --torch per_sample_grads64  # and PyTorch's step time, alternating with ember's
    PYTHONPATH=../other-checkout python bench/step_split.py ...  # another checkout's ember, to compare

Each step of a workload (``workloads.py``) is timed by the process's CPU clock, its functions wrapped so that each
counts its own time (what it calls among the wrapped ones excluded):

- ``GEMM``: ember's matrix-product entry points (``_parallel.matmul``, ``matmul_blocks``, ``stack_matmul``,
  ``_kernels.openblas.matmul``; a plain ``xp.matmul`` inside an op counts as the op's);
- ``kernel NAME``: each compiled (numba) kernel;
- ``Op.forward`` / ``Op.backward``: every autograd node's formula, less the GEMMs and kernels it calls: NumPy passes
  and the formula's own Python;
- the rest is Python around the ops, by the function that runs it: ``Node.apply`` (recording), the backward engine
  (``run_backward``, ``_run_node``), modules' ``forward`` (``Module.__call__``), vmap's ``dispatch`` (its batching
  rules and the functional code under them), vmap's entry and exit (``rebind.enter`` / ``rebind.exit``), the
  ``torch.func`` scope (``Scope.*``), ``autograd.grad``, ``functional_call``.

Then it counts the Python calls of a step (``cProfile``), the nodes it records and the backward formulas it runs.
The wrappers add about a microsecond per wrapped call; the split, not the total, is what this measures.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import os
import pstats
import statistics
import subprocess
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if not os.environ.get("PYTHONPATH"):  # this checkout's ember (PYTHONPATH=another/checkout measures that one's)
    sys.path.insert(1, os.path.dirname(HERE))

GEMMS = (("ember._parallel", "matmul"), ("ember._parallel", "matmul_blocks"), ("ember._parallel", "stack_matmul"),
         ("ember._kernels.openblas", "matmul"))
PYTHON = (("ember.autograd.graph", "Node.apply"), ("ember.autograd.engine", "run_backward"),
          ("ember.autograd.engine", "_run_node"), ("ember.autograd.recorded", "run_recorded"),
          ("ember.autograd", "grad"), ("ember.nn.modules.module", "Module.__call__"),
          ("ember.func._batched", "dispatch"), ("ember.func._vmap", "_flat_vmap"),
          ("ember.func._scope", "Scope.differentiable"), ("ember.func._scope", "Scope.grad"),
          ("ember.func._scope", "Scope.unwrap"), ("ember.func._scope", "Scope.reaches_outer"),
          ("ember.func", "functional_call"), ("ember.optim.optimizer", "Optimizer.zero_grad"))


class Split:
    """Self CPU time and calls per label, for the functions it wraps."""

    def __init__(self) -> None:
        self.totals: dict[str, list] = defaultdict(lambda: [0.0, 0])
        self._stack: list[float] = []

    def wrap(self, label: str, fn):
        totals, stack, clock = self.totals, self._stack, time.process_time

        def timed(*args, **kwargs):
            start = clock()
            stack.append(0.0)
            try:
                return fn(*args, **kwargs)
            finally:
                spent = clock() - start
                inner = stack.pop()
                row = totals[label]
                row[0] += spent - inner
                row[1] += 1
                if stack:
                    stack[-1] += spent

        timed.__wrapped__ = fn
        return timed

    def rebind_everywhere(self, module_name: str, name: str, label: str) -> None:
        """Wrap ``module.name`` and every ember module's binding of the same function."""
        fn = getattr(importlib.import_module(module_name), name)
        timed = self.wrap(label, fn)
        for module in list(sys.modules.values()):
            if getattr(module, "__name__", "").startswith("ember") and getattr(module, name, None) is fn:
                setattr(module, name, timed)

    def install(self) -> None:
        from _node_phases import wrap_node_phases

        from ember._kernels import _jit
        from ember.func import _patching

        wrap_node_phases(self.wrap)
        for module_name, name in GEMMS:
            self.rebind_everywhere(module_name, name, "GEMM")
        for module_name, qualname in PYTHON:
            owner_name, _, attr = qualname.rpartition(".")
            module = importlib.import_module(module_name)
            if owner_name:
                owner = getattr(module, owner_name)
                raw = owner.__dict__[attr]
                setattr(owner, attr, classmethod(self.wrap(qualname, raw.__func__)) if isinstance(raw, classmethod)
                        else self.wrap(qualname, raw))
            else:
                self.rebind_everywhere(module_name, attr, qualname)
        _patching.enter = self.wrap("rebind.enter", _patching.enter)
        _patching.exit = self.wrap("rebind.exit", _patching.exit)
        kernel_call, by_name = _jit.kernel.__call__, {}

        def call(kernel, *args):
            timed = by_name.get(kernel.__name__)
            if timed is None:
                timed = by_name[kernel.__name__] = self.wrap(f"kernel {kernel.__name__}", kernel_call)
            return timed(kernel, *args)

        _jit.kernel.__call__ = call


def _group(label: str) -> str:
    if label == "GEMM":
        return "GEMMs"
    if label.startswith("kernel "):
        return "compiled kernels"
    if label.endswith((".forward", ".backward")):
        return "op formulas (NumPy passes, their Python)"
    return "Python around the ops"


def measure(name: str, batch: int | None, steps: int, rounds: int, with_torch: bool) -> None:
    from workloads import WORKLOADS

    import ember

    build, default_batch, label = WORKLOADS[name]
    batch = default_batch if batch is None else batch
    step = build(ember, batch)
    theirs = None
    if with_torch:
        import torch

        torch.set_num_threads(1)
        theirs = build(torch, batch)
    for i in range(3):
        step(i)
        if theirs is not None:
            theirs(i)
    plain, torch_ms = [], []
    for r in range(rounds):  # alternating with PyTorch's step, the order flipping every round
        for fn, out in ((step, plain), (theirs, torch_ms))[::1 if r % 2 else -1]:
            if fn is None:
                continue
            start = time.process_time()
            for i in range(steps):
                fn(i)
            out.append((time.process_time() - start) / steps * 1e3)
    profile = cProfile.Profile()
    profile.enable()
    for i in range(steps):
        step(i)
    profile.disable()
    calls = pstats.Stats(profile).total_calls / steps  # type: ignore[attr-defined]
    split = Split()
    split.install()
    step(0)
    split.totals.clear()
    start = time.process_time()
    for i in range(steps * rounds):
        step(i)
    total = (time.process_time() - start) / (steps * rounds) * 1e3
    n = steps * rounds
    nodes = sum(c for k, (_, c) in split.totals.items() if k.endswith(".forward")) / n
    formulas = sum(c for k, (_, c) in split.totals.items() if k.endswith(".backward")) / n
    print(f"{name} ({label}), batch {batch}, one thread: {statistics.median(plain):.2f} ms CPU per step (median of "
          f"{rounds} x {steps}), {total:.2f} with the wrappers; {calls:.0f} Python calls, {nodes:.0f} op forwards, "
          f"{formulas:.0f} backward formulas per step", flush=True)
    if torch_ms:
        print(f"  PyTorch's step, alternating: {statistics.median(torch_ms):.2f} ms CPU (ember / PyTorch "
              f"{statistics.median(plain) / statistics.median(torch_ms):.2f})")
    groups: dict[str, float] = defaultdict(float)
    for key, (spent, _) in split.totals.items():
        groups[_group(key)] += spent / n * 1e3
    groups["Python around the ops"] += total - sum(groups.values())  # (the step's own code, outside any wrapper)
    for group, ms in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"  {group:42s} {ms:7.2f} ms  {ms / total:4.0%}")
    print(f"  {'largest parts':42s} {'calls':>7s} {'ms/step':>8s}")
    for key, (spent, count) in sorted(split.totals.items(), key=lambda kv: -kv[1][0])[:24]:
        if spent / n >= 0.05e-3:
            print(f"  {key:42s} {count / n:7.1f} {spent / n * 1e3:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="+")
    parser.add_argument("--batch", type=int, default=None, help="the workload's batch instead of its own")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--torch", action="store_true", help="time PyTorch's step too, alternating (no split)")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before NumPy loads
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    if len(args.workloads) == 1:
        measure(args.workloads[0], args.batch, args.steps, args.rounds, args.torch)
        return
    for name in args.workloads:  # one process each: the wrappers stay installed once put in
        extra = ([] if args.batch is None else ["--batch", str(args.batch)]) + (["--torch"] if args.torch else [])
        subprocess.run([sys.executable, __file__, name, "--steps", str(args.steps), "--rounds", str(args.rounds),
                        *extra], check=True)


if __name__ == "__main__":
    main()

"""Every single-process benchmark, ember against PyTorch, in one run.

    python bench/run_all.py                      # the table (a few minutes)
    python bench/run_all.py --quick              # fewer repeats, for a smoke test
    python bench/run_all.py --memory-steps 10000 # only the long flat-memory check (ember)
    python bench/run_all.py --unset-openblas-env # drop OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE in the children
    python bench/run_all.py --threads 1 --cpu-time --workloads lstm_lm20  # CPU time, on a busy machine
    python bench/run_all.py --threads 1 2 --workloads models --no-import-rss  # the newer models, 1 and 2 threads
    python bench/run_all.py --numpy-kernels ...   # ember on its NumPy kernels instead of the compiled ones

Step times: one child process imports both frameworks with the same BLAS / intra-op thread
count (default: PyTorch's own default, ``torch.get_num_threads()``), warms both up, then runs
blocks of steps alternating ember and PyTorch (the order flips every round) so drift on a
shared machine hits both alike. The table shows the median ms per step over the rounds and
the ratio ember / PyTorch (lower is better). Import time and peak RSS are measured in fresh
subprocesses, alternating, medians. Nothing here is a test: timings never fail anything.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = {"mlp32": 0.9, "mlp256": 1.0, "cnn64": 1.2, "lstm_lm20": 1.0, "gpt16": 1.0, "import": 0.2, "rss": 1 / 3,
           "gpt8x128": 1.0, "gpt_infer64": 1.0, "resnet32": 1.0, "emb_sgd": 1.0, "emb_adam": 1.0, "mlp1": 1.0,
           "op_add": 1.0, "emb_sgd_sparse": 1.0, "emb_sparseadam": 1.0, "convt32": 1.0,
           "upsample_bilinear": 1.0, "upsample_nearest": 1.0, "wgan_gp32": 1.0, "per_sample_grads64": 1.0,
           "llama16": 1.0, "gpt_infer1": 1.0, "gpt_tiny": 1.0, "pqn128": 1.0, "gcn_cora": 1.0}
# names --workloads accepts for several rows at once
GROUPS = {"default": ["mlp32", "mlp256", "cnn64", "lstm_lm20", "gpt16"],
          "models": ["gpt16", "gpt8x128", "gpt_infer64", "resnet32", "emb_sgd", "emb_adam", "mlp1", "op_add",
                     "llama16", "gpt_infer1", "gpt_tiny", "pqn128"],
          "embedding": ["emb_sgd", "emb_adam", "emb_sgd_sparse", "emb_sparseadam"],
          "layers": ["convt32"], "vision": ["upsample_bilinear", "upsample_nearest"],
          "func": ["per_sample_grads64", "wgan_gp32"], "graph": ["gcn_cora"]}
GROUPS["all"] = list(dict.fromkeys(GROUPS["default"] + GROUPS["models"] + GROUPS["embedding"] + GROUPS["layers"]
                                   + GROUPS["vision"] + GROUPS["func"] + GROUPS["graph"]))
BLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
# A round is measured again when other processes used more than this fraction of the machine's CPUs during either
# block (with --min-cpu-share above 0). Not lower: the kernel's tick accounting and a process's own CPU time differ
# by up to ~0.18 of two CPUs on a busy two-thread block with nothing else running; a competing process that holds a
# core is 0.5.
OTHERS_LIMIT = 0.3


# ----------------------------------------------------------------------------- children
def warm_up(fns, steps: int, min_block: float) -> int:
    """Run each step function a few times (first-step allocations, lazy layouts, caches) and return the steps per
    timing block: ``steps``, or more, so that a block of the slowest lasts about ``min_block`` seconds. A step's
    time is the median of the warm-up steps': the first one can take seconds (numba compiling a kernel or loading
    it from its cache), and an average over it would leave a fast workload's blocks many times shorter than
    ``min_block``, judged on a tick or two."""
    block_steps = steps
    for fn in fns:
        per_step = []
        for i in range(max(5, steps // 2)):
            start = time.perf_counter()
            fn(i)
            per_step.append(time.perf_counter() - start)
        block_steps = max(block_steps, math.ceil(min_block / max(statistics.median(per_step), 1e-9)))
    return block_steps


def child_steps(names: list[str], rounds: int, steps: int) -> dict:
    """Median ms/step of each workload under both frameworks (runs inside the timing child).

    Wall-clock rounds in which either block ran with less than ``EMBER_BENCH_MIN_SHARE`` of the machine's CPU
    ticks accounted (``_cpu_share``: the host stopped a vCPU), or with other processes using more than
    ``OTHERS_LIMIT`` of them, are measured again (in the same order, so that the rounds kept still alternate
    which framework runs first), up to four times ``rounds`` in all; each block runs at least
    ``EMBER_BENCH_MIN_BLOCK_S`` seconds (more steps for fast workloads), so that its share is judged on enough
    ticks. Each block starts once the process's other threads are quiet (``_cpu_share.settle``): not while the
    previous block's PyTorch OpenMP worker still spins."""
    import torch
    from _cpu_share import Window, settle
    from workloads import WORKLOADS

    import ember

    threads = int(os.environ["OMP_NUM_THREADS"])
    torch.set_num_threads(threads)
    cpu_time = os.environ.get("EMBER_BENCH_CPU_TIME") == "1"
    clock = time.process_time if cpu_time else time.perf_counter
    min_share = 0.0 if cpu_time else float(os.environ.get("EMBER_BENCH_MIN_SHARE", "0"))
    min_block = float(os.environ.get("EMBER_BENCH_MIN_BLOCK_S", "0"))
    results = {}
    for name in names:
        build, batch, _ = WORKLOADS[name]
        fns = {"torch": build(torch, batch), "ember": build(ember, batch)}
        block_steps = warm_up(fns.values(), steps, min_block)
        times: dict[str, list[float]] = {"torch": [], "ember": []}
        shares: list[float] = []
        discarded = attempts = 0
        while len(times["ember"]) < rounds and attempts < 4 * rounds:
            # by the rounds kept, not the attempts: a round measured again keeps its order
            order = ("torch", "ember") if len(times["ember"]) % 2 == 0 else ("ember", "torch")
            attempts += 1
            block: dict[str, float] = {}
            low = False
            for fw in order:
                fn = fns[fw]
                settle()  # the other framework's threads quiet first (PyTorch's OpenMP workers spin after a block)
                window = Window()
                start = clock()
                for i in range(block_steps):
                    fn(i)
                block[fw] = 1000 * (clock() - start) / block_steps
                measured = window.measure()
                if measured is not None:
                    share, others = measured
                    shares.append(share)
                    low = low or share < min_share or (min_share > 0 and others > OTHERS_LIMIT)
            if low:
                discarded += 1
                continue
            for fw, ms in block.items():
                times[fw].append(ms)
        if not times["ember"]:
            raise RuntimeError(f"{name}: no round ran with {min_share:.2f} of the CPUs to itself (median accounted "
                               f"share {statistics.median(shares):.2f}; other processes, or a host that stops this "
                               "machine's vCPUs); lower --min-cpu-share, or run on an idle machine")
        results[name] = {**{fw: statistics.median(t) for fw, t in times.items()}, "kept": len(times["ember"]),
                         "discarded": discarded, "steps": block_steps,
                         "share": statistics.median(shares) if shares else None}
    return results


def child_rss(fw_name: str, steps: int) -> float:
    """Peak RSS (MiB) of a process that imports ``fw_name`` and trains the MLP for ``steps`` steps."""
    import importlib
    import resource

    from workloads import build_mlp

    step = build_mlp(importlib.import_module(fw_name), 32)
    for i in range(steps):
        step(i)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child_memory(steps: int, every: int) -> list[tuple]:
    """(step, RSS MiB, traced MiB, gc objects collected) along a long ember MLP run."""
    import gc
    import tracemalloc

    from workloads import build_mlp

    import ember

    step = build_mlp(ember, 32)
    tracemalloc.start()
    rows = []
    for i in range(steps + 1):
        step(i)
        if i % every == 0:
            with open("/proc/self/statm") as f:
                rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
            collected = gc.collect()  # objects only a cycle kept alive (0: everything freed by refcount)
            rows.append((i, round(rss, 2), round(tracemalloc.get_traced_memory()[0] / 2**20, 3), collected))
    return rows


# ----------------------------------------------------------------------------- parent
def run_child(args: list[str], env: dict) -> object:
    out = subprocess.run([sys.executable, os.path.abspath(__file__), *args], env=env, capture_output=True, text=True,
                         cwd=HERE)
    if out.returncode:
        sys.exit(f"the timing child failed (exit status {out.returncode}):\n{out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def import_time(module: str, env: dict) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def alternate(fn, repeats: int) -> dict[str, float]:
    values: dict[str, list[float]] = {"torch": [], "ember": []}
    for r in range(repeats):
        for fw in (("torch", "ember") if r % 2 == 0 else ("ember", "torch")):
            values[fw].append(fn(fw))
    return {fw: statistics.median(v) for fw, v in values.items()}


def machine(env: dict, threads: int) -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    code = ("import numpy, torch, json; from threadpoolctl import threadpool_info as i; "
            "b = [x for x in i() if x['user_api'] == 'blas']; "
            "print(json.dumps([numpy.__version__, torch.__version__, b[0]['internal_api'] + ' ' + b[0]['version'] "
            "+ ' kernel ' + str(b[0].get('architecture')) if b else '?']))")
    try:
        np_v, torch_v, blas = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                                        text=True, check=True).stdout)
    except (subprocess.CalledProcessError, ValueError):
        np_v = torch_v = blas = "?"
    blas_env = ", ".join(f"{k}={os.environ[k]}" for k in BLAS_ENV if k in os.environ) or "none set"
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np_v} ({blas}), "
            f"torch {torch_v}; threads {threads} (OMP/OPENBLAS_NUM_THREADS, torch.set_num_threads); "
            f"OPENBLAS_THREAD_TIMEOUT={env.get('OPENBLAS_THREAD_TIMEOUT', 'unset')}; "
            f"OpenBLAS env in this shell: {blas_env}"
            + ("; unset for the benchmark" if not any(k in env for k in BLAS_ENV) and blas_env != "none set" else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=["default"],
                        help="workload names (bench/workloads.py) or groups: " + ", ".join(
                            f"{k} ({' '.join(v)})" for k, v in GROUPS.items() if k != "all") + ", all")
    parser.add_argument("--rounds", type=int, default=15, help="alternating timing rounds per workload")
    parser.add_argument("--steps", type=int, default=20, help="training steps per timing round")
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes for import time and RSS")
    parser.add_argument("--processes", type=int, default=1,
                        help="fresh processes for the step rows (each alternating ember and PyTorch); the ratio "
                             "shown is the median of theirs, with their range")
    parser.add_argument("--threads", type=int, nargs="+", default=None,
                        help="thread counts, one table each (e.g. 1 2); default: torch.get_num_threads()")
    parser.add_argument("--no-import-rss", action="store_true", help="only the step rows")
    parser.add_argument("--quick", action="store_true", help="5 rounds, 3 repeats")
    parser.add_argument("--unset-openblas-env", action="store_true")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time steps by the process's CPU time, not the wall clock (a machine shared with other "
                             "work; use with --threads 1, where no thread spins waiting for another)")
    parser.add_argument("--min-cpu-share", type=float, default=0.9,
                        help="measure a wall-clock round again when either block ran with less than this share of the "
                             "machine's CPU ticks accounted (a virtual machine whose host stopped a vCPU) or other "
                             "processes used more than the rest; 0: off")
    parser.add_argument("--min-block-s", type=float, default=0.1,
                        help="run at least this many seconds per timing block (more steps for fast workloads)")
    parser.add_argument("--memory-steps", type=int, default=0, help="run only the long memory check, this many steps")
    parser.add_argument("--numpy-kernels", action="store_true",
                        help="ember on its NumPy kernels (EMBER_KERNELS=numpy in the children), not the compiled ones")
    parser.add_argument("--ember", metavar="CHECKOUT", default=os.path.dirname(HERE),
                        help="the checkout whose ember the children import (default: this script's own; "
                             "PYTHONPATH alone does not choose it, this checkout goes first on it)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.processes < 1:  # (no process: no step time to take a median of)
        parser.error(f"--processes must be at least 1, got {args.processes}")
    if not 0 <= args.min_cpu_share <= 1:  # (a share above 1 would discard every round)
        parser.error(f"--min-cpu-share must be between 0 and 1, got {args.min_cpu_share}")
    if not 0 <= args.min_block_s < math.inf:  # (NaN or inf: no number of steps lasts that long)
        parser.error(f"--min-block-s must be a finite number of seconds, 0 or more, got {args.min_block_s}")
    for option in ("rounds", "steps"):  # (no round: no median; no step: no time per step)
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be at least 1, got {getattr(args, option)}")

    if args.child:  # inside a child process: do one measurement, print JSON
        kind, *rest = args.child
        if kind == "steps":
            print(json.dumps(child_steps(rest[2:], int(rest[0]), int(rest[1]))))
        elif kind == "rss":
            print(json.dumps(child_rss(rest[0], int(rest[1]))))
        else:
            print(json.dumps(child_memory(int(rest[0]), int(rest[1]))))
        return

    env = dict(os.environ)
    # the children run from bench/: put the measured checkout first (--ember: this one by default), so they measure
    # its ember, not an installed one nor this checkout's when another is asked for
    checkout = os.path.abspath(args.ember)
    if not os.path.isfile(os.path.join(checkout, "ember", "__init__.py")):
        parser.error(f"--ember {args.ember}: no ember/__init__.py there")
    print(f"ember: {checkout}")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (checkout, os.environ.get("PYTHONPATH")) if p)
    if args.unset_openblas_env:
        for k in BLAS_ENV:
            env.pop(k, None)
    if args.cpu_time:
        env["EMBER_BENCH_CPU_TIME"] = "1"
    if args.numpy_kernels:
        env["EMBER_KERNELS"] = "numpy"
    env["EMBER_BENCH_MIN_SHARE"] = str(args.min_cpu_share)
    env["EMBER_BENCH_MIN_BLOCK_S"] = str(args.min_block_s)
    thread_counts = args.threads
    if thread_counts is None:
        out = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"], env=env,
                             capture_output=True, text=True, check=True)
        thread_counts = [int(out.stdout)]
    names = list(dict.fromkeys(n for w in args.workloads for n in GROUPS.get(w, [w])))
    print(f"command: {' '.join([os.path.basename(sys.executable), *sys.argv])}")
    for k, threads in enumerate(thread_counts):
        tenv = dict(env, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
        # What ember sets when it is imported before NumPy (ember/_backend.py). The child imports NumPy first, and
        # without it NumPy's idle OpenBLAS workers spin for ~0.1 s after each threaded GEMM, taking a core from
        # whichever framework runs next in the alternating blocks (PyTorch's GPT step: 42 instead of 25 ms).
        tenv.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
        if args.memory_steps:
            memory_table(args.memory_steps, tenv)
            return
        table(args, names, tenv, threads, import_rss=not args.no_import_rss and k == 0)


def memory_table(steps: int, env: dict) -> None:
    every = max(steps // 20, 1)
    print(f"ember MLP, batch 32, {steps} steps: step, RSS MiB, traced MiB, gc.collect() count")
    for row in run_child(["--child", "memory", str(steps), str(every)], env):
        print(*row, sep="\t")


def table(args, names: list[str], env: dict, threads: int, import_rss: bool) -> None:
    """One table: every step row at ``threads`` threads, then (optionally) import time and peak RSS."""
    from workloads import UNITS, WORKLOADS

    rounds, repeats = (5, 3) if args.quick else (args.rounds, args.repeats)
    print("machine:", machine(env, threads))
    spread = args.processes > 1
    print(f"{'workload':<36}{'PyTorch':>12}{'ember':>12}{'ratio':>8}{'target':>8}"
          + (f"  ratio range over {args.processes} processes" if spread else ""))
    # Two-thread figures move by 20-40 % from one process to the next on a 2-core VM (where each process's threads
    # land, how its memory is laid out), more than between rounds inside one: --processes runs the alternating
    # rounds in several fresh processes and shows the median of their ratios and the range.
    runs = [run_child(["--child", "steps", str(rounds), str(args.steps), *names], env) for _ in range(args.processes)]
    for name in names:
        unit, factor = UNITS.get(name, ("ms", 1.0))
        t = statistics.median(r[name]["torch"] for r in runs) * factor
        e = statistics.median(r[name]["ember"] for r in runs) * factor
        ratios = sorted(r[name]["ember"] / r[name]["torch"] for r in runs)
        ratio = statistics.median(ratios)
        print(f"{WORKLOADS[name][2] + f' ({unit})':<36}{t:>12.3f}{e:>12.3f}{ratio:>8.2f}{TARGETS[name]:>8.2f}"
              + (f"  {ratios[0]:.2f}-{ratios[-1]:.2f}" if spread else ""), flush=True)
        discarded = sum(r[name]["discarded"] for r in runs)
        if discarded:
            lowest = min(r[name]["share"] for r in runs if r[name]["share"] is not None)
            print(f"{'':<4}({discarded} round(s) measured again: less than {args.min_cpu_share:.2f} of the CPUs to "
                  f"itself; median accounted share {lowest:.2f} in the worst process)", flush=True)
    if not import_rss:
        return
    from import_time import cached_bytecode_env

    with tempfile.TemporaryDirectory() as cache:
        cached = cached_bytecode_env(env, cache)  # (after one untimed import each, which writes the bytecode)
        for fw in ("torch", "ember"):
            import_time(fw, cached)
        imp = alternate(lambda fw: import_time(fw, cached), repeats)
    print(f"{'import (s)':<36}{imp['torch']:>12.3f}{imp['ember']:>12.3f}{imp['ember'] / imp['torch']:>8.2f}"
          f"{TARGETS['import']:>8.2f}")
    rss = alternate(lambda fw: run_child(["--child", "rss", fw, "200"], env), repeats)
    print(f"{'peak RSS, MLP (MiB)':<36}{rss['torch']:>12.1f}{rss['ember']:>12.1f}"
          f"{rss['ember'] / rss['torch']:>8.2f}{TARGETS['rss']:>8.2f}")

if __name__ == "__main__":
    main()

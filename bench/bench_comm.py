"""Gradient compression and sharded optimizer state on 2 ranks: bytes sent per step, step time, state memory.

    python bench/bench_comm.py [--steps 20] [--repeats 3]

The driver launches one 2-rank job per path and framework, alternating ember (``python -m ember.distributed.run``)
and PyTorch (``torchrun``, gloo), and prints medians over the repeats. The model is an MLP of six 1024x1024 layers and
a 1024-10 head (about 25 MB of float32 gradients), batch 32 per rank, SGD with momentum:

- ``plain``: DDP's own average; ``fp16`` / ``bf16``: the half-precision compression hooks; ``powersgd1`` /
  ``powersgd4``: PowerSGD at rank 1 and 4 (from the third step, with error feedback and warm start);
- bytes: what each rank handed to the collectives per step (ember counts them in its communicators; the same
  arithmetic holds for PyTorch), step time: ms per step after two warm-up steps;
- ``zero``: Adam's state bytes per rank with ``ZeroRedundancyOptimizer`` against the unsharded Adam.

Each rank uses one BLAS thread (OMP_NUM_THREADS=1, as torchrun sets).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATHS = ("plain", "fp16", "bf16", "powersgd1", "powersgd4")
# PyTorch 2.13 on the CPU (gloo): bf16_compress_hook refuses to run without CUDA/NCCL, and powerSGD_hook's job
# ended in a gloo "connection reset" or hung in our runs; those rows are ember only.
TORCH_PATHS = ("plain", "fp16")
WIDTH, LAYERS, BATCH = 1024, 6, 32


def build(fw):
    nn = fw.nn
    fw.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(WIDTH, 10))


def rank_main(framework: str, path: str, steps: int) -> None:
    if framework == "torch":
        import torch as fw
        import torch.distributed as dist

        fw.set_num_threads(1)
        dist.init_process_group("gloo")
    else:
        import ember as fw
        import ember.distributed as dist

        dist.init_process_group("mpi")
    from importlib import import_module

    hooks = import_module(f"{fw.__name__}.distributed.algorithms.ddp_comm_hooks")
    rank = dist.get_rank()
    if path == "zero":
        zero_main(fw, dist, rank)
        return
    model = fw.nn.parallel.DistributedDataParallel(build(fw))
    if path in ("fp16", "bf16"):
        model.register_comm_hook(None, getattr(hooks.default_hooks, f"{path}_compress_hook"))
    elif path.startswith("powersgd"):
        state = hooks.powerSGD_hook.PowerSGDState(None, matrix_approximation_rank=int(path[-1]),
                                                  start_powerSGD_iter=2)
        model.register_comm_hook(state, hooks.powerSGD_hook.powerSGD_hook)
    optimizer = fw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(rank)
    xs = [fw.tensor(rng.standard_normal((BATCH, WIDTH)).astype(np.float32)) for _ in range(4)]
    ys = [fw.tensor(rng.integers(0, 10, BATCH)) for _ in range(4)]
    counters = []
    if framework == "ember":
        counters = [dist.default_group().comm, model.reducer.comm]

    def step(i):
        optimizer.zero_grad()
        fw.nn.functional.cross_entropy(model(xs[i % 4]), ys[i % 4]).backward()
        optimizer.step()

    for i in range(3):  # warm-up; PowerSGD starts compressing at the third step
        step(i)
    dist.barrier()
    sent = sum(c.payload_bytes for c in counters)
    start = time.perf_counter()
    for i in range(steps):
        step(i)
    elapsed = time.perf_counter() - start
    sent = (sum(c.payload_bytes for c in counters) - sent) / steps if counters else float("nan")
    print(f"RESULT rank={rank} ms={1e3 * elapsed / steps:.3f} bytes={sent:.0f}", flush=True)
    dist.destroy_process_group()


def zero_main(fw, dist, rank) -> None:
    optim_module = __import__(f"{fw.__name__}.distributed.optim", fromlist=["ZeroRedundancyOptimizer"])
    for sharded in (False, True):
        model = build(fw)
        if sharded:
            optimizer = optim_module.ZeroRedundancyOptimizer(model.parameters(), optimizer_class=fw.optim.Adam,
                                                             lr=1e-3)
            states = optimizer.optim.state
        else:
            optimizer = fw.optim.Adam(model.parameters(), lr=1e-3)
            states = optimizer.state
        x = fw.tensor(np.ones((4, WIDTH), np.float32))
        model(x).sum().backward()
        optimizer.step()
        nbytes = sum(v.numel() * v.element_size() for s in states.values() for v in s.values()
                     if isinstance(v, fw.Tensor) and v.dim() > 0)
        print(f"RESULT rank={rank} zero={int(sharded)} state_bytes={nbytes}", flush=True)
    dist.destroy_process_group()


def launch(framework: str, path: str, steps: int) -> list[dict]:
    script = [os.path.abspath(__file__), "--rank-main", framework, path, str(steps)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": ROOT}
    if framework == "torch":
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", *script]
    else:
        cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", "--timeout", "600", *script]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    rows = [dict(re.findall(r"(\w+)=(\S+)", line)) for line in out.stdout.splitlines() if line.startswith("RESULT")]
    if not rows:
        print(f"  {framework} {path}: no result (exit {out.returncode}): {out.stderr.strip().splitlines()[-1:]}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rank-main", nargs=3, metavar=("FRAMEWORK", "PATH", "STEPS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rank_main:
        framework, path, steps = args.rank_main
        rank_main(framework, path, int(steps))
        return
    times: dict[tuple[str, str], list[float]] = {}
    sent: dict[str, float] = {}
    for _ in range(args.repeats):
        for path in PATHS:
            for framework in ("ember", "torch") if path in TORCH_PATHS else ("ember",):
                rows = launch(framework, path, args.steps)
                if rows:
                    times.setdefault((framework, path), []).append(max(float(r["ms"]) for r in rows))
                    if framework == "ember":
                        sent[path] = float(rows[0]["bytes"])
    print(f"2 ranks, MLP {WIDTH}x{LAYERS} (+10), {LAYERS * (WIDTH * WIDTH + WIDTH) * 4 / 1e6:.1f} MB of gradients, "
          f"batch {BATCH}/rank, {args.steps} steps x {args.repeats} repeats (medians, slower rank)")
    print(f"{'path':<10} {'ember ms':>9} {'torch ms':>9} {'ember/torch':>11} {'bytes/step':>12} {'vs plain':>9}")
    for path in PATHS:
        ours = statistics.median(times.get(("ember", path), [float("nan")]))
        theirs = statistics.median(times.get(("torch", path), [float("nan")]))
        share = sent.get(path, float("nan")) / sent.get("plain", float("nan"))
        print(f"{path:<10} {ours:9.2f} {theirs:9.2f} {ours / theirs:11.2f} {sent.get(path, float('nan')):12.0f} "
              f"{share:9.3f}")
    rows = launch("ember", "zero", 0)
    by = {(r["rank"], r["zero"]): int(r["state_bytes"]) for r in rows}
    for rank in ("0", "1"):
        if (rank, "0") in by and (rank, "1") in by:
            print(f"Adam state, rank {rank}: {by[(rank, '1')]} bytes with ZeroRedundancyOptimizer, "
                  f"{by[(rank, '0')]} without ({by[(rank, '1')] / by[(rank, '0')]:.2f})")


if __name__ == "__main__":
    main()

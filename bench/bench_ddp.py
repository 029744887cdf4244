"""Data-parallel training step, ember DDP (MPI) vs PyTorch DDP (gloo), side by side in one run.

    python bench/bench_ddp.py [--steps 300] [--repeats 3] [--batch 32]

The driver (no RANK in the environment) launches, alternately, each framework's
2-rank job through its own launcher (ember: ``python -m ember.distributed.run``;
PyTorch: ``torchrun``), plus ember on 1 rank for the scaling figure, and prints
medians over the repeats:

- MLP DDP step (784-256-256-10, BatchNorm, Dropout, CrossEntropy, Adam,
  clip_grad_norm_), batch ``--batch`` per rank: ms/step and ember/PyTorch;
- scaling: ember on 2 ranks vs ember on 1 rank, same per-rank batch (the ideal is 1.0);
- gradient all-reduce throughput inside DDP (the all-reduce of every bucket) vs a
  raw mpi4py ``Allreduce`` of the same bytes.

Each rank uses one BLAS/OpenMP thread (OMP_NUM_THREADS=1, as torchrun sets).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from workloads import mlp_model  # noqa: E402


def rank_main(framework: str, steps: int, batch: int) -> None:
    if framework == "torch":
        import torch as fw
        import torch.distributed as dist

        fw.set_num_threads(1)
        dist.init_process_group("gloo")
    else:
        import ember as fw
        import ember.distributed as dist

        dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    model = mlp_model(fw)
    if world > 1:
        model = fw.nn.parallel.DistributedDataParallel(model)
    criterion = fw.nn.CrossEntropyLoss()
    optimizer = fw.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(rank)
    xs = [fw.tensor(rng.standard_normal((batch, 784)).astype(np.float32)) for _ in range(8)]
    ys = [fw.tensor(rng.integers(0, 10, batch)) for _ in range(8)]

    def step(i):
        optimizer.zero_grad()
        loss = criterion(model(xs[i % 8]), ys[i % 8])
        loss.backward()
        fw.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        optimizer.step()

    for i in range(30):
        step(i)
    if world > 1:
        dist.barrier()
    start = time.perf_counter()
    for i in range(steps):
        step(i)
    ms = 1000 * (time.perf_counter() - start) / steps
    if rank == 0:
        print(f"RESULT step_ms={ms:.4f}", flush=True)
    if framework == "ember" and world > 1:
        allreduce_throughput(model, dist)
        step_breakdown(model, step, steps)
    dist.destroy_process_group()


# The pieces of an ember DDP step that are not the model's own compute: trace span name (cat "ddp") -> label.
_DDP_PIECES = {"wait all-reduces": "wait_allreduce", "broadcast buffers": "buffer_broadcast", "scale": "scale",
               "non-finite scan": "scan", "start all-reduce": "start_allreduce", "progress": "progress",
               "read lockstep table": "read_table"}


def step_breakdown(model, step, steps: int) -> None:
    """Time each DDP piece of every step on every rank (a second, traced run of the same steps).

    Per rank and step: the step, the time inside each piece of DDP (the reducer's and DDP's own
    trace spans), and the rest (the model's forward, backward, clipping and Adam: "compute").
    Rank 0 prints means over steps and ranks, and the mean over steps of the slower rank's
    compute: what a step in lockstep must wait for. Recording costs a little, which lands in
    "compute".
    """
    from mpi4py import MPI

    from ember.diagnostics import trace

    labels = list(_DDP_PIECES.values())
    rows = []
    MPI.COMM_WORLD.Barrier()
    for i in range(steps):
        with trace.record() as tr:
            t = time.perf_counter()
            step(i)
            total = time.perf_counter() - t
        spent = dict.fromkeys(labels, 0.0)
        for e in tr.spans(cat="ddp"):
            label = _DDP_PIECES.get(e["name"])
            if label is not None:
                spent[label] += e["dur"] * 1e-6
        pieces = [spent[k] for k in labels]
        # no piece runs inside another, so what the pieces leave is the model's own work
        rows.append([total, total - sum(pieces), *pieces])
    mine = np.array(rows) * 1e3
    every = np.empty((MPI.COMM_WORLD.Get_size(), *mine.shape))
    MPI.COMM_WORLD.Allgather(mine, every)
    if MPI.COMM_WORLD.Get_rank() == 0:
        fields = {"bd_step": every[:, :, 0].mean(), "bd_compute": every[:, :, 1].mean(),
                  "bd_slower_compute": every[:, :, 1].max(axis=0).mean(),
                  "bd_compute_std": every[:, :, 1].std(axis=1).mean()}
        fields.update({f"bd_{k}": every[:, :, 2 + j].mean() for j, k in enumerate(labels)})
        print("RESULT " + " ".join(f"{k}={v:.4f}" for k, v in fields.items()), flush=True)


def allreduce_throughput(model, dist) -> None:
    """DDP's all-reduces (every bucket, as a backward issues them) vs one raw MPI Allreduce of the same bytes.

    Also times, to show where the difference goes: the same collectives DDP issues (one per
    bucket, then the lockstep table) from raw mpi4py, and DDP with its non-finite scan off.
    """
    from mpi4py import MPI

    reducer = model.reducer
    total = sum(b.nbytes for b in reducer.buckets)
    comm = MPI.COMM_WORLD
    raw = np.zeros(total // 4, dtype=np.float32)
    pieces = [np.zeros(b.numel, b.dtype) for b in reducer.buckets] + [reducer.table]
    policy = reducer.nonfinite_policy

    def ddp(scan: str) -> None:
        reducer.set_nonfinite_policy(scan)
        reducer.reduce_all()  # scan, Iallreduce every bucket in order, then the lockstep table; wait

    def raw_same_collectives() -> None:
        MPI.Request.Waitall([comm.Iallreduce(MPI.IN_PLACE, a, op=MPI.SUM) for a in pieces])

    cases = {"raw_allreduce_s": lambda: comm.Allreduce(MPI.IN_PLACE, raw, op=MPI.SUM),
             "raw_split_s": raw_same_collectives,
             "ddp_allreduce_s": lambda: ddp("skip"),
             "ddp_noscan_s": lambda: ddp("off")}
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(100):
        for key, run in cases.items():
            comm.Barrier()
            t = time.perf_counter()
            run()
            times[key].append(time.perf_counter() - t)
    reducer.set_nonfinite_policy(policy)  # as it was, for the step breakdown that follows
    if comm.Get_rank() == 0:
        print("RESULT " + " ".join(f"{k}={statistics.median(v):.6f}" for k, v in times.items()) + f" bytes={total}",
              flush=True)


def launch_pair(steps: int, batch: int) -> dict[str, float]:
    """Two independent 1-rank ember jobs at once: the step time with both cores busy and no communication."""
    results: list[dict] = []
    threads = [threading.Thread(target=lambda: results.append(launch("ember", 1, steps, batch))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"step_ms": max(r["step_ms"] for r in results)}


def launch(framework: str, nproc: int, steps: int, batch: int) -> dict[str, float]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": ROOT}
    script = [os.path.abspath(__file__), "--rank-framework", framework, "--steps", str(steps), "--batch", str(batch)]
    if framework == "torch":
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
               "--master-addr", "127.0.0.1", "--master-port", "29533", *script]
    else:
        cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), *script]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{framework} x{nproc} failed:\n{out.stdout}\n{out.stderr}")
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", " ".join(
        line for line in out.stdout.splitlines() if line.startswith("RESULT")))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--rank-framework", choices=["ember", "torch"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rank_framework:
        rank_main(args.rank_framework, args.steps, args.batch)
        return
    runs: dict[str, list[dict]] = {"torch2": [], "ember2": [], "ember1": [], "pair": []}
    for _ in range(args.repeats):
        runs["torch2"].append(launch("torch", 2, args.steps, args.batch))
        runs["ember2"].append(launch("ember", 2, args.steps, args.batch))
        runs["ember1"].append(launch("ember", 1, args.steps, args.batch))
        runs["pair"].append(launch_pair(args.steps, args.batch))

    def med(key, field):
        return statistics.median(r[field] for r in runs[key])

    t2, e2, e1 = med("torch2", "step_ms"), med("ember2", "step_ms"), med("ember1", "step_ms")
    pair = med("pair", "step_ms")
    ddp_s, raw_s = med("ember2", "ddp_allreduce_s"), med("ember2", "raw_allreduce_s")
    split_s, noscan_s = med("ember2", "raw_split_s"), med("ember2", "ddp_noscan_s")
    nbytes = runs["ember2"][0]["bytes"]
    print(f"{'workload':<52}{'PyTorch':>10}{'ember':>10}{'ratio':>8}")
    print(f"{'DDP 2 ranks, MLP, batch ' + str(args.batch) + '/rank (ms/step)':<52}{t2:>10.3f}{e2:>10.3f}"
          f"{e2 / t2:>8.2f}")
    print(f"{'ember scaling: 2 ranks / 1 rank, same per-rank batch':<52}{'':>10}{e2 / e1:>10.2f}"
          f"   (1 rank {e1:.3f} ms)")
    print(f"{'  floor: 2 independent 1-rank jobs at once / 1 rank':<52}{'':>10}{pair / e1:>10.2f}"
          f"   (slower of the two {pair:.3f} ms)")
    print(f"{'DDP all-reduce throughput / raw mpi4py Allreduce':<52}{'':>10}{raw_s / ddp_s:>10.2f}"
          f"   ({nbytes / 1e6:.2f} MB: DDP {1e3 * ddp_s:.3f} ms, raw {1e3 * raw_s:.3f} ms)")
    print(f"{'  raw, the collectives DDP issues (buckets + table)':<52}{'':>10}{raw_s / split_s:>10.2f}"
          f"   ({1e3 * split_s:.3f} ms)")
    print(f"{'  DDP with the non-finite scan off':<52}{'':>10}{raw_s / noscan_s:>10.2f}"
          f"   ({1e3 * noscan_s:.3f} ms)")
    print("\nember DDP step, instrumented (ms, mean over steps and ranks; medians over the repeats):")
    for key in [k for k in runs["ember2"][0] if k.startswith("bd_")]:
        print(f"  {key[3:]:<24}{med('ember2', key):>8.3f}")


if __name__ == "__main__":
    main()

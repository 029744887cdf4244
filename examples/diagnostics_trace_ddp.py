"""Record a timeline of data-parallel training steps on every rank, merge them, draw them.

    python -m ember.distributed.run --nproc-per-node 2 examples/diagnostics_trace_ddp.py --out docs/images

Each rank saves ``trace_rank{R}.json``; rank 0 merges them into ``trace_ddp.json`` (pid = rank:
open it in https://ui.perfetto.dev) and renders ``trace_ddp.png``, where each bucket's all-reduce
(the "ddp" row) runs while backward (the "backward" row) is still computing earlier layers.
Also runs as a single process (one rank, no communication).
"""

import argparse
import os

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.diagnostics import trace
from ember.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--out", default=".", help="folder for the trace files and the PNG")
parser.add_argument("--steps", type=int, default=2, help="training steps recorded (after one warm-up step)")
args = parser.parse_args()
os.makedirs(args.out, exist_ok=True)

distributed = "WORLD_SIZE" in os.environ
if distributed:
    dist.init_process_group("mpi")
rank = dist.get_rank() if distributed else 0

ember.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 512),
                      nn.ReLU(), nn.Linear(512, 10))
if distributed:
    model = DDP(model, bucket_cap_mb=0.5)  # several buckets, so their all-reduces overlap backward
optimizer = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()
ember.manual_seed(rank)
x, y = ember.randn(64, 256), ember.randint(0, 10, (64,))


def train_step():
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()


train_step()  # warm-up: buffers allocated, caches filled
with trace.record() as tr:
    for _ in range(args.steps):
        train_step()
mine = os.path.join(args.out, f"trace_rank{rank}.json")
tr.save(mine, rank=rank)

if distributed:
    dist.barrier()  # every rank's file is written
if rank == 0:
    world = dist.get_world_size() if distributed else 1
    paths = [os.path.join(args.out, f"trace_rank{r}.json") for r in range(world)]
    merged = os.path.join(args.out, "trace_ddp.json")
    trace.merge(paths, merged)
    trace.render_png(merged, os.path.join(args.out, "trace_ddp.png"),
                     title=f"{world} rank(s), {args.steps} training steps: forward, backward, all-reduce, optimizer")
    print(f"wrote {merged} and trace_ddp.png")
if distributed:
    dist.destroy_process_group()

"""A DDP communication hook that issues its collective on rank 0 only: the job must fail, naming the rank that did
not arrive, instead of hanging or going on unnoticed. A script, not a rank test: the job cannot go on after it.
The hooks themselves: tests/ranks/rank_comm_hooks.py.

Run: python -m ember.distributed.run --nproc-per-node 2 tests/dist_scripts/hook_out_of_step.py
"""

from datetime import timedelta

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.distributed.algorithms.ddp_comm_hooks import default_hooks
from ember.futures import Future
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=8))
rank = dist.get_rank()
ember.manual_seed(0)
model = DDP(nn.Sequential(nn.Linear(10, 24), nn.Tanh(), nn.Linear(24, 24), nn.Tanh(), nn.Linear(24, 3)),
            bucket_cap_mb=0.001)


def lopsided(state, bucket):  # rank 0 all-reduces, the others do not: out of step
    if rank == 0:
        return default_hooks.allreduce_hook(state, bucket)
    fut = Future()
    fut.set_result(bucket.buffer())
    return fut


model.register_comm_hook(None, lopsided)
for step in range(2):
    gen = np.random.default_rng(100 * step + rank)
    x, y = ember.tensor(gen.normal(size=(16, 10)).astype(np.float32)), ember.tensor(gen.integers(0, 3, size=16))
    model.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
raise SystemExit("a hook out of step across ranks went unnoticed")

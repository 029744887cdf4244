"""Lockstep safety under DDP: ranks out of step or missing end the job loudly and quickly, never hang. One scenario
per run: python -m ember.distributed.run ... lockstep_hangs.py MODE; every mode is expected to fail, and
tests/test_lockstep.py checks how (fast, naming the rank). The scenarios that end normally are ordinary tests in
tests/ranks/rank_lockstep.py.
"""

import sys
import time
from datetime import timedelta

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.nn.parallel import DistributedDataParallel as DDP

mode = sys.argv[1]
# seed_nan_loop's mismatch is found at the first all-reduce, not by a timeout: a timeout far longer than the job's
# start-up on a loaded machine lets its test tell the two apart; the deadlocks (a rank blocked in a collective the
# other has not issued, on another communicator) are named long before their 60 s timeout; "stuck" ends by the 4 s one
TIMEOUT_S = 30 if mode == "seed_nan_loop" else 4 if mode == "stuck" else 60
dist.init_process_group("mpi", timeout=timedelta(seconds=TIMEOUT_S))
rank, world = dist.get_rank(), dist.get_world_size()
ember.manual_seed(0)
model = DDP(nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)), nonfinite_grads="skip")
optimizer = ember.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()


def batch(step):
    rng = np.random.default_rng(100 * step + rank)
    return ember.tensor(rng.standard_normal((8, 4)).astype(np.float32)), \
        ember.tensor(rng.standard_normal((8, 1)).astype(np.float32))


if mode == "seed_nan_loop":
    # Seed document 000 §4.4, as written: skip backward when the loss is NaN. Under PyTorch this hangs.
    for step in range(4):
        x, y = batch(step)
        if step == 2 and rank == 1:
            x = x * float("nan")
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        if ember.isnan(loss):
            print(f"Device {rank} has NaN loss, skipping backward", flush=True)
        else:
            loss.backward()
        optimizer.step()

elif mode in ("extra_batch", "extra_batch_late_barrier"):
    # rank 1 has one more batch than rank 0; rank 0 goes on to a barrier (late: rank 1's all-reduce times out
    # first, and its report must say where rank 0 went)
    for step in range(3 + rank):
        x, y = batch(step)
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    if mode == "extra_batch_late_barrier" and rank == 0:
        time.sleep(1.5)
    dist.barrier()

elif mode == "extra_batch_finished":
    # rank 1 has one more batch than rank 0, which finishes its script (destroy_process_group, then returns)
    for step in range(3 + rank):
        x, y = batch(step)
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    dist.destroy_process_group()

elif mode == "fewer_batches":
    # the last rank has one batch fewer and returns from its script (no destroy_process_group); the others wait
    # for it in their last backward's all-reduce: they fail as soon as it has finished, not at the 60 s timeout
    for step in range(3 - (rank == world - 1)):
        x, y = batch(step)
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    if rank == world - 1:
        print(f"rank {rank} finished at {time.monotonic()!r}", flush=True)

elif mode == "rank0_only_all_reduce":
    # a metric all-reduced under `if rank == 0:`: rank 0 waits in it, rank 1 in its next backward's all-reduce
    for step in range(4):
        x, y = batch(step)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if rank == 0 and step == 1:
            dist.all_reduce(loss.detach().clone())

elif mode == "stuck":
    x, y = batch(0)
    if rank == 1:
        time.sleep(60)  # stuck: never reaches backward
    criterion(model(x), y).backward()

"""DDP training where one rank may run at a third of the others' speed.

    straggler.py OUT_DIR SLOW_RANK STEPS [WORK_MS]     (SLOW_RANK -1: a balanced run)

Without WORK_MS each step "computes" for 20 ms (a sleep, so the timing does not depend on how busy the machine's
cores are), rank SLOW_RANK for 60 ms. With WORK_MS each step burns that much of this thread's CPU time (three times
as much on rank SLOW_RANK): the same work on a busy machine, only spread over more wall time while the operating
system runs the other processes (for runs beside busy processes that compete for the cores). Each rank writes
OUT_DIR/R.json: the warnings it got and the trace's straggler events.
"""

import json
import os
import sys
import time
import warnings

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.diagnostics import trace
from ember.nn.parallel import DistributedDataParallel

out, slow, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
work_ms = float(sys.argv[4]) if len(sys.argv) > 4 else None
dist.init_process_group("gloo")
rank = dist.get_rank()
ember.manual_seed(0)
model = DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2)))
optimizer = ember.optim.SGD(model.parameters(), lr=0.01)


def work() -> None:
    if work_ms is None:
        time.sleep(0.06 if rank == slow else 0.02)
        return
    until = time.thread_time() + work_ms / 1e3 * (3 if rank == slow else 1)
    while time.thread_time() < until:  # CPU work: its wall time grows with the machine's load
        pass


with warnings.catch_warnings(record=True) as caught, trace.record() as recording:
    warnings.simplefilter("always")
    for _ in range(steps):
        loss = model(ember.randn(4, 8)).pow(2).mean()
        work()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
with open(os.path.join(out, f"{rank}.json"), "w") as f:
    json.dump({"warnings": [str(w.message) for w in caught],
               "events": [e["args"] for e in recording.spans("ddp", "straggler")]}, f)
dist.destroy_process_group()

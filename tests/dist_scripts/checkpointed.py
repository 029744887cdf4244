"""DDP training that checkpoints every step and resumes from its last checkpoint (torchrun's restart contract).

    checkpointed.py DIR STEPS [KILL_STEP]

On the first attempt (TORCHELASTIC_RESTART_COUNT=0) rank 1 kills itself (SIGKILL) at
step KILL_STEP, before its backward. Rank 0 writes DIR/final.pt: the parameters after STEPS steps.
"""

import os
import signal
import sys

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.nn.parallel import DistributedDataParallel

folder, steps = sys.argv[1], int(sys.argv[2])
kill_step = int(sys.argv[3]) if len(sys.argv) > 3 else -1
dist.init_process_group("gloo")
rank, attempt = dist.get_rank(), int(os.environ["TORCHELASTIC_RESTART_COUNT"])
ember.manual_seed(0)
model = DistributedDataParallel(nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)))
optimizer = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
checkpoint = os.path.join(folder, "checkpoint.pt")
start = 0
if os.path.exists(checkpoint):
    state = ember.load(checkpoint)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    start = state["step"] + 1
print(f"rank {rank} attempt {attempt} starts at step {start}", flush=True)
for step in range(start, steps):
    if attempt == 0 and rank == 1 and step == kill_step:
        os.kill(os.getpid(), signal.SIGKILL)
    generator = ember.Generator().manual_seed(1000 * step + rank)  # each rank's batch of this step
    x = ember.randn(5, 4, generator=generator)
    loss = (model(x) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if rank == 0:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
        ember.save(state, checkpoint + ".tmp")
        os.replace(checkpoint + ".tmp", checkpoint)
    dist.barrier()  # no rank starts a step before the checkpoint of the previous one is complete
if rank == 0:
    ember.save(model.module.state_dict(), os.path.join(folder, "final.pt"))
dist.destroy_process_group()

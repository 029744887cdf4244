"""DDP training that checkpoints after every step and resumes from its last checkpoint under --max-restarts.

    dcp_training.py DIR STEPS RECIPE

RECIPE ``dcp``: every step is saved with ``ember.distributed.checkpoint`` into DIR/step_NNNN and a restart
resumes every rank from ``latest_checkpoint(DIR)``. RECIPE ``files``: each rank saves its own file
(DIR/ckpt.rankR.pt), which is what the ranks drifting apart after a failed save looks like.
The model has dropout and each rank draws its batch from ember's global generator, so every rank's RNG
state is part of the checkpoint (under the key ``rng.rankR``). Rank 0 writes DIR/final.pt.

On the first attempt (TORCHELASTIC_RESTART_COUNT=0) rank $FAIL_RANK fails at step $FAIL_STEP as $FAIL says:
``enospc``: its checkpoint write reports a full disk (fsync raises ENOSPC, 2 s late); ``kill``: it SIGKILLs itself
after the step's all-reduce, before its save; ``metadata`` (rank 0): writing ``.metadata`` reports a full
disk; ``hang``: its part is written, then it touches DIR/hanging
and sleeps (the test kills the launcher then).
"""

import errno
import os
import signal
import sys
import time

import ember
import ember.distributed as dist
import ember.distributed.checkpoint as dcp
import ember.nn as nn
from ember.nn.parallel import DistributedDataParallel

folder, steps, recipe = sys.argv[1], int(sys.argv[2]), sys.argv[3]
dist.init_process_group("gloo")
rank, attempt = dist.get_rank(), int(os.environ["TORCHELASTIC_RESTART_COUNT"])
failing = attempt == 0 and rank == int(os.environ.get("FAIL_RANK", -1))
fail_step = int(os.environ.get("FAIL_STEP", -1))
ember.manual_seed(0)
module = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Dropout(0.3), nn.Linear(16, 2))
model = DistributedDataParallel(module)
optimizer = ember.optim.Adam(model.parameters(), lr=0.01)
ember.manual_seed(100 + rank)  # each rank's own stream: its batches and dropout masks
rng_key = f"rng.rank{rank}"


def state(step):
    return {"model": module, "optimizer": optimizer, "step": step, rng_key: ember.get_rng_state()}


def inject(where):
    kind = os.environ.get("FAIL")
    if where == "before_save" and kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if where == "before_save" and kind == "enospc":
        def full(fd):
            time.sleep(2)  # the other ranks' saves of this step finish first (with per-rank files, they count)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        os.fsync = full
    if where == "before_save" and kind == "metadata":
        def full(self, metadata):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        dcp.FileSystemWriter.finish = full
    if where == "before_save" and kind == "hang":
        write_part = dcp.FileSystemWriter.write_part

        def written_then_stuck(self, *args):
            name = write_part(self, *args)
            open(os.path.join(folder, "hanging"), "w").close()
            time.sleep(600)
            return name
        dcp.FileSystemWriter.write_part = written_then_stuck


start = 0
if recipe == "dcp":
    latest = dcp.latest_checkpoint(folder)
    if latest is not None:
        resumed = state(0)
        dcp.load(resumed, checkpoint_id=latest)
        start = resumed["step"]
        ember.set_rng_state(resumed[rng_key])
elif os.path.exists(os.path.join(folder, f"ckpt.rank{rank}.pt")):
    resumed = ember.load(os.path.join(folder, f"ckpt.rank{rank}.pt"))
    module.load_state_dict(resumed["model"])
    optimizer.load_state_dict(resumed["optimizer"])
    start = resumed["step"]
    ember.set_rng_state(resumed[rng_key])
print(f"rank {rank} attempt {attempt} starts at step {start}", flush=True)
for step in range(start, steps):
    loss = (model(ember.randn(6, 4)) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()  # the all-reduce
    optimizer.step()
    if failing and step == fail_step:
        inject("before_save")
    if recipe == "dcp":
        dcp.save(state(step + 1), checkpoint_id=os.path.join(folder, f"step_{step + 1:04d}"))
    else:
        ember.save(state(step + 1) | {"model": module.state_dict(), "optimizer": optimizer.state_dict()},
                   os.path.join(folder, f"ckpt.rank{rank}.pt"))
if rank == 0:
    ember.save([p.detach() for p in module.parameters()], os.path.join(folder, "final.pt"))
    print("training finished", flush=True)
dist.destroy_process_group()

"""Data-parallel training: ``loss.backward()`` averages the gradients of every process.

An ordinary PyTorch program for several processes. Run it on ember with 2 processes:

    python -m ember.distributed.run --nproc-per-node 2 -m ember.compat examples/ddp_train.py

or with PyTorch as ``torchrun --nproc_per_node 2 examples/ddp_train.py``. The process-group backend
comes from the environment variable DIST_BACKEND (default "gloo"; ember runs "gloo" and "mpi" on
the same MPI engine).

Every process starts from different weights and draws its own batches. DistributedDataParallel
copies rank 0's weights to all at construction; then, at each of 5 steps, the program checks that
the gradient backward left in ``.grad`` is the mean of the gradients each process would have
computed alone, and at the end that every process holds the same parameters.
"""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group(backend=os.environ.get("DIST_BACKEND", "gloo"))
rank, world = dist.get_rank(), dist.get_world_size()

torch.manual_seed(7 + rank)                       # a different starting point on every process
model = DistributedDataParallel(nn.Linear(10, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(5):
    torch.manual_seed(100 * step + rank)          # each process's own batch
    x, y = torch.randn(16, 10), torch.randn(16, 1)

    optimizer.zero_grad()
    criterion(model(x), y).backward()             # the all-reduce of the gradients happens in here

    # the gradient this process alone would get: the same weights, a plain module, the same batch
    alone = nn.Linear(10, 1)
    alone.load_state_dict(model.module.state_dict())
    criterion(alone(x), y).backward()
    gathered = [torch.zeros_like(alone.weight.grad) for _ in range(world)]
    dist.all_gather(gathered, alone.weight.grad)
    mean = torch.stack(gathered).mean(dim=0)
    assert torch.allclose(model.module.weight.grad, mean, atol=1e-6), \
        f"rank {rank}, step {step}: .grad is not the mean of the processes' gradients"
    optimizer.step()

params = torch.cat([p.detach().flatten() for p in model.parameters()])
everyone = [torch.empty_like(params) for _ in range(world)]
dist.all_gather(everyone, params)
assert all(torch.equal(everyone[0], other) for other in everyone), "the replicas' parameters differ"
if rank == 0:
    print(f"ddp_train: {world} processes, 5 steps: every .grad was the mean over processes, "
          f"and the replicas are identical")
dist.destroy_process_group()

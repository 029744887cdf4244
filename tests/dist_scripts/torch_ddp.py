"""An ordinary PyTorch DDP program (run by `python -m ember.compat`): every replica ends identical."""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(rank)  # different initial weights: DDP copies rank 0's
model = DDP(nn.Linear(3, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(4, 3) * (rank + 1)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
gathered = [torch.zeros_like(weights) for _ in range(world)]
dist.all_gather(gathered, weights)
assert all(torch.equal(g, gathered[0]) for g in gathered), gathered
if rank == 0:
    print(f"torch_ddp: world={world} replicas identical")
dist.destroy_process_group()

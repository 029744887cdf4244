"""Uneven inputs under DDP with ``Join``: rank r has 3 + r batches (rank 0 runs out first).

    torchrun --standalone --nproc-per-node 2 ddp_join_uneven.py

The ranks that run out of data shadow the others' all-reduces with zero gradients and take no optimizer step; at
the end of the block, as in PyTorch, every rank takes the parameters and buffers of the highest rank among those
that ran out last, so the replicas are identical again. Printed: each rank's parameter and buffer checksums after
the block, for ``divide_by_initial_world_size`` True and False.
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from _support import rng
from torch.distributed.algorithms.join import Join
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()


def make():
    model = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
    return model


def batch(step):
    g = rng(10 * step + rank)
    return torch.tensor(g.standard_normal((4, 6)), dtype=torch.float32), \
        torch.tensor(g.standard_normal((4, 2)), dtype=torch.float32)


def checksums(model):
    params = float(sum(p.detach().double().abs().sum() for p in model.parameters()))
    buffers = float(sum(b.double().abs().sum() for b in model.buffers() if b.is_floating_point()))
    every = [None] * world
    dist.all_gather_object(every, (round(params, 6), round(buffers, 6)))
    return every


for divide in (True, False):
    model = DDP(make())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    with Join([model], divide_by_initial_world_size=divide):
        for step in range(3 + rank):
            x, y = batch(step)
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    every = checksums(model)
    if rank == 0:
        for r, (params, buffers) in enumerate(every):
            print(f"divide_by_initial_world_size={divide} rank {r}: parameters {params:.6f} buffers {buffers:.6f}")

weights = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
gathered = [torch.zeros_like(weights) for _ in range(world)]
dist.all_gather(gathered, weights)
if rank == 0:
    print(f"world={world} replicas identical: {all(torch.equal(g, gathered[0]) for g in gathered)}")
dist.destroy_process_group()

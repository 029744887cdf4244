"""PowerSGD as a DDP communication hook (PyTorch's ``powerSGD_hook``), with and without warm start.

    torchrun --standalone --nproc-per-node 2 ddp_powersgd.py

PowerSGD draws each bucket's initial Q from PyTorch's generator, seeded from ``PowerSGDState``'s ``random_seed``;
every compressed step's gradient depends on those numbers, so the printed gradient sums agree with PyTorch's only
where each matrix gets the same Q. Without warm start a fresh Q is drawn at every step. Four weight matrices are
compressed at rank 2, two of them of one shape: PyTorch draws their Qs in its bucket's order (the order in which
the first iteration's gradients became ready, last layer first), grouped by shape. The last layer's weight (3 x 48)
is too small to gain and is all-reduced whole, as are the biases. PyTorch views every gradient as a matrix of
its first dimension's rows, a bias of n numbers as n x 1: with ``min_compression_rate`` below 1 (the last run,
at rank 1) a bias is worth compressing too, and its Q is drawn in the bucket's order among the weights' Qs.
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from _support import rng
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powerSGD
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()


def make():
    model = nn.Sequential(nn.Linear(12, 48), nn.ReLU(), nn.Linear(48, 48), nn.ReLU(), nn.Linear(48, 12), nn.ReLU(),
                          nn.Linear(12, 48), nn.ReLU(), nn.Linear(48, 3))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.tensor(rng(i).standard_normal(tuple(p.shape)) * 0.2, dtype=torch.float32))
    return model


def batch(step):
    g = rng(100 + 10 * step + rank)
    x = torch.tensor(g.standard_normal((16, 12)), dtype=torch.float32)
    return x, (x[:, :3].sum(1) > 0).long() + (x[:, 3] > 1).long()


for warm_start, approximation_rank, min_compression_rate in ((True, 2, 2), (False, 2, 2), (True, 1, 0.5)):
    model = DDP(make())
    state = powerSGD.PowerSGDState(process_group=None, matrix_approximation_rank=approximation_rank,
                                   start_powerSGD_iter=2, min_compression_rate=min_compression_rate,
                                   use_error_feedback=True, warm_start=warm_start, random_seed=7)
    model.register_comm_hook(state, powerSGD.powerSGD_hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(6):
        x, y = batch(step)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        grads = [model.module[i].weight.grad for i in (0, 2, 4, 6)]
        if min_compression_rate < 1:
            grads += [model.module[i].bias.grad for i in (0, 2, 4, 6)]
        optimizer.step()
        if rank == 0:
            print(f"warm_start={warm_start} rank {approximation_rank} rate {min_compression_rate} step {step}: loss {loss.item():.6f} compressed gradients' sums",
                  " ".join(f"{g.sum().item():.6f}/{g.abs().sum().item():.6f}" for g in grads))

weights = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
gathered = [torch.zeros_like(weights) for _ in range(world)]
dist.all_gather(gathered, weights)
if rank == 0:
    print(f"weights {weights.abs().sum().item():.6f}; replicas identical:",
          all(torch.equal(g, gathered[0]) for g in gathered))
dist.destroy_process_group()

"""A torchrun-style DDP script: LOCAL_RANK from the environment, a DistributedSampler with set_epoch each epoch,
the loss averaged over ranks for logging, a checkpoint (model.module's state and the optimizer's) saved by rank 0
only between barriers, then a fresh model and optimizer on every rank resumed from it (map_location="cpu") for
one more epoch.

    torchrun --standalone --nproc-per-node 2 ddp_torchrun_checkpoint.py

Printed by rank 0: each epoch's mean loss over every rank, whether the ranks' shares of the epoch partition the
dataset and whether set_epoch changed the order, the checkpoint's keys, and whether the resumed replicas agree.
ember's shuffled order differs from PyTorch's (its own generator), so each rank takes its whole share as one batch:
the averaged gradient is then the whole dataset's, whatever the order, and the losses can be compared.
"""

import os
import shutil
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)

g = rng(4)
inputs = torch.tensor(g.standard_normal((96, 10)), dtype=torch.float32)
targets = torch.tensor((g.standard_normal((96, 10)) @ g.standard_normal((10, 1)) > 0).ravel(), dtype=torch.long)
dataset = TensorDataset(inputs, targets, torch.arange(96))


def build():
    model = nn.Sequential(nn.Linear(10, 32), nn.LayerNorm(32), nn.ReLU(), nn.Dropout(0.0), nn.Linear(32, 2))
    return model


model = build()
same_weights(model)
model = DDP(model, device_ids=None)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=7)
loader = DataLoader(dataset, batch_size=len(sampler), sampler=sampler, drop_last=False)
seen = {}


def run_epoch(model, optimizer, epoch):
    sampler.set_epoch(epoch)
    model.train()
    total, count, order = torch.zeros(1), torch.zeros(1), []
    for x, y, index in loader:
        order += index.tolist()
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(y)
        count += len(y)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    dist.all_reduce(count, op=dist.ReduceOp.SUM)
    orders = [None] * world
    dist.all_gather_object(orders, order)
    every = sorted(i for o in orders for i in o)
    changed = seen.get("previous") != orders
    seen["previous"] = orders
    if rank == 0:
        print(f"epoch {epoch} loss {total.item() / count.item():.6f} lr {optimizer.param_groups[0]['lr']:.5f} "
              f"shares partition the dataset: {every == list(range(len(dataset)))}, order changed: {changed}")


for epoch in range(4):
    run_epoch(model, optimizer, epoch)
    scheduler.step()

where = [tempfile.mkdtemp() if rank == 0 else None]
dist.broadcast_object_list(where, src=0)
path = os.path.join(where[0], "checkpoint.pt")
if rank == 0:
    torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": 4}, path)
dist.barrier()  # every rank waits until rank 0 has written it

checkpoint = torch.load(path, map_location="cpu", weights_only=True)
resumed = build()
resumed.load_state_dict(checkpoint["model"])
resumed = DDP(resumed)
optimizer = torch.optim.AdamW(resumed.parameters(), lr=1e-2, weight_decay=0.01)
optimizer.load_state_dict(checkpoint["optimizer"])
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
scheduler.load_state_dict(checkpoint["scheduler"])
if rank == 0:
    print(f"checkpoint keys {sorted(checkpoint)} epoch {checkpoint['epoch']} "
          f"state {len(checkpoint['model'])} tensors, optimizer steps {checkpoint['optimizer']['state'][0]['step']}")
run_epoch(resumed, optimizer, checkpoint["epoch"])

dist.barrier()
if rank == 0:
    shutil.rmtree(where[0])
weights = torch.cat([p.detach().reshape(-1) for p in resumed.parameters()])
gathered = [torch.zeros_like(weights) for _ in range(world)]
dist.all_gather(gathered, weights)
if rank == 0:
    print(f"checksum {float(weights.double().abs().sum()):.6f}")
    print(f"world={world} replicas identical: {all(torch.equal(t, gathered[0]) for t in gathered)}")
dist.destroy_process_group()

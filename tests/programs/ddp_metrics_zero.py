"""The everyday extras of a torchrun DDP script: the node-local rank from ``get_node_local_rank``, a config sent
from rank 0 with ``broadcast_object_list``, BatchNorm whose buffers DDP copies from rank 0 at each forward, a
``static_graph`` model with PyTorch's ``fp16_compress_hook``, then ``ZeroRedundancyOptimizer`` (AdamW, its state
sharded over the ranks) consolidated on rank 0; metrics averaged with ``ReduceOp.AVG`` and summed with
``ReduceOp.SUM``, per-rank numbers gathered with ``all_gather_single``, a barrier before the end.

    torchrun --standalone --nproc-per-node 2 ddp_metrics_zero.py

Printed by rank 0: each epoch's loss averaged over ranks and the accuracy over the whole epoch, every rank's
BatchNorm running mean after training (rank 0's copied at each forward, then each rank's own batch's update) and
after an evaluation forward (rank 0's: the buffers changed since the last copy), the consolidated optimizer
state's size, and whether the replicas agree.
"""

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = dist.get_node_local_rank(fallback_rank=0)
dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
config = [{"lr": 0.05, "epochs": 3, "batch": 16} if rank == 0 else None]
dist.broadcast_object_list(config, src=0)
cfg = config[0]

g = rng(20 + rank)  # this rank's shard
inputs = torch.tensor(g.standard_normal((64, 8)) * (1 + rank), dtype=torch.float32)
targets = (inputs[:, :3].sum(1) > 0).long() + (inputs[:, 3] > 0.5).long()


def build():
    # (no bias before BatchNorm, which cancels it: its gradient would be rounding noise, which Adam turns into
    # steps of about lr)
    return nn.Sequential(nn.Linear(8, 32, bias=False), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 3))


def log(*args):
    if rank == 0:
        print(*args, flush=True)


def train(name, model, optimizer):
    for epoch in range(cfg["epochs"]):
        model.train()
        loss_sum, correct = torch.zeros(1), torch.zeros(1, dtype=torch.long)
        for i in range(0, len(inputs), cfg["batch"]):
            x, y = inputs[i:i + cfg["batch"]], targets[i:i + cfg["batch"]]
            optimizer.zero_grad(set_to_none=True)
            out = model(x)
            loss = F.cross_entropy(out, y)
            loss.backward()
            optimizer.step()
            loss_sum += loss.detach()
            correct += (out.argmax(1) == y).sum()
        mean_loss = loss_sum / (len(inputs) // cfg["batch"])
        dist.all_reduce(mean_loss, op=dist.ReduceOp.AVG)
        dist.all_reduce(correct, op=dist.ReduceOp.SUM)
        log(f"{name} epoch {epoch}: loss {mean_loss.item():.6f} accuracy {correct.item() / (len(inputs) * world):.4f}")
    log_running_means(model, f"{name} after training")
    model.eval()
    with torch.no_grad():
        val = F.cross_entropy(model(inputs), targets).reshape(1)
    dist.all_reduce(val, op=dist.ReduceOp.AVG)
    log(f"{name} eval loss {val.item():.6f}")
    log_running_means(model, f"{name} after evaluation")


def log_running_means(model, when):
    running = model.module[1].running_mean.sum().reshape(1)
    every = torch.empty(world)
    dist.all_gather_single(every, running)
    log(f"{when}, every rank's running mean sums " + " ".join(f"{v:.6f}" for v in every.tolist()))


net = build()
same_weights(net)
model = DDP(net, device_ids=None, static_graph=True)
model.register_comm_hook(None, default_hooks.fp16_compress_hook)
train("fp16-hook", model, torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9))

net = build()
same_weights(net)
model = DDP(net, device_ids=None)
optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW, lr=cfg["lr"] / 5,
                                    weight_decay=0.01)
train("zero-adamw", model, optimizer)
optimizer.consolidate_state_dict(to=0)
if rank == 0:
    state = optimizer.state_dict()
    log("consolidated state: parameters", len(state["state"]), "keys", " ".join(sorted(state["state"][0])))

weights = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
gathered = torch.empty(world * weights.numel())
dist.all_gather_single(gathered, weights)
dist.barrier()
log(f"local rank {local_rank}; weights {weights.abs().sum().item():.6f}; replicas identical:",
    all(torch.equal(c, weights) for c in gathered.chunk(world)))
dist.destroy_process_group()

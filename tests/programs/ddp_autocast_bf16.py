"""DDP with bfloat16 autocast on the CPU, as mixed-precision training scripts write it: the forward under
torch.autocast("cpu", dtype=torch.bfloat16), the loss in float32 on the logits cast back, a GradScaler that is
disabled (bfloat16 needs none) kept for the CUDA code path, gradient clipping before the step, and an evaluation
under torch.no_grad() and autocast on rank 0 only (no collective in an evaluation forward).

    torchrun --standalone --nproc-per-node 2 ddp_autocast_bf16.py

Printed by rank 0: each step's loss averaged over the ranks and the norm clip_grad_norm_ returned, the dtype of the
logits under autocast, the evaluation loss, and whether the replicas agree.
"""

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
D, K = 16, 4
W = rng(2).standard_normal((D, K))


def batch(step, n=16):
    g = rng(100 * step + rank)
    x = g.standard_normal((n, D))
    return torch.tensor(x, dtype=torch.float32), torch.tensor((x @ W).argmax(1), dtype=torch.long)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.ln, self.fc2 = nn.Linear(D, 64), nn.LayerNorm(64), nn.Linear(64, K)

    def forward(self, x):
        return self.fc2(F.gelu(self.ln(self.fc1(x))))


net = Block()
same_weights(net)
model = DDP(net)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
scaler = torch.amp.GradScaler("cpu", enabled=False)
for step in range(6):
    x, y = batch(step)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        logits = model(x)
    loss = F.cross_entropy(logits.float(), y)
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
    mean = loss.detach().clone()
    dist.all_reduce(mean, op=dist.ReduceOp.AVG)
    if rank == 0:
        print(f"step {step} loss {mean.item():.5f} grad norm {norm.item():.5f} logits {logits.dtype} "
              f"grad {net.fc1.weight.grad.dtype}")

if rank == 0:
    model.eval()
    with torch.no_grad(), torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        x, y = batch(99, 64)
        print(f"eval loss {F.cross_entropy(model(x).float(), y).item():.5f}")
dist.barrier()
weights = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
gathered = [torch.zeros_like(weights) for _ in range(world)]
dist.all_gather(gathered, weights)
if rank == 0:
    print(f"world={world} replicas identical: {all(torch.equal(t, gathered[0]) for t in gathered)}")
dist.destroy_process_group()

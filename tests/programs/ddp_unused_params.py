"""Parameters some iterations do not use, under DDP with ``find_unused_parameters=True``: a mixture of experts whose
router picks experts per rank and per micro-step, trained with gradient accumulation (``no_sync``), AdamW and SGD
with momentum, and the corner cases of PyTorch's rule for such parameters.

    torchrun --standalone --nproc-per-node 2 ddp_unused_params.py

PyTorch's rule: a parameter that no rank used since the last synchronised backward (``no_sync`` backwards count) keeps
its ``.grad`` untouched: None stays None (so the optimizer skips it: no momentum, no weight decay), a gradient left
from before keeps its value on each rank. A parameter used on some ranks is averaged, each rank contributing its
``.grad`` (zeros when it has none). Printed: every parameter's gradient (None or its sum) after each synchronised
backward, gathered from every rank, and the parameters' checksums.
"""

import contextlib

import torch
import torch.distributed as dist
import torch.nn as nn
from _support import rng
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(3, 4)
        self.experts = nn.ModuleList(nn.Linear(4, 2) for _ in range(4))

    def forward(self, x, chosen):
        h = torch.tanh(self.trunk(x))
        return sum(self.experts[e](h) for e in chosen)


def fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (0.3 + 0.1 * i))


def grads(model):
    """Each parameter's gradient on every rank: None or its sum (6 decimals)."""
    mine = [None if p.grad is None else round(float(p.grad.double().sum()), 6) for p in model.parameters()]
    every = [None] * world
    dist.all_gather_object(every, mine)
    return every


def show(tag, model):
    every = grads(model)
    if rank == 0:
        for r, row in enumerate(every):
            print(f"{tag} rank {r}: {row}")


def checksum(model):
    return float(sum(p.detach().double().abs().sum() for p in model.parameters()))


def batch(step, micro):
    g = rng(100 * step + 10 * micro + rank)
    return torch.tensor(g.standard_normal((5, 3)), dtype=torch.float32), \
        torch.tensor(g.standard_normal((5, 2)), dtype=torch.float32)


# Which experts each micro-step uses, by (step, micro-step, rank): expert 3 only ever inside no_sync on rank 0 at
# step 1; expert 2 nowhere at steps 0 and 2; expert 1 on rank 1 only at step 2.
ROUTES = {
    (0, 0): lambda r: [0], (0, 1): lambda r: [0, 1],
    (1, 0): lambda r: [0, 3] if r == 0 else [0], (1, 1): lambda r: [1, 2],
    (2, 0): lambda r: [0], (2, 1): lambda r: [0, 1] if r == 1 else [0],
    (3, 0): lambda r: [2], (3, 1): lambda r: [0],
}

for name, make_optimizer, as_view in [
    ("adamw", lambda ps: torch.optim.AdamW(ps, lr=0.05, weight_decay=0.1), False),
    ("sgd-momentum", lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), False),
    ("sgd-momentum-bucket-view", lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), True),
]:
    net = Experts()
    fill(net)
    model = DDP(net, find_unused_parameters=True, gradient_as_bucket_view=as_view)
    optimizer = make_optimizer(model.parameters())
    for step in range(4):
        optimizer.zero_grad()
        for micro in range(2):
            x, y = batch(step, micro)
            with model.no_sync() if micro == 0 else contextlib.nullcontext():
                loss = nn.functional.mse_loss(model(x, ROUTES[step, micro](rank)), y) / 2
                loss.backward()
        show(f"{name} step {step}", model)
        optimizer.step()
    if rank == 0:
        print(f"{name}: checksum {checksum(model):.6f}")

# A gradient left from before on a parameter no rank uses stays as it is, different on each rank.
net = Experts()
fill(net)
model = DDP(net, find_unused_parameters=True)
x, _ = batch(9, 0)
model.module.experts[3].weight.grad = torch.full((2, 4), 1.0 + rank)
model(x, [0]).sum().backward()
show("kept from before", model)
# A backward without DDP's forward still marks what it used: the next synchronised backward reduces it.
model.zero_grad()
model.module(x, [1]).sum().backward()
model(x, [0]).sum().backward()
show("used outside DDP's forward", model)
# set_to_none=False: zeros stay zeros where no rank used the parameter.
model.zero_grad(set_to_none=False)
model(x, [0, 2] if rank == 0 else [0]).sum().backward()
show("zeroed, not cleared", model)

weights = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
gathered = [torch.zeros_like(weights) for _ in range(world)]
dist.all_gather(gathered, weights)
if rank == 0:
    print(f"world={world} replicas identical: {all(torch.equal(g, gathered[0]) for g in gathered)}")

# static_graph=True without find_unused_parameters: PyTorch learns in the first iteration which parameters the
# (fixed) graph never uses; they keep their .grad (None), the others are averaged.
net = Experts()
fill(net)
model = DDP(net, static_graph=True)
for step in range(3):
    model.zero_grad()
    x, _ = batch(20 + step, 0)
    model(x, [0, 2]).sum().backward()
    show(f"static graph step {step}", model)
dist.destroy_process_group()

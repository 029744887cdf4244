"""DDP checks run on every rank by tests/test_ddp.py: evaluation on rank 0 only, and where warnings point.

- A GPT-style model with a registered causal-mask buffer, evaluated on rank 0 only under no_grad
  (also model.eval() + no_grad, and model.module(x)), then trained on: no forward of the evaluation
  may communicate, or rank 0 would wait for a broadcast the other ranks never join.
- The non-finite-gradient warning names this file's loss.backward() line.
Prints "CHECK <rank> ok|FAIL <name>" per check, as ddp_checks.py.
"""

import sys
import warnings

import numpy as np
from _report import check as report  # noqa: E402

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()


def check(name, cond):
    report(rank, name, cond)


class TinyGPT(nn.Module):
    def __init__(self, vocab=11, width=8, block=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.proj = nn.Linear(width, width)
        self.head = nn.Linear(width, vocab)
        self.register_buffer("mask", ember.tensor(np.tril(np.ones((1, block, block), dtype=np.float32))))

    def forward(self, idx):
        h = self.embed(idx)
        t = idx.shape[1]
        att = (h @ h.transpose(1, 2)).masked_fill(self.mask[:, :t, :t] == 0, float("-inf")).softmax(-1)
        return self.head(self.proj(att @ h))


ember.manual_seed(0)
model = DDP(TinyGPT())
opt = ember.optim.AdamW(model.parameters(), lr=1e-2)
rng = np.random.default_rng(rank)
for step in range(3):
    idx = ember.tensor(rng.integers(0, 11, (4, 6)))
    opt.zero_grad()
    logits = model(idx)
    nn.functional.cross_entropy(logits.reshape(-1, 11), idx.reshape(-1)).backward()
    opt.step()
    if rank == 0:  # the common evaluation pattern: rank 0 only
        with ember.no_grad():
            model(idx)
        model.eval()
        with ember.no_grad():
            model(idx)
        model.train()
        model.module(idx)  # the wrapped module directly, grad mode on
    if step == 1:
        dist.barrier()
check("rank-0-only evaluation does not hang training", True)
flat = ember.cat([p.detach().reshape(-1) for p in model.parameters()])
gathered = [ember.zeros_like(flat) for _ in range(world)]
dist.all_gather(gathered, flat)
check("replicas identical after rank-0-only evaluation", all(ember.equal(gathered[0], g) for g in gathered))

# the non-finite warning points at the user's backward() line
lin = DDP(nn.Linear(3, 1))
x = ember.ones(2, 3) * (float("nan") if rank == world - 1 else 1.0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    lin(x).sum().backward()  # the line the warning must name
nonfinite = [w for w in caught if "non-finite" in str(w.message)]
check("non-finite warning issued", len(nonfinite) == 1)
check("non-finite warning names the user's file", bool(nonfinite) and nonfinite[0].filename == __file__)
print(f"DONE {rank}", flush=True)
sys.stdout.flush()
dist.destroy_process_group()

"""DistributedDataParallel checks, run on every rank by tests/test_ddp.py through ember's launcher.

Each check compares DDP with what one process computes on the whole global batch
(every rank can compute that reference itself: all data comes from fixed seeds).
Every rank writes one line per check, "CHECK <rank> ok|FAIL <name>" (to $DDP_CHECKS_DIR/rank<r>.txt, else stdout), and goes on after a
failure, so tests/test_ddp.py reports each check, and the rank where it failed, on its own.
"""

import sys

import numpy as np
from _report import check as report  # noqa: E402

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.diagnostics import trace
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()


def check(name, cond):
    report(rank, name, cond)


def make_model(seed=0, width=16):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, width), nn.Tanh(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 3))


def batch(step, n):
    rng = np.random.default_rng(1000 + step)
    return ember.tensor(rng.standard_normal((n, 8)).astype(np.float32)), \
        ember.tensor(rng.standard_normal((n, 3)).astype(np.float32))


def params_of(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def train(model, optimizer, steps, per_rank, shard, first=0):
    for step in range(first, first + steps):
        x, y = batch(step, per_rank * world)
        if shard:
            x, y = x[rank * per_rank:(rank + 1) * per_rank], y[rank * per_rank:(rank + 1) * per_rank]
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()


# 1. world x batch B == one process x batch world*B, for SGD+momentum and Adam. The
#    gradients lie end to end in the buffer DDP laid out at construction and are reduced in place,
#    whichever path the optimizer takes (flat, or per-parameter with foreach=False).
for label, make_opt in (("SGD", lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9)),
                        ("Adam", lambda ps: ember.optim.Adam(ps, lr=0.01)),
                        ("Adam foreach=False", lambda ps: ember.optim.Adam(ps, lr=0.01, foreach=False))):
    reference = make_model()
    train(reference, make_opt(reference.parameters()), 5, 4, shard=False)
    ember.manual_seed(rank)  # different initial weights per rank: DDP must broadcast rank 0's
    ddp = DDP(make_model(seed=0 if rank == 0 else 99))
    opt = make_opt(ddp.parameters())
    train(ddp, opt, 1, 4, shard=True)
    check(f"first step reduced in place, {label}", all(b.in_place for b in ddp.reducer.buckets))
    train(ddp, opt, 4, 4, shard=True, first=1)
    check(f"reduced in place, {label}", all(b.in_place for b in ddp.reducer.buckets))
    check(f"ddp == full batch, {label}",
          all(np.allclose(a, b, atol=1e-5) for a, b in zip(params_of(reference), params_of(ddp))))
    flat = ember.cat([p.detach().reshape(-1) for p in ddp.parameters()])
    gathered = [ember.zeros_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    check(f"replicas identical, {label}", all(ember.equal(gathered[0], g) for g in gathered))

# 2. no_sync accumulation == the same batch without accumulation
ddp = DDP(make_model())
x, y = batch(0, 8 * world)
mine = slice(rank * 8, (rank + 1) * 8)
ddp.zero_grad()
with ddp.no_sync():
    (nn.functional.mse_loss(ddp(x[mine][:4]), y[mine][:4]) / 2).backward()
local_after_no_sync = [p.grad.numpy().copy() for p in ddp.parameters()]
(nn.functional.mse_loss(ddp(x[mine][4:]), y[mine][4:]) / 2).backward()
accumulated = [p.grad.numpy().copy() for p in ddp.parameters()]
check("accumulation reduced in place", all(b.in_place and b.staging is None for b in ddp.reducer.buckets))
ddp.zero_grad()
nn.functional.mse_loss(ddp(x[mine]), y[mine]).backward()
check("no_sync accumulation", all(np.allclose(a, p.grad.numpy(), atol=1e-6)
                                  for a, p in zip(accumulated, ddp.parameters())))
reference = make_model()
nn.functional.mse_loss(reference(x), y).backward()
check("grad is the global mean", all(np.allclose(r.grad.numpy(), p.grad.numpy(), atol=1e-6)
                                     for r, p in zip(reference.parameters(), ddp.parameters())))
if world > 1:
    check("no_sync did not communicate", not all(np.allclose(a, p.grad.numpy(), atol=1e-6)
                                                 for a, p in zip(local_after_no_sync, ddp.parameters())))

# 3. grad_reduction="sum" gives world x the mean
summed = DDP(make_model(), grad_reduction="sum")
nn.functional.mse_loss(summed(x[mine]), y[mine]).backward()
check("sum reduction", all(np.allclose(world * p.grad.numpy(), s.grad.numpy(), atol=1e-5)
                           for p, s in zip(ddp.parameters(), summed.parameters())))

# 4. several buckets, launched while backward is still running
wide = DDP(make_model(width=256), bucket_cap_mb=0.05)
check("several buckets", len(wide.bucket_sizes) >= 3)
with trace.record() as tr:
    nn.functional.mse_loss(wide(x[mine]), y[mine]).backward()
reduces = tr.spans("ddp", "all-reduce")
backward = tr.spans("autograd", "backward")
check("one all-reduce per bucket", len(reduces) == len(wide.bucket_sizes))
check("first all-reduce starts before backward ends",
      backward and reduces[0]["ts"] < backward[0]["ts"] + backward[0]["dur"])
check("buckets launched in order", [e["args"]["bucket"] for e in reduces] == list(range(len(reduces))))

# 5. gradient_as_bucket_view gives the same gradients, as views
viewed = DDP(make_model(), gradient_as_bucket_view=True)
for _ in range(2):
    viewed.zero_grad()
    nn.functional.mse_loss(viewed(x[mine]), y[mine]).backward()
check("bucket views", all(np.allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-6)
                          for p, q in zip(ddp.parameters(), viewed.parameters())))

# 5b. the two modes differ as in PyTorch: a .grad held across zero_grad() keeps its values by default, and
#     is the bucket's memory (so sees the next step's values) with gradient_as_bucket_view=True
for as_view in (False, True):
    m = DDP(make_model(), gradient_as_bucket_view=as_view)
    nn.functional.mse_loss(m(x[mine]), y[mine]).backward()
    held = m.module[0].weight.grad
    before = held.numpy().copy()
    m.zero_grad()
    nn.functional.mse_loss(m(x[mine]), 3 * y[mine]).backward()
    now = m.module[0].weight.grad.numpy()
    if as_view:
        check("bucket view: a held grad sees the next step", np.array_equal(held.numpy(), now)
              and not np.allclose(before, now))
    else:
        check("separate: a held grad keeps its values", np.array_equal(held.numpy(), before)
              and not np.allclose(before, now))
    check(f"reduced in place, gradient_as_bucket_view={as_view}", all(b.in_place for b in m.reducer.buckets))

# 5b'. a .grad the user assigned: backward adds into it, DDP reduces it through a copy (PyTorch copies too); it
#      stays the user's tensor by default and becomes the bucket's view with gradient_as_bucket_view=True
local_ref = make_model()
nn.functional.mse_loss(local_ref(x), y).backward()  # the global mean gradient (whole batch, one process)
for as_view in (False, True):
    m = DDP(make_model(), gradient_as_bucket_view=as_view)
    mine_grad = ember.ones(*m.module[0].weight.shape)
    m.module[0].weight.grad = mine_grad
    nn.functional.mse_loss(m(x[mine]), y[mine]).backward()
    got = m.module[0].weight.grad
    check(f"assigned grad reduced, gradient_as_bucket_view={as_view}",
          (got is not mine_grad) == as_view and np.allclose(got.numpy(), 1 + local_ref[0].weight.grad.numpy(),
                                                             atol=1e-5))

# 5c. two parameter groups (weight decay on matrices only, as nanoGPT): every bucket is reduced in place, the
#     optimizer steps each parameter on the reduced .grad where it lies (no copy), and the result is one
#     process's on the whole batch
def two_groups(model):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    return ember.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                              {"params": [p for p in model.parameters() if p.dim() < 2], "weight_decay": 0.0}],
                             lr=0.01)


reference = make_model(width=64)
train(reference, two_groups(reference), 3, 4, shard=False)
grouped = DDP(make_model(width=64), bucket_cap_mb=0.01)
grouped_opt = two_groups(grouped)
stores = {p._grad_slot[0] for p in grouped.parameters()}
train(grouped, grouped_opt, 3, 4, shard=True)
regions = [(b, b.store.region(b.lo, b.hi)) for b in grouped.reducer.buckets]
check("param groups: one store in registration order, buckets are its slices",
      len(stores) == 1 and len(grouped.reducer.buckets) >= 2 and all(r is not None for _, r in regions)
      and all(np.shares_memory(p.grad._data, r) for b, r in regions for p in b.params))
check("param groups: reduced in place", all(b.in_place and b.staging is None for b in grouped.reducer.buckets))
check("param groups: ddp == full batch",
      all(np.allclose(a, b, atol=1e-5) for a, b in zip(params_of(reference), params_of(grouped))))

# 6. buffers follow rank 0; state_dict keys as PyTorch
def gather(t):
    out = [ember.zeros_like(t) for _ in range(world)]
    dist.all_gather(out, t)
    return out


ember.manual_seed(0)
bn = DDP(nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4)))
bn(x[mine])  # in training mode each rank updates the running stats from its own shard
before = gather(bn.module[1].running_mean.detach().clone())
bn.eval()
with ember.no_grad():
    bn(x[mine])  # no backward follows: as in PyTorch, nothing is communicated
local = gather(bn.module[1].running_mean.detach().clone())
bn(x[mine])  # grad mode on: the forward first copies rank 0's buffers to every rank
after = gather(bn.module[1].running_mean.detach().clone())
check("buffers follow rank 0", all(ember.equal(a, before[0]) for a in after))
if world > 1:
    check("shards gave different local stats", not ember.equal(before[0], before[1]))
    check("no_grad forward leaves buffers local", all(ember.equal(a, b) for a, b in zip(local, before)))
ember.manual_seed(0)
quiet = DDP(nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4)), forward_sync_buffers=False)
quiet(x[mine])
quiet(x[mine])  # forward_sync_buffers=False: forwards never copy rank 0's buffers
if world > 1:
    stats = gather(quiet.module[1].running_mean.detach().clone())
    check("forward_sync_buffers=False keeps buffers local", not ember.equal(stats[0], stats[1]))
check("state_dict prefix", list(bn.state_dict())[0] == "module.0.weight"
      and list(bn.module.state_dict())[0] == "0.weight")

# 7. a parameter without gradient is named; find_unused_parameters reduces zeros
class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(8, 3)
        self.unused = nn.Linear(8, 3)

    def forward(self, inp):
        return self.used(inp)


strict = DDP(TwoHeads())
try:
    nn.functional.mse_loss(strict(x[mine]), y[mine]).backward()
    message = None
except RuntimeError as err:
    message = str(err)
check("unused parameter raises", message is not None)
check("error names the parameter", message is not None and "unused.weight" in message
      and "find_unused_parameters" in message)
lenient = DDP(TwoHeads(), find_unused_parameters=True)
nn.functional.mse_loss(lenient(x[mine]), y[mine]).backward()
check("unused reduced as zeros", float(lenient.module.unused.weight.grad.abs().sum()) == 0.0)
check("unused reduced in place", all(b.in_place for b in lenient.reducer.buckets))

# 8. different models on different ranks: the constructor names rank and parameter
if world > 1:
    try:
        DDP(nn.Linear(8, 3 if rank == 0 else 4))
        message = None
    except RuntimeError as err:
        message = str(err)
    check("mismatch raises", message is not None)
    check("mismatch message", message is not None and "rank 1" in message and "'weight'" in message)

print(f"DONE {rank}", flush=True)
sys.stdout.flush()
dist.destroy_process_group()

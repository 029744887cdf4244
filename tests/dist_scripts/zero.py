"""ZeroRedundancyOptimizer against the unsharded optimizer: the same parameters after every step, per-rank state
memory about 1/world of the unsharded optimizer's, and a consolidated checkpoint that an unsharded optimizer loads.

Run: python -m ember.distributed.run --nproc-per-node 3 tests/dist_scripts/zero.py
"""

from datetime import timedelta

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.distributed.optim import ZeroRedundancyOptimizer
from ember.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank, world = dist.get_rank(), dist.get_world_size()


def build():
    ember.manual_seed(0)
    hidden = [layer for _ in range(5) for layer in (nn.Tanh(), nn.Linear(24, 24))]
    return nn.Sequential(nn.Linear(8, 24), *hidden, nn.Tanh(), nn.Linear(24, 4))


def state_bytes(optimizer):
    return sum(v.numel() * v.element_size() for s in optimizer.state.values() for v in s.values()
               if isinstance(v, ember.Tensor) and v.dim() > 0)


reference = build()
ref_opt = ember.optim.AdamW(
    [{"params": list(reference.parameters())[:4]}, {"params": list(reference.parameters())[4:], "lr": 3e-3}],
    lr=1e-2, weight_decay=0.1)
model = DistributedDataParallel(build())
params = list(model.parameters())
zero = ZeroRedundancyOptimizer([{"params": params[:4]}, {"params": params[4:], "lr": 3e-3}],
                               optimizer_class=ember.optim.AdamW, lr=1e-2, weight_decay=0.1)
scheduler = ember.optim.lr_scheduler.StepLR(zero, step_size=2, gamma=0.5)
ref_scheduler = ember.optim.lr_scheduler.StepLR(ref_opt, step_size=2, gamma=0.5)
gen = np.random.default_rng(3)
for step in range(5):
    x = ember.tensor(gen.normal(size=(world * 4, 8)).astype(np.float32))
    y = ember.tensor(gen.normal(size=(world * 4, 4)).astype(np.float32))
    nn.functional.mse_loss(reference(x), y).backward()
    mine = slice(rank * 4, (rank + 1) * 4)
    nn.functional.mse_loss(model(x[mine]), y[mine]).backward()
    ref_opt.step()
    zero.step()
    scheduler.step()
    ref_scheduler.step()
    ref_opt.zero_grad()
    zero.zero_grad()
    for p, q in zip(model.parameters(), reference.parameters()):
        assert np.allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6), \
            f"rank {rank} step {step}: parameters differ from the unsharded optimizer's"

mine_bytes, whole = state_bytes(zero.optim), state_bytes(ref_opt)
shares = [None] * world
dist.all_gather_object(shares, mine_bytes)
assert sum(shares) == whole, (shares, whole)
assert max(shares) <= 0.55 * whole if world == 2 else max(shares) < whole / world * 1.5, (shares, whole)

try:
    zero.state_dict()
except RuntimeError as e:
    assert "consolidate_state_dict" in str(e)
else:
    raise AssertionError("state_dict() before consolidation must raise")
zero.consolidate_state_dict(to=0)
if rank == 0:
    full = zero.state_dict()
    expected = ref_opt.state_dict()
    assert full["param_groups"] == expected["param_groups"], (full["param_groups"], expected["param_groups"])
    assert sorted(full["state"]) == sorted(expected["state"])
    for i, s in expected["state"].items():
        for k, v in s.items():
            assert np.allclose(full["state"][i][k].numpy(), v.numpy(), rtol=1e-5, atol=1e-7), (i, k)
    restored = ember.optim.AdamW(
        [{"params": list(reference.parameters())[:4]}, {"params": list(reference.parameters())[4:]}], lr=1.0)
    restored.load_state_dict(full)
    assert restored.param_groups[1]["lr"] == ref_opt.param_groups[1]["lr"]
    payload = [full]
else:
    payload = [None]
dist.broadcast_object_list(payload, src=0)

# Every rank loads the whole state back and keeps its shard; training then continues in step.
zero2 = ZeroRedundancyOptimizer([{"params": params[:4]}, {"params": params[4:]}],
                                optimizer_class=ember.optim.AdamW, lr=1.0)
zero2.load_state_dict(payload[0])
assert zero2.param_groups[0]["lr"] == ref_opt.param_groups[0]["lr"]
assert state_bytes(zero2.optim) == mine_bytes
print(f"zero ok rank {rank} of {world}: state {mine_bytes} of {whole} bytes", flush=True)
dist.destroy_process_group()

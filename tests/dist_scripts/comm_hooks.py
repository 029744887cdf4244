"""DDP communication hooks on real ranks, each against the default path.

Run: python -m ember.distributed.run --nproc-per-node 3 tests/dist_scripts/comm_hooks.py [mode]
mode: "checks" (default) or "diverge" (a hook that issues its collective on rank 0 only: must fail, naming it).
"""

import sys
from datetime import timedelta

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from ember.futures import Future
from ember.nn.parallel import DistributedDataParallel as DDP

mode = sys.argv[1] if len(sys.argv) > 1 else "checks"
dist.init_process_group("gloo", timeout=timedelta(seconds=8 if mode == "diverge" else 60))
rank, world = dist.get_rank(), dist.get_world_size()


def build(width=24):
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(10, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, 3))


def batch(step, dtype=np.float32):
    gen = np.random.default_rng(100 * step + rank)
    return ember.tensor(gen.normal(size=(16, 10)).astype(dtype)), ember.tensor(gen.integers(0, 3, size=16))


def grads_after(model, step, dtype=np.float32, loss="cross_entropy"):
    x, y = batch(step, dtype)
    model.zero_grad()
    out = model(x)
    if loss == "cross_entropy":
        nn.functional.cross_entropy(out, y).backward()
    else:  # regression: unlike cross-entropy's, the last layer's gradient has full rank
        nn.functional.mse_loss(out, ember.cos(out.detach() * 7 + y.unsqueeze(1))).backward()
    return [p.grad.numpy().copy() for p in model.parameters()]


def same_on_every_rank(arrays, what):
    gathered = [None] * world
    dist.all_gather_object(gathered, [a.tobytes() for a in arrays])
    assert all(g == gathered[0] for g in gathered), f"{what}: replicas differ"


if mode == "diverge":
    model = DDP(build(), bucket_cap_mb=0.001)

    def lopsided(state, bucket):  # rank 0 all-reduces, the others do not: out of step
        if rank == 0:
            return default_hooks.allreduce_hook(state, bucket)
        fut = Future()
        fut.set_result(bucket.buffer())
        return fut

    model.register_comm_hook(None, lopsided)
    grads_after(model, 0)
    grads_after(model, 1)
    raise SystemExit("a hook out of step across ranks went unnoticed")

plain = DDP(build(), bucket_cap_mb=0.001)  # several buckets
hooked = DDP(build(), bucket_cap_mb=0.001)
hooked.register_comm_hook(None, default_hooks.allreduce_hook)
for step in range(3):
    a, b = grads_after(plain, step), grads_after(hooked, step)
    assert all(np.array_equal(x, y) for x, y in zip(a, b)), f"rank {rank}: allreduce_hook differs from the default"

for name, hook, rtol in (("fp16", default_hooks.fp16_compress_hook, 2e-3),
                         ("bf16", default_hooks.bf16_compress_hook, 2e-2)):
    model = DDP(build(), bucket_cap_mb=0.001)
    model.register_comm_hook(dist.group.WORLD, hook)
    for step in range(2):
        exact, got = grads_after(plain, step), grads_after(model, step)
        for x, y in zip(exact, got):
            scale = np.abs(x).max() + 1e-12
            assert np.abs(x - y).max() <= rtol * scale, f"rank {rank}: {name} error {np.abs(x - y).max() / scale}"
        same_on_every_rank(got, name)

# PowerSGD at full rank: the same averages as the plain all-reduce (after the plain start iterations). In
# float64, and with a regression loss: Gram-Schmidt cannot recover a direction the gradient lacks (cross-entropy's
# last-layer gradient has rank classes - 1) and loses float32's digits on ill-conditioned gradients.
state = powerSGD_hook.PowerSGDState(None, matrix_approximation_rank=24, start_powerSGD_iter=2,
                                    min_compression_rate=0.01)
plain64 = DDP(build().double(), bucket_cap_mb=0.001)
model = DDP(build().double(), bucket_cap_mb=0.001)
model.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
for step in range(5):
    exact = grads_after(plain64, step, np.float64, loss="mse")
    got = grads_after(model, step, np.float64, loss="mse")
    for x, y in zip(exact, got):
        error = np.abs(x - y).max() / (np.abs(x).max() + 1e-300)
        assert error < 1e-8, f"rank {rank} step {step}: full-rank PowerSGD differs by {error:.2g} of the scale"
    same_on_every_rank(got, "powerSGD")
assert state.iter == 5 and state.compression_stats()[1] > 0

# Misuse is refused with PyTorch's exception types.
try:
    model.register_comm_hook(None, default_hooks.allreduce_hook)
except RuntimeError as e:
    assert "only be called once" in str(e)
else:
    raise AssertionError("a second register_comm_hook must raise")
fresh = DDP(build())
for bad, error in ((lambda bucket: None, ValueError), (5, TypeError)):
    try:
        fresh.register_comm_hook(None, bad)
    except error:
        pass
    else:
        raise AssertionError(f"register_comm_hook({bad!r}) must raise {error.__name__}")
fresh.register_comm_hook(None, lambda state, bucket: bucket.buffer())  # not a Future
try:
    grads_after(fresh, 0)
except TypeError as e:
    assert "must return a torch.futures.Future" in str(e), e
else:
    raise AssertionError("a hook that returns no Future must raise")
print(f"comm hooks ok rank {rank} of {world}", flush=True)
dist.destroy_process_group()

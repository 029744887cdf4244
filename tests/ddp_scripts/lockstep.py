"""Lockstep safety under DDP, one scenario per run: python -m ember.distributed.run ... lockstep.py MODE.

Modes that end normally print "lockstep MODE ok" on every rank; the others are
expected to fail, and tests/test_lockstep.py checks how (fast, naming the rank).
"""

import sys
import time
import warnings
from datetime import timedelta

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.nn.parallel import DistributedDataParallel as DDP

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=timedelta(seconds=4))
rank, world = dist.get_rank(), dist.get_world_size()
ember.manual_seed(0)
policy = "raise" if mode == "nan_raise" else "skip"
model = DDP(nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)), nonfinite_grads=policy)
optimizer = ember.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()


def batch(step):
    rng = np.random.default_rng(100 * step + rank)
    return ember.tensor(rng.standard_normal((8, 4)).astype(np.float32)), \
        ember.tensor(rng.standard_normal((8, 1)).astype(np.float32))


def flat():
    return ember.cat([p.detach().reshape(-1) for p in model.parameters()])


def replicas_identical():
    mine = flat()
    every = [ember.zeros_like(mine) for _ in range(world)]
    dist.all_gather(every, mine)
    return all(ember.equal(every[0], t) for t in every)


if mode in ("nan_skip", "nan_raise"):
    for step in range(3):
        x, y = batch(step)
        if step == 1 and rank == 1:
            x[0, 0] = float("nan")  # a bad sample on one rank only
        before = flat().clone()
        optimizer.zero_grad()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                criterion(model(x), y).backward()
            except RuntimeError as err:
                assert mode == "nan_raise" and step == 1, err
                assert "rank(s) [1]" in str(err) and "non-finite" in str(err), err
                print(f"lockstep {mode} ok", flush=True)
                sys.exit(0)
        optimizer.step()
        skipped = [w for w in caught if "non-finite" in str(w.message)]
        if step == 1:
            assert len(skipped) == 1 and "rank(s) [1]" in str(skipped[0].message), [str(w.message) for w in caught]
            assert all(p.grad is None for p in model.parameters())
            assert ember.equal(before, flat()), "the step was not skipped"
        else:
            assert not skipped and not ember.equal(before, flat()), "a good step must update"
        assert replicas_identical()
    assert mode == "nan_skip"
    print(f"lockstep {mode} ok", flush=True)

elif mode == "seed_nan_loop":
    # Seed document 000 §4.4, as written: skip backward when the loss is NaN. Under PyTorch this hangs.
    for step in range(4):
        x, y = batch(step)
        if step == 2 and rank == 1:
            x = x * float("nan")
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        if ember.isnan(loss):
            print(f"Device {rank} has NaN loss, skipping backward", flush=True)
        else:
            loss.backward()
        optimizer.step()

elif mode in ("extra_batch", "extra_batch_late_barrier"):
    # rank 1 has one more batch than rank 0; rank 0 goes on to a barrier (late: rank 1's all-reduce times out
    # first, and its report must say where rank 0 went)
    for step in range(3 + rank):
        x, y = batch(step)
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    if mode == "extra_batch_late_barrier" and rank == 0:
        time.sleep(1.5)
    dist.barrier()

elif mode == "join":
    # rank r has 2 + r batches; the joined ranks contribute zeros, gradients divided by the world size
    from ember.distributed.algorithms import Join

    reference = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    reference.load_state_dict(model.module.state_dict())
    ref_opt = ember.optim.SGD(reference.parameters(), lr=0.1)
    with Join([model]):
        for step in range(2 + rank):
            x, y = batch(step)
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
    # the reference replays every rank's batches: step s averages the ranks that still had data
    for step in range(2 + world - 1):
        ref_opt.zero_grad()
        total = None
        for r in range(world):
            if step < 2 + r:
                rng = np.random.default_rng(100 * step + r)
                x = ember.tensor(rng.standard_normal((8, 4)).astype(np.float32))
                y = ember.tensor(rng.standard_normal((8, 1)).astype(np.float32))
                loss = criterion(reference(x), y) / world
                total = loss if total is None else total + loss
        total.backward()
        ref_opt.step()
    if rank == world - 1:  # the rank that trained every step took every update
        assert all(np.allclose(p.detach().numpy(), q.detach().numpy(), atol=1e-6)
                   for p, q in zip(model.parameters(), reference.parameters()))
    print(f"lockstep {mode} ok", flush=True)

elif mode == "diverge":
    checked = DDP(nn.Linear(4, 2), replica_check_interval=2)
    x, y = batch(0)
    checked(x)
    if rank == 1:
        with ember.no_grad():
            checked.module.bias.add_(1.0)  # an update on one rank only
    try:
        checked(x)  # the second forward runs the periodic check
        raise AssertionError("divergence was not detected")
    except RuntimeError as err:
        assert "'bias' differs from rank 0's on rank(s) [1]" in str(err), err
    print(f"lockstep {mode} ok", flush=True)

elif mode == "stuck":
    x, y = batch(0)
    if rank == 1:
        time.sleep(60)  # stuck: never reaches backward
    criterion(model(x), y).backward()

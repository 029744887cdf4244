"""Every collective against its definition, on however many ranks it is started with.

Rank r's input is a known function of r, so each rank computes every expected result
itself with NumPy. Any failed assertion fails the job (the launcher names the rank).
Run: python -m ember.distributed.run --nproc-per-node 3 tests/dist_scripts/collectives.py
"""

import os
import sys
from datetime import timedelta

import numpy as np

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
DTYPES = (np.float32, np.float64, np.int64)


def value(r, dtype, shape=(2, 3)):
    """Rank r's input: distinct per rank, negative entries included, small enough for PRODUCT."""
    return (np.arange(np.prod(shape)).reshape(shape) % 4 - 1 + r * 2).astype(dtype)


def check(actual, expected, what):
    a = actual.numpy() if isinstance(actual, ember.Tensor) else actual
    assert a.dtype == expected.dtype, f"{what}: dtype {a.dtype} != {expected.dtype}"
    assert a.shape == expected.shape, f"{what}: shape {a.shape} != {expected.shape}"
    assert np.allclose(a, expected, rtol=1e-6), f"{what}: {a} != {expected}"


def reduced(stack, op):
    if op is ReduceOp.AVG:
        total = stack.sum(0)
        return total / world if stack.dtype.kind == "f" else (np.trunc(total / world)).astype(stack.dtype)
    fn = {ReduceOp.SUM: np.sum, ReduceOp.PRODUCT: np.prod, ReduceOp.MAX: np.max, ReduceOp.MIN: np.min}[op]
    return fn(stack, axis=0).astype(stack.dtype)


ALL = np.stack  # readability: ALL([value(r) for r in ranks])
OPS = (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX)

# ---- environment a PyTorch script expects
assert os.environ["RANK"] == str(rank) and os.environ["WORLD_SIZE"] == str(world)
assert os.environ["LOCAL_RANK"] == str(rank) and os.environ["LOCAL_WORLD_SIZE"] == str(world)
if os.environ.get("EMBER_EXPECT_LAUNCHER"):
    assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["MASTER_PORT"] == "29500", os.environ
    assert os.environ["MASTER_ADDR"] == "127.0.0.1"
assert dist.is_initialized() and dist.get_backend() == "gloo" and dist.group.WORLD is dist.default_group()
assert dist.comm.thread_level() == "multiple"  # the DDP reducer communicates from a background thread

# ---- all_reduce: every op and dtype, blocking and async
for dtype in DTYPES:
    stack = ALL([value(r, dtype) for r in range(world)])
    for op in OPS:
        t = ember.tensor(value(rank, dtype))
        version = t._version
        assert dist.all_reduce(t, op=op) is None
        check(t, reduced(stack, op), f"all_reduce {op} {dtype.__name__}")
        assert t._version > version, "an in-place collective must bump the version counter"
        t = ember.tensor(value(rank, dtype))
        work = dist.all_reduce(t, op=op, async_op=True)
        assert work.wait() is True and work.is_completed()
        check(t, reduced(stack, op), f"async all_reduce {op} {dtype.__name__}")
        assert work.result()[0] is t

# polling is_completed() until done also finishes the op (AVG's division included)
t = ember.tensor(value(rank, np.float32))
work = dist.all_reduce(t, op=ReduceOp.AVG, async_op=True)
while not work.is_completed():
    pass
check(t, reduced(ALL([value(r, np.float32) for r in range(world)]), ReduceOp.AVG), "polled AVG")

# 0-d tensors and bool (logical or / and)
t = ember.tensor(float(rank))
dist.all_reduce(t)
check(t, np.array(sum(range(world)), np.float32), "0-d all_reduce")
b = ember.tensor([rank == 0, True])
dist.all_reduce(b, op=ReduceOp.MIN)
check(b, np.array([world == 1, True]), "bool MIN = and")

# ---- broadcast from every source
for src in range(world):
    for dtype in DTYPES:
        t = ember.tensor(value(rank, dtype))
        dist.broadcast(t, src=src)
        check(t, value(src, dtype), f"broadcast src={src}")
t = ember.tensor(value(rank, np.float64))
dist.broadcast(t, group_src=world - 1, async_op=True).wait()
check(t, value(world - 1, np.float64), "async broadcast group_src")

# ---- all_gather, all_gather_into_tensor (concatenated and stacked)
for dtype in DTYPES:
    outs = [ember.zeros(2, 3, dtype=ember.from_numpy(np.zeros(0, dtype)).dtype) for _ in range(world)]
    dist.all_gather(outs, ember.tensor(value(rank, dtype)))
    for r in range(world):
        check(outs[r], value(r, dtype), f"all_gather[{r}] {dtype.__name__}")
cat = ember.zeros(2 * world, 3)
dist.all_gather_into_tensor(cat, ember.tensor(value(rank, np.float32)))
check(cat, np.concatenate([value(r, np.float32) for r in range(world)]), "all_gather_into_tensor concat")
stacked = ember.zeros(world, 2, 3)
dist.all_gather_into_tensor(stacked, ember.tensor(value(rank, np.float32)), async_op=True).wait()
check(stacked, ALL([value(r, np.float32) for r in range(world)]), "all_gather_into_tensor stacked")

# ---- reduce: only dst changes
for dst in (0, world - 1):
    for op in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.AVG):
        t = ember.tensor(value(rank, np.float64))
        dist.reduce(t, dst=dst, op=op)
        want = reduced(ALL([value(r, np.float64) for r in range(world)]), op) if rank == dst else value(rank, np.float64)
        check(t, want, f"reduce dst={dst} {op}")

# ---- reduce_scatter_tensor / reduce_scatter: rank r gets block r of the reduction
for op in (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MIN):
    for dtype in DTYPES:
        blocks = [ALL([value(r * 10 + b, dtype) for b in range(world)]) for r in range(world)]  # rank r's input
        out = ember.zeros(2, 3, dtype=ember.from_numpy(np.zeros(0, dtype)).dtype)
        dist.reduce_scatter_tensor(out, ember.tensor(blocks[rank].reshape(world * 2, 3)), op=op)
        check(out, reduced(ALL([blocks[r][rank] for r in range(world)]), op), f"reduce_scatter_tensor {op}")
        out2 = ember.zeros_like(out)
        dist.reduce_scatter(out2, [ember.tensor(x) for x in blocks[rank]], op=op)
        check(out2, out.numpy(), f"reduce_scatter {op}")

# ---- gather / scatter
for root in (0, world - 1):
    gl = [ember.zeros(2, 3) for _ in range(world)] if rank == root else None
    dist.gather(ember.tensor(value(rank, np.float32)), gl, dst=root)
    if rank == root:
        for r in range(world):
            check(gl[r], value(r, np.float32), f"gather dst={root} [{r}]")
    sl = [ember.tensor(value(10 + r, np.int64)) for r in range(world)] if rank == root else None
    t = ember.zeros(2, 3, dtype=ember.int64)
    dist.scatter(t, sl, src=root)
    check(t, value(10 + rank, np.int64), f"scatter src={root}")

# ---- all_to_all: output[j] on rank i = input[i] of rank j
ins = [ember.tensor(value(100 * rank + j, np.float32)) for j in range(world)]
outs = [ember.zeros(2, 3) for _ in range(world)]
dist.all_to_all(outs, ins)
for j in range(world):
    check(outs[j], value(100 * j + rank, np.float32), f"all_to_all[{j}]")

# ---- point to point: a ring, blocking and not; recv reports the sender
if world > 1:
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    got = ember.zeros(2, 3)
    sends = dist.isend(ember.tensor(value(rank, np.float32)), dst=nxt)
    assert dist.recv(got, src=None) == prv
    sends.wait()
    check(got, value(prv, np.float32), "ring recv")
    req = dist.irecv(got, src=prv, tag=7)
    dist.send(ember.tensor(value(rank + 50, np.float32)), dst=nxt, tag=7)
    req.wait()
    check(got, value(prv + 50, np.float32), "ring irecv")
    assert req.result() == prv
    # a wait that runs out raises (naming the op and rank), and can be waited on again
    if rank == 0:
        late = dist.irecv(got, src=1, tag=9)
        try:
            late.wait(timeout=0.2)
            raise AssertionError("a recv with no sender must time out")
        except RuntimeError as err:
            assert "recv timed out" in str(err) and "rank 0" in str(err), err
    dist.barrier()
    if rank == 1:
        dist.send(ember.full((2, 3), 9.0), dst=0, tag=9)
    if rank == 0:
        late.wait()
        check(got, np.full((2, 3), 9.0, np.float32), "late recv")

# ---- barrier and groups
dist.barrier()
dist.barrier(async_op=True).wait()
members = sorted({0, world - 1})
sub = dist.new_group(members)
t = ember.ones(3)
result = dist.all_reduce(t, group=sub)
if rank in members:
    check(t, np.full(3, float(len(members)), np.float32), "all_reduce in a group")
    assert dist.get_rank(sub) == members.index(rank) and dist.get_world_size(sub) == len(members)
else:
    assert result is None and dist.get_rank(sub) == -1 and dist.get_world_size(sub) == -1
    assert t.tolist() == [1.0, 1.0, 1.0]
if rank in members:
    t = ember.tensor(float(rank))
    dist.broadcast(t, src=world - 1, group=sub)  # src is a global rank
    check(t, np.array(world - 1, np.float32), "broadcast in a group")

# ---- mismatches raise on every rank, naming the ranks and shapes; the group stays usable
if world > 1:
    cases = [
        ("shape", lambda: dist.all_reduce(ember.zeros(rank + 1)), ["rank 0", "shape [1]", "shape [2]"]),
        ("dtype", lambda: dist.all_reduce(ember.zeros(2, dtype=ember.float64 if rank else ember.float32)),
         ["float32", "float64"]),
        ("op", lambda: dist.all_reduce(ember.zeros(2), op=ReduceOp.MAX if rank else ReduceOp.SUM), ["MAX", "SUM"]),
        ("root", lambda: dist.broadcast(ember.zeros(2), src=rank % 2), ["root=0", "root=1"]),
        ("collective", lambda: dist.all_reduce(ember.zeros(2)) if rank else dist.broadcast(ember.zeros(2), src=0),
         ["all_reduce", "broadcast"]),
        ("all_gather input", lambda: dist.all_gather([ember.zeros(rank + 1) for _ in range(world)],
                                                     ember.zeros(rank + 1)), ["shape [1]", "shape [2]"]),
    ]
    for name, call, words in cases:
        try:
            call()
            raise AssertionError(f"mismatched {name} did not raise")
        except RuntimeError as err:
            assert all(w in str(err) for w in words), f"{name}: {err}"
    # one rank's bad argument: it raises its own error, the others learn of it
    try:
        dist.all_reduce(ember.zeros(3, 4).t() if rank == 1 else ember.zeros(4, 3))
        raise AssertionError("bad argument on rank 1 did not raise")
    except (ValueError, RuntimeError) as err:
        assert ("contiguous" in str(err)) if rank == 1 else "rank(s) [1] passed invalid arguments" in str(err), err
    t = ember.ones(2)
    dist.all_reduce(t)
    check(t, np.full(2, float(world), np.float32), "all_reduce after the errors")

# ---- local argument errors (same on every rank)
for call, exc, words in [
    (lambda: dist.all_reduce([1.0]), TypeError, "must be an ember Tensor"),
    (lambda: dist.all_reduce(ember.ones(2), op="sum"), TypeError, "ReduceOp"),
    (lambda: dist.broadcast(ember.ones(2)), ValueError, "exactly one of src"),
    (lambda: dist.broadcast(ember.ones(2), src=world), ValueError, "not a rank of the group"),
    (lambda: dist.all_gather([ember.ones(2)] * (world + 1), ember.ones(2)), ValueError, f"list of {world} tensors"),
    (lambda: dist.all_gather_into_tensor(ember.ones(world + 1, 2), ember.ones(2)), ValueError, "must have shape"),
]:
    try:
        call()
        raise AssertionError(f"expected {exc.__name__}")
    except exc as err:
        assert words in str(err), err
try:
    dist.init_process_group("gloo")
    raise AssertionError("second init must fail")
except ValueError as err:
    assert "twice" in str(err)

# ---- checks off: same results (the hot path the reducer uses skips them)
dist.set_collective_checks(False)
t = ember.tensor(value(rank, np.float32))
dist.all_reduce(t)
check(t, reduced(ALL([value(r, np.float32) for r in range(world)]), ReduceOp.SUM), "all_reduce without checks")
dist.set_collective_checks(True)

dist.destroy_process_group()
assert not dist.is_initialized()
dist.init_process_group()  # re-initialising after destroy works (MPI itself stays up)
assert dist.get_backend() == "mpi"
dist.destroy_process_group()
print(f"collectives ok rank {rank} of {world}", flush=True)
sys.exit(0)

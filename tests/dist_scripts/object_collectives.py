"""Object collectives and monitored_barrier on real ranks, each checked against its definition.

Run: python -m ember.distributed.run --nproc-per-node 3 tests/dist_scripts/object_collectives.py [missing]
With ``missing``, the last rank stays away from a monitored_barrier and rank 0 must name it.
"""

import sys
import time
from datetime import timedelta

import ember.distributed as dist

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()


def value(r):
    """Rank r's object: nested, of a size that differs per rank, with types JSON would lose."""
    return {"rank": r, "name": "x" * (10 * r + 1), "shape": (r, r + 1), "set": {r, -r}, "nested": [[r] * r, None]}


if sys.argv[1:] == ["missing"]:
    if rank == world - 1:
        time.sleep(4)  # arrives after rank 0 gave up
        sys.exit(0)
    try:
        dist.monitored_barrier(timeout=timedelta(seconds=1.5), wait_all_ranks=True)
    except RuntimeError as e:
        print(f"rank {rank} raised: {e}", flush=True)
    sys.exit(0)

gathered = [None] * world
dist.all_gather_object(gathered, value(rank))
assert gathered == [value(r) for r in range(world)], gathered

for root in range(world):
    objects = [value(root), "from", root] if rank == root else [None, None, None]
    dist.broadcast_object_list(objects, src=root)
    assert objects == [value(root), "from", root], objects

    out = [None] * world if rank == root else None
    dist.gather_object(value(rank), out, dst=root)
    assert out == ([value(r) for r in range(world)] if rank == root else None), out

    received = [None]
    dist.scatter_object_list(received, [value(10 + r) for r in range(world)] if rank == root else None, src=root)
    assert received == [value(10 + rank)], received

import ember  # noqa: E402  tensors travel inside objects too (a state dict, say)

tensors = [None] * world
dist.all_gather_object(tensors, {"w": ember.full((2, 2), float(rank)), "p": ember.ones(3, requires_grad=True)})
assert [float(t["w"].sum()) for t in tensors] == [4.0 * r for r in range(world)], tensors
assert all(t["p"].requires_grad and t["w"].dtype == ember.float32 for t in tensors)

try:
    dist.all_gather_object([None] * (world + 1), 1)
except ValueError as e:
    assert "one item per rank" in str(e), e
else:
    raise AssertionError("a wrong-length object_list must raise")

dist.monitored_barrier(timeout=timedelta(seconds=10))
print(f"object collectives ok rank {rank} of {world}", flush=True)
dist.destroy_process_group()

"""RPC's start and end on real ranks: init_rpc's checks, a graceful shutdown that waits for work still in flight,
and calls to a worker that stopped serving, which fail within their timeout instead of hanging.

Run: python -m ember.distributed.run --nproc-per-node 3 tests/dist_scripts/rpc_lifecycle.py [stopped]
Each rank prints what it saw; tests/test_rpc.py checks the lines.
"""

import sys
import time

import ember
import ember.distributed as dist
import ember.distributed.rpc as rpc

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
served = []


def slow_record(seconds, value):
    time.sleep(seconds)
    served.append(value)
    return value


for bad, kwargs in [("rank", {"rank": world + 3}), ("world_size", {"world_size": world + 1})]:
    try:
        rpc.init_rpc(f"worker{rank}", **kwargs)
    except RuntimeError as e:
        print(f"rank {rank} wrong {bad}: {e}", flush=True)
try:
    rpc.init_rpc("has space")
except ValueError as e:
    print(f"rank {rank} bad name: {e}", flush=True)
try:
    rpc.init_rpc("everyone", rank=rank, world_size=world)  # collective: every rank learns the names clash
except RuntimeError as e:
    print(f"rank {rank} same names: {e}", flush=True)

rpc.init_rpc(f"worker{rank}")  # rank and world size from RANK / WORLD_SIZE, as PyTorch reads them
if sys.argv[1:] == ["stopped"]:
    if rank == 2:
        rpc.shutdown(graceful=False)  # stops serving at once
    dist.barrier()
    if rank == 1:
        started = time.monotonic()
        try:
            rpc.rpc_sync("worker2", ember.add, args=(ember.ones(1), 1), timeout=1.5)
        except RuntimeError as e:
            print(f"rank 1 calling the stopped worker after {time.monotonic() - started:.1f} s: {e}", flush=True)
    if rank != 2:
        rpc.shutdown(graceful=False)
    dist.barrier()
    print(f"rank {rank} finished", flush=True)
    sys.exit(0)

if rank == 1:  # work still in flight when both reach shutdown: the graceful shutdown waits for it
    rpc.rpc_async("worker0", slow_record, args=(1.0, "from rank 1"))
    rpc.remote("worker2", slow_record, args=(0.5, "remote from rank 1"))
rpc.shutdown()
print(f"rank {rank} after shutdown served {served}", flush=True)
try:
    rpc.rpc_sync("worker0", ember.add, args=(1, 1))
except RuntimeError as e:
    print(f"rank {rank} after shutdown: {e}", flush=True)
dist.destroy_process_group()

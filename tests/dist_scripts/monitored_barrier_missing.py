"""monitored_barrier with a rank that never arrives: rank 0 must name it (the last rank stays away, and arrives
only after rank 0 gave up). A script, not a rank test: the barrier's unanswered messages would meet the collectives
of the tests after it. The object collectives themselves: tests/ranks/rank_object_collectives.py.

Run: python -m ember.distributed.run --nproc-per-node 3 tests/dist_scripts/monitored_barrier_missing.py
"""

import sys
import time
from datetime import timedelta

import ember.distributed as dist

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
if rank == world - 1:
    time.sleep(4)  # arrives after rank 0 gave up
    sys.exit(0)
try:
    dist.monitored_barrier(timeout=timedelta(seconds=1.5), wait_all_ranks=True)
except RuntimeError as e:
    print(f"rank {rank} raised: {e}", flush=True)
sys.exit(0)

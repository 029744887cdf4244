"""Each rank prints many console lines at once, and a stuck rank's collective times out on the others.

    console_lines.py MODE

MODE: lines (every rank prints 2000 numbered lines to stdout and to stderr, which print writes under
PYTHONUNBUFFERED=1 as the text, then its newline; and 200 more whose newline comes a moment after the text) |
stuck_all_reduce | stuck_all_gather_object | stuck_all_gather_single | stuck_ZeroRedundancyOptimizer.consolidate_state_dict
| stuck_ZeroRedundancyOptimizer.step | stuck_checkpoint.save
(rank 1 sleeps; rank 0's collective must time out, its message naming that collective: the one the program called,
not those it runs)
"""

import sys
import time
from datetime import timedelta

import ember
import ember.distributed as dist

mode = sys.argv[1]
dist.init_process_group("gloo", timeout=timedelta(seconds=1.5 if mode.startswith("stuck") else 30))
me = dist.get_rank()
if mode == "lines":
    dist.barrier()
    for i in range(2000):
        print(f"rank {me} line {i} " + "x" * 40)
        print(f"rank {me} err {i} " + "y" * 40, file=sys.stderr)
    for i in range(2000, 2200):
        print(f"rank {me} line {i} " + "x" * 40, end="", flush=True)
        time.sleep(0.001)
        print(flush=True)
elif mode.startswith("stuck"):
    if me == 1:
        time.sleep(60)
    elif mode == "stuck_all_reduce":
        dist.all_reduce(ember.ones(4))
    elif mode == "stuck_all_gather_single":  # (runs dist.all_gather_single)
        from ember.distributed import _functional_collectives as funcol
        funcol.all_gather_single(ember.ones(4), 0, dist.group.WORLD)
    elif mode == "stuck_ZeroRedundancyOptimizer.consolidate_state_dict":  # (runs gather_object)
        from ember.distributed.optim import ZeroRedundancyOptimizer
        ZeroRedundancyOptimizer([ember.nn.Parameter(ember.ones(2))], ember.optim.SGD, lr=0.1).consolidate_state_dict()
    elif mode == "stuck_ZeroRedundancyOptimizer.step":  # (runs a broadcast per owner)
        from ember.distributed.optim import ZeroRedundancyOptimizer
        params = [ember.nn.Parameter(ember.ones(2)), ember.nn.Parameter(ember.ones(2))]  # one owned by rank 1
        ZeroRedundancyOptimizer(params, ember.optim.SGD, lr=0.1).step()
    elif mode == "stuck_checkpoint.save":  # (runs all_gather_object, then broadcast_object_list)
        import tempfile

        import ember.distributed.checkpoint as dcp
        dcp.save({"w": ember.ones(2)}, checkpoint_id=tempfile.mkdtemp())
    else:
        dist.all_gather_object([None, None], {"rank": me})
    time.sleep(60)  # never reached in a correct run: the job must have been stopped
dist.destroy_process_group()

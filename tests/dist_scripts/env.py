"""Write this rank's launcher variables to OUT_DIR/RANK.json; print a line on stdout and one on stderr.

    env.py OUT_DIR [init]     (init: call init_process_group first, as a script started by plain mpiexec must)
"""

import json
import os
import sys

NAMES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK",
         "ROLE_WORLD_SIZE", "ROLE_NAME", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
         "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT", "OMP_NUM_THREADS")

out = sys.argv[1]
before = {name: os.environ.get(name) for name in NAMES}
if sys.argv[2:] == ["init"]:
    import ember.distributed as dist

    dist.init_process_group()
rank = os.environ["RANK"]
with open(os.path.join(out, f"{rank}.json"), "w") as f:
    json.dump({name: os.environ.get(name) for name in NAMES} | {"argv": sys.argv[1:], "main": __name__, "before": before}, f)
print(f"out from rank {rank}", flush=True)
print(f"err from rank {rank}", file=sys.stderr, flush=True)

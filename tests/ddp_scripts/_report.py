"""The CHECK lines the DDP scripts print for tests/test_ddp.py (one file per rank under DDP_CHECKS_DIR)."""

import os


def check(rank, name, cond):
    line = f"CHECK {rank} {'ok' if cond else 'FAIL'} {name}\n"
    if os.environ.get("DDP_CHECKS_DIR"):  # one file per rank: lines of different ranks never interleave
        with open(os.path.join(os.environ["DDP_CHECKS_DIR"], f"rank{rank}.txt"), "a") as f:
            f.write(line)
    else:
        print(line, end="", flush=True)

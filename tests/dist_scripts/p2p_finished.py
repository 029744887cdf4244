"""Point-to-point operations with a rank that has finished its script. One scenario per run: python -m
ember.distributed.run --nproc-per-node 2 ... p2p_finished.py MODE; tests/test_p2p_finished.py checks how each ends:
a receive or a large send whose peer has returned from its script fails at once, naming that rank (not at the
60 s timeout); a message sent just before its sender finished is still received."""

import sys
import time
from datetime import timedelta

import numpy as np

import ember
import ember.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=timedelta(seconds=60))
rank = dist.get_rank()

if mode == "recv_from_finished":  # rank 1 returns at once; rank 0 waits for a message it never sent
    if rank == 0:
        dist.recv(ember.zeros(3), src=1)
elif mode == "recv_any_finished":
    if rank == 0:
        dist.recv(ember.zeros(3))
elif mode == "send_to_finished":  # large enough that the send waits for its receive (no eager copy)
    if rank == 0:
        dist.send(ember.zeros(4 << 20), dst=1)
elif mode == "sent_then_finished":  # rank 1 sends and returns; rank 0 receives a moment later
    if rank == 1:
        dist.send(ember.arange(3.0), dst=0)
    else:
        time.sleep(1.0)
        got = ember.zeros(3)
        dist.recv(got, src=1)
        assert np.array_equal(got.numpy(), [0.0, 1.0, 2.0]), got
        print("received", got.tolist(), flush=True)
else:
    raise SystemExit(f"unknown mode {mode}")

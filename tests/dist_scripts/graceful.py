"""Every rank waits in a collective-free loop; on SIGTERM it saves a final checkpoint (a marker file) and exits 0.

    graceful.py DIR MODE     MODE: handler (install the handler) | ignore (ignore SIGTERM and SIGINT: must be killed)
"""

import os
import signal
import sys
import time

import ember.distributed as dist

folder, mode = sys.argv[1], sys.argv[2]
dist.init_process_group("gloo")
rank = dist.get_rank()


def save_and_stop(signum, frame):
    with open(os.path.join(folder, f"final-{rank}"), "w") as f:
        f.write(f"saved on signal {signum}")
    sys.exit(0)


signal.signal(signal.SIGTERM, save_and_stop if mode == "handler" else signal.SIG_IGN)
if mode == "ignore":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
open(os.path.join(folder, f"ready-{rank}"), "w").close()
while True:
    time.sleep(0.05)

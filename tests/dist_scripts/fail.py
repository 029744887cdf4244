"""Ways a rank can fail; the launcher must stop the job promptly and name the rank.

    fail.py MODE RANK TOKEN     (TOKEN only marks the processes so the test can look for leftovers)

MODE: raise (after init) | slowraise (raise 2 s after init) | raise2 (a two-line message) | preinit (raise before init) | kill (SIGKILL before init) |
killpost (SIGKILL after init) | exit (sys.exit(3)) | exit0pre (exit 0 before init) |
_exit0 (os._exit(0) after init) | last_exit0 (the others return, then RANK os._exit(0)) | stuck (RANK sleeps; the others' all_reduce must time out) |
sleep (every rank sleeps) | sleepchild (each rank starts a child; all sleep) |
interrupt (every rank sleeps; KeyboardInterrupt is left to the rank's default)
"""

import os
import signal
import sys
import time
from datetime import timedelta

import ember
import ember.distributed as dist

mode, bad = sys.argv[1], int(sys.argv[2])
me = int(os.environ["RANK"]) if "RANK" in os.environ else int(os.environ["PMI_RANK"])
if me == bad and mode == "preinit":
    raise ValueError(f"rank {me} gave up before init")
if me == bad and mode == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
if me == bad and mode == "exit0pre":
    sys.exit(0)
dist.init_process_group("gloo", timeout=timedelta(seconds=1.5 if mode == "stuck" else 30))
print(f"rank {me} initialised", flush=True)
t = ember.ones(4)
dist.all_reduce(t)
if me == bad and mode == "raise":
    raise ValueError(f"rank {me} gave up")
if me == bad and mode == "slowraise":
    time.sleep(2)
    raise ValueError(f"rank {me} gave up later")
if me == bad and mode == "raise2":
    raise ValueError(f"rank {me} gave up\non two lines")
if me == bad and mode == "exit":
    sys.exit(3)
if me == bad and mode == "killpost":
    os.kill(os.getpid(), signal.SIGKILL)
if me == bad and mode == "_exit0":
    os._exit(0)
if mode == "last_exit0":  # the others return; RANK then ends with os._exit(0): a success
    if me == bad:
        # "then": 8 s for the others to finish MPI's finalisation first (2 s was not enough on a loaded machine;
        # a rank that ends without finalising while another still finalises leaves that one waiting)
        time.sleep(8)
        os._exit(0)
    sys.exit(0)
if mode == "sleepchild":  # a process of the rank's own (a data loader worker, say) must be stopped with it
    import subprocess

    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", sys.argv[3]])
if mode in ("sleep", "interrupt", "sleepchild") or (me == bad and mode == "stuck"):
    time.sleep(60)
dist.all_reduce(t)  # the healthy ranks wait here for the failed one
time.sleep(60)      # never reached in a correct run: the job must have been stopped

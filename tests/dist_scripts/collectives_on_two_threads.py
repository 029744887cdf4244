"""A correct program that must run to its end: each rank issues collectives from two threads, one communicator per
thread, in the same order per communicator on every rank, but at different speeds. For a while each rank's thread
is blocked in a collective the other rank has not issued yet, on another communicator than the one the other rank
is blocked in: not a deadlock, since the other rank's second thread issues it. Run by tests/test_lockstep.py:
python -m ember.distributed.run --nproc-per-node 2 ... collectives_on_two_threads.py
"""

import threading
import time
from datetime import timedelta

import ember
import ember.distributed as dist

dist.init_process_group("mpi", timeout=timedelta(seconds=40))
rank = dist.get_rank()
side = dist.new_group([0, 1])
failures = []


def side_thread():
    try:
        if rank == 0:
            time.sleep(3.5)  # rank 0's side thread issues late: rank 1's side thread waits for it
        total = ember.ones(2)
        dist.all_reduce(total, group=side)
        assert total.tolist() == [2.0, 2.0], total
    except BaseException as err:  # (handed to the main thread, which fails the job with it)
        failures.append(err)


thread = threading.Thread(target=side_thread)
thread.start()
if rank == 1:
    time.sleep(2.5)  # rank 1's main thread computes a while: rank 0's main thread waits for it
total = ember.ones(2)
dist.all_reduce(total)
thread.join()
if failures:
    raise failures[0]
assert total.tolist() == [2.0, 2.0], total
print(f"rank {rank} completed", flush=True)
dist.destroy_process_group()

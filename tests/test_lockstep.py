"""Lockstep safety: ranks out of step and missing ranks end the job loudly and quickly, never hang. (NaN gradients on
one rank, uneven inputs under Join and the replica checksum: tests/ranks/rank_lockstep.py, on every rank.)"""

import os
import subprocess
import sys
import time

import pytest

pytest.importorskip("mpi4py")

from conftest import ROOT  # noqa: E402

SCRIPT = os.path.join("tests", "dist_scripts", "lockstep_hangs.py")


def launch(mode, nproc=2, timeout=60):
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), "--timeout",
           str(timeout - 10), SCRIPT, mode]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True,
                          timeout=timeout)
    return proc, time.monotonic() - start


def test_seed_nan_skipping_loop_is_named_instead_of_hanging():
    # rank 1 follows seed 000 §4.4 and skips backward on its NaN loss: PyTorch DDP hangs here
    proc, seconds = launch("seed_nan_loop")
    assert proc.returncode != 0
    assert "out of step" in proc.stderr and "Rank(s) [1] ran a DDP forward without the synchronised backward" \
        in proc.stderr, proc.stderr
    assert seconds < 20, "detected at the first mismatched all-reduce, well within the script's 30 s timeout"


def test_a_rank_that_does_not_arrive_is_named_within_the_timeout():
    proc, seconds = launch("stuck")  # rank 1 never reaches backward: rank 0 names it
    assert proc.returncode != 0
    assert "timed out after 4 s" in proc.stderr, proc.stderr
    assert "rank 1 did NOT arrive" in proc.stderr, proc.stderr
    assert seconds < 30, f"the job must end soon after the 4 s timeout, took {seconds:.1f} s"


@pytest.mark.parametrize("mode,blocked_in", [
    # rank 1 runs an extra batch while rank 0 waits at a barrier (early, or after rank 1's all-reduce began):
    # each is blocked in a collective the other has not issued, on another communicator
    ("extra_batch", ("barrier", "all_reduce")),
    ("extra_batch_late_barrier", ("barrier", "all_reduce")),
    # a metric all-reduced under `if rank == 0:` while rank 1 goes on to its next backward
    ("rank0_only_all_reduce", ("all_reduce",)),
])
def test_ranks_blocked_in_each_others_missing_collectives_are_named_at_once(mode, blocked_in):
    """Each rank waits in a collective the other will never issue: a deadlock, named within seconds (the other
    rank, where it is blocked and what this rank has not issued), not after the 60 s timeout."""
    proc, seconds = launch(mode, timeout=90)
    assert proc.returncode != 0
    assert "each rank waits for the other, so neither can go on" in proc.stderr, proc.stderr
    assert any(f"is blocked in {name} (operation #" in proc.stderr for name in blocked_in), proc.stderr
    assert "under `if rank == 0:`" in proc.stderr and "timed out" not in proc.stderr, proc.stderr
    assert seconds < 30, f"the job must end long before the 60 s timeout, took {seconds:.1f} s"


def test_a_rank_that_finished_its_script_is_named_as_finished():
    # rank 1 runs one more batch after rank 0 has returned from its script (after destroy_process_group): rank 1
    # learns it from rank 0's record at once, naming what rank 0 did last, rather than that it died or is stuck
    proc, seconds = launch("extra_batch_finished")
    assert proc.returncode != 0
    assert "rank 0 has finished its script (it returned from it) having issued 6 operation(s) on this " \
        "communicator (its last was #6, all_reduce), so it will never join this one" in proc.stderr \
        and "ran more batches or collectives than it" in proc.stderr, proc.stderr
    assert "stuck in native code" not in proc.stderr and "timed out" not in proc.stderr, proc.stderr
    assert seconds < 30, f"the job must end well before the 4 s timeout's report, took {seconds:.1f} s"


@pytest.mark.parametrize("nproc", [2, 3])
def test_ranks_waiting_for_one_that_finished_fail_at_once_not_at_the_timeout(nproc):
    # the last rank runs one batch fewer and returns from its script; the others wait for it in their last
    # backward's all-reduce, with a 60 s timeout: they fail as soon as it has finished, naming it and its last
    # collective (started with the job, so the deadline includes the ranks' start-up)
    proc, seconds = launch("fewer_batches", nproc=nproc, timeout=90)
    last = nproc - 1
    assert proc.returncode != 0
    assert f"rank {last} has finished its script (it returned from it) having issued 4 operation(s) on this " \
        "communicator (its last was #4, all_reduce), so it will never join this one" in proc.stderr, proc.stderr
    assert "DistributedDataParallel: the all-reduce of gradient bucket 0 (iteration 3) did not complete" \
        in proc.stderr and "timed out" not in proc.stderr, proc.stderr
    assert f"rank {last} failed" not in proc.stderr, proc.stderr
    assert seconds < 25, f"the job must end long before the 60 s timeout, took {seconds:.1f} s"


def test_watchdog_reports_name_a_rank_that_issued_another_collective():
    """The report's sentences, from given answers (the ranks' own states), without MPI."""
    from ember.distributed.watchdog import Watchdog

    class Comm:
        index, world_ranks, issued = 0, [0, 1, 2, 3], 7

        @staticmethod
        def name_of(number):
            return {7: "allreduce", 6: "allreduce"}.get(number)

    dog = Watchdog.__new__(Watchdog)
    dog.ask = lambda index, ranks, number: {
        1: {"issued": 9, "waiting": [9, "allreduce"], "op": "broadcast"},  # its #7 was another collective
        2: {"issued": 7, "waiting": None, "op": "allreduce"},  # reached it
        3: {"issued": 5, "waiting": [6, "barrier"], "op": None},  # behind, and its #6 is not ours
    }
    text = dog.report(Comm, 7, "allreduce")
    assert "rank 1 is OUT OF STEP: its operation #7 on this communicator was broadcast, this rank's is allreduce" \
        in text and "it has issued 9 operation(s), this rank 7" in text, text
    assert "rank 2 reached it" in text
    assert "rank 3 did NOT arrive" in text and "waiting in operation #6 (barrier), where this rank's operation #6 " \
        "was allreduce" in text, text


def test_collectives_from_two_threads_at_different_speeds_are_not_a_deadlock():
    """Each rank blocked for seconds in a collective the other has not issued, on two communicators, one per thread:
    the other rank's second thread issues it, so the job completes (a deadlock named here would kill a correct
    program)."""
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", "--timeout", "60",
           os.path.join("tests", "dist_scripts", "collectives_on_two_threads.py")]
    proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True,
                          timeout=90)
    assert proc.returncode == 0, proc.stderr
    assert "rank 0 completed" in proc.stdout and "rank 1 completed" in proc.stdout, proc.stdout

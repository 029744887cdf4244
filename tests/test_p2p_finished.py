"""A send or receive whose peer rank has finished its script fails at once, naming that rank (the collectives'
finished-rank check, ember/distributed/watchdog.py), instead of waiting for the launcher's timeout; a message
sent just before its sender finished still arrives. Real ranks, ember's launcher (tests/dist_scripts/p2p_finished.py)."""

import os
import subprocess
import sys
import time

import pytest

pytest.importorskip("mpi4py")

from conftest import ROOT  # noqa: E402

SCRIPT = os.path.join("tests", "dist_scripts", "p2p_finished.py")


def launch(mode, timeout=90):
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", "--timeout", str(timeout - 10),
           SCRIPT, mode]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True,
                          timeout=timeout)
    return proc, time.monotonic() - start


@pytest.mark.parametrize("mode,message", [
    ("recv_from_finished", "recv from rank 1 cannot complete on rank 0 (group of 2): rank 1 has finished its script"),
    ("recv_any_finished", "recv from every other rank cannot complete on rank 0 (group of 2): every other rank has "
                          "finished its script"),
    ("send_to_finished", "send to rank 1 cannot complete on rank 0 (group of 2): rank 1 has finished its script"),
])
def test_p2p_with_a_finished_rank_fails_at_once(mode, message):
    proc, seconds = launch(mode)
    assert proc.returncode != 0
    assert message in proc.stderr and "timed out" not in proc.stderr, proc.stderr
    # the 60 s process-group timeout is never reached: the check looks every 0.1 s once the peer's record exists
    # (the margin is for the ranks' start-up on a loaded machine)
    assert seconds < 45, f"the job must end long before the 60 s timeout, took {seconds:.1f} s"


def test_a_message_sent_before_its_sender_finished_arrives():
    proc, _ = launch("sent_then_finished")
    assert proc.returncode == 0, proc.stderr
    assert "received [0.0, 1.0, 2.0]" in proc.stdout, proc.stdout

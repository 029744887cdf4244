"""Checkpoints consistent across ranks: every failure during a DDP run's checkpointing resumes bit-identically.

Real ranks started by ember's launcher with ``--max-restarts`` run tests/dist_scripts/dcp_training.py, which
saves every step with ``ember.distributed.checkpoint`` and resumes from ``latest_checkpoint``. One rank's
write hits a full disk, a rank is killed between the step's all-reduce and its save, or the whole launcher
is killed mid-save (then started again): the final parameters equal an uninterrupted run's bit for bit. The
first test shows what each rank saving its own file leads to: ranks restart one step apart and wait.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("mpi4py")

import ember  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "dist_scripts", "dcp_training.py")
STEPS, FAIL_STEP = 6, 2


def launch(folder, nproc, recipe="dcp", fail=None, job_timeout=60, **popen):
    env = {**os.environ, "PYTHONPATH": ROOT}
    if fail:  # the last rank fails, or the coordinator when it is its .metadata
        env.update(FAIL=fail, FAIL_RANK=str(0 if fail == "metadata" else nproc - 1), FAIL_STEP=str(FAIL_STEP))
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), "--max-restarts", "2",
           "--timeout", str(job_timeout), SCRIPT, str(folder), str(STEPS), recipe]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **popen)


def finish(proc, deadline=90):
    try:
        out, err = proc.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: the launcher and its ranks
        proc.communicate()  # reaped, its pipes closed (not left to the garbage collector, which warns)
        raise
    return proc.returncode, out + err


def final(folder):
    return [p.numpy() for p in ember.load(os.path.join(folder, "final.pt"))]


def same(a, b):
    return len(a) == len(b) and all((x == y).all() and x.dtype == y.dtype for x, y in zip(a, b))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    runs = {}
    for nproc in (2, 3):
        folder = tmp_path_factory.mktemp(f"full{nproc}")
        code, log = finish(launch(folder, nproc, start_new_session=True))
        assert code == 0, log
        runs[nproc] = final(folder)
    return runs


def test_per_rank_files_restart_one_step_apart_and_fail(tmp_path):
    """Each rank saving its own file: rank 1's save fails, every rank restarts from its own file, rank 0
    one step ahead; the job cannot finish: rank 0 ends its script first and rank 1, waiting in an all-reduce rank 0
    never joins, fails at once naming it (it used to wait for the launcher's --timeout)."""
    code, log = finish(launch(tmp_path, 2, recipe="files", fail="enospc", job_timeout=60, start_new_session=True))
    assert code not in (0, 124), log
    assert "rank 0 has finished its script" in log, log
    assert f"rank 0 attempt 1 starts at step {FAIL_STEP + 1}" in log and f"rank 1 attempt 1 starts at step {FAIL_STEP}" in log


@pytest.mark.parametrize("nproc", [2, 3])
@pytest.mark.parametrize("fail", ["enospc", "kill", "metadata"])
def test_a_failed_save_resumes_every_rank_from_the_last_complete_step(fail, nproc, uninterrupted, tmp_path):
    code, log = finish(launch(tmp_path, nproc, fail=fail, start_new_session=True))
    assert code == 0, log
    assert "restarting every rank (restart 1 of --max-restarts 2)" in log, log
    for rank in range(nproc):
        assert f"rank {rank} attempt 1 starts at step {FAIL_STEP}" in log, log
    if fail != "kill":
        assert "No space left on device" in log and "is incomplete" in log, log
    assert same(final(tmp_path), uninterrupted[nproc])


@pytest.mark.parametrize("nproc", [2, 3])
def test_the_launcher_killed_mid_save_resumes_from_the_last_complete_step(nproc, uninterrupted, tmp_path):
    proc = launch(tmp_path, nproc, fail="hang", start_new_session=True)
    marker = tmp_path / "hanging"
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), finish(proc)[1]
    os.killpg(proc.pid, signal.SIGKILL)  # the launcher and every rank, as when the node goes down
    proc.communicate(timeout=30)
    half = tmp_path / f"step_{FAIL_STEP + 1:04d}"
    assert (half / f"__{nproc - 1}_0.distcp").exists() and not (half / ".metadata").exists()
    assert ember.distributed.checkpoint.latest_checkpoint(tmp_path) == str(tmp_path / f"step_{FAIL_STEP:04d}")
    code, log = finish(launch(tmp_path, nproc, start_new_session=True))
    assert code == 0, log
    for rank in range(nproc):
        assert f"rank {rank} attempt 0 starts at step {FAIL_STEP}" in log, log
    assert same(final(tmp_path), uninterrupted[nproc])

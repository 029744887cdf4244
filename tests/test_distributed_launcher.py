"""The launcher: failures stop the whole job within seconds, name the rank, and leave no process behind."""

import os
import re
import subprocess
import sys
import time
import uuid

import pytest

pytest.importorskip("mpi4py")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "dist_scripts")
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")


def processes_with(token):
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    found.append(int(pid))
        except (OSError, ValueError):
            pass
    return found


def launch(*args, nproc=2, timeout=60, direct=False):
    """Run fail.py under the launcher (or mpiexec directly); return (rc, stderr, seconds, token)."""
    token = uuid.uuid4().hex
    script = [os.path.join(SCRIPTS, "fail.py"), *map(str, args), token]
    if direct:
        cmd = [MPIEXEC, "-n", str(nproc), sys.executable, *script]
    else:
        cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), "--timeout", "40", *script]
    env = {**os.environ, "PYTHONPATH": ROOT}
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    elapsed = time.monotonic() - start
    time.sleep(0.2)  # mpiexec's cleanup of killed ranks is asynchronous
    leftovers = processes_with(token)
    assert not leftovers, f"processes left behind: {leftovers}\n{proc.stderr}"
    return proc.returncode, proc.stderr, elapsed


@pytest.mark.parametrize("mode,nproc,bad,reason", [
    ("raise", 2, 1, "ValueError: rank 1 gave up"),
    ("raise", 3, 0, "ValueError: rank 0 gave up"),
    ("preinit", 2, 1, "ValueError: rank 1 gave up before init"),
    ("exit", 2, 0, "SystemExit: exited with code 3"),
])
def test_failing_rank_stops_the_job_and_is_named(mode, nproc, bad, reason):
    rc, err, seconds = launch(mode, bad, nproc=nproc)
    assert rc != 0, err
    assert f"ember.distributed.run: rank {bad} failed: {reason}" in err, err
    assert f"[ember rank {bad}]" in err and seconds < 15, (seconds, err)
    other = 1 - bad if nproc == 2 else 1
    assert f"rank {other} failed" not in err, err


def test_killed_rank_stops_the_job():
    rc, err, seconds = launch("kill", 1)
    assert rc != 0 and "rank 1 failed" in err and "without a Python exception" in err, err
    assert seconds < 15


def test_stuck_rank_is_reported_by_the_waiting_rank():
    rc, err, seconds = launch("stuck", 1)  # process-group timeout 1.5 s
    assert rc != 0, err
    assert re.search(r"rank 0 failed: RuntimeError: ember.distributed: all_reduce.* timed out after 1.5 s on rank 0", err), err
    assert seconds < 15


def test_job_timeout_stops_everything():
    token_args = ("sleep", 0)
    token = uuid.uuid4().hex
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", "--timeout", "2",
           os.path.join(SCRIPTS, "fail.py"), *map(str, token_args), token]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 124 and "exceeded --timeout 2 s" in proc.stderr, proc.stderr
    assert time.monotonic() - start < 10
    time.sleep(0.2)
    assert not processes_with(token)


def test_direct_mpiexec_uses_the_excepthook():
    rc, err, seconds = launch("raise", 1, direct=True)
    assert rc != 0 and "[ember rank 1] ValueError: rank 1 gave up" in err, err
    assert seconds < 15


def test_launcher_errors():
    run = lambda *a: subprocess.run([sys.executable, "-m", "ember.distributed.run", *a], cwd=ROOT,
                                    capture_output=True, text=True, timeout=30)
    p = run("--nproc-per-node", "0", "x.py")
    assert p.returncode != 0 and "--nproc-per-node must be >= 1" in p.stderr
    p = run("--mpiexec", "/nonexistent/mpiexec", "x.py")
    assert p.returncode != 0 and "is not an executable" in p.stderr
    p = run("--nnodes", "2", "x.py")
    assert p.returncode != 0 and "needs --hosts" in p.stderr


def test_module_mode_runs_a_pytorch_script_unmodified():
    # -m runs a module as `python -m` would: here ember.compat, which runs the seed's DDP program on ember
    seed = "/work/shared/seed_examples/ddp_train.py"
    if not os.path.exists(seed):
        pytest.skip("seed examples not present")
    p = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", "--timeout", "40",
                        "-m", "ember.compat", seed], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "ddp_train: world=2 replicas identical" in p.stdout, p.stdout + p.stderr

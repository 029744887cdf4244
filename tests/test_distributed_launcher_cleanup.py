"""A job the launcher stops leaves no file behind: MPICH's proxy removes its topology file
(/tmp/hydra_hwloc_xmlfile_*) only when it exits normally, so the launcher removes the ones its proxies held."""

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

pytest.importorskip("mpi4py")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "dist_scripts", "fail.py")
ENV = {**os.environ, "PYTHONPATH": ROOT}


def ranks(token: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                line = f.read()
        except OSError:
            continue
        if token.encode() in line and b"ember.distributed._bootstrap" in line:
            found.append(int(pid))
    return found


def parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rpartition(")")[2].split()[1])


def topology_files(pid: int) -> set[str]:
    out = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if os.path.basename(target).startswith("hydra_hwloc_xmlfile_"):
            out.add(target)
    return out


def wait_until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


# A SIGKILLed launcher is not in the list: its guard process does not yet remove the proxies' files reliably
# (they die with mpiexec before the guard reads which files they held, about two runs in three here) — open work.
@pytest.mark.parametrize("stop", ["SIGINT", "failing rank"])
def test_a_stopped_job_leaves_no_topology_file(stop):
    token = uuid.uuid4().hex
    mode = "sleep" if stop != "failing rank" else "slowraise"
    launcher = subprocess.Popen([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2",
                                 "--timeout", "60", SCRIPT, mode, "1", token], cwd=ROOT, env=ENV,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: len(ranks(token)) == 2, 30, "both ranks")
        proxies = {parent(parent(rank)) for rank in ranks(token)}  # rank <- supervisor <- MPICH's proxy
        files: set[str] = set()
        deadline = time.monotonic() + 20
        while not files and time.monotonic() < deadline and launcher.poll() is None:  # (made at MPI_Init)
            files = set().union(*map(topology_files, proxies))
            time.sleep(0.05)
        if not files:
            pytest.skip("this MPI's proxies hold no topology file")
        assert all(os.path.exists(f) for f in files)
        if stop != "failing rank":
            launcher.send_signal(getattr(signal, stop))
        _, err = launcher.communicate(timeout=60)
        assert launcher.returncode != 0, err
        wait_until(lambda: not any(os.path.exists(f) for f in files), 30, f"{files} to be removed ({err})")  # (the guard process cleans up after a SIGKILLed launcher: seconds under load)
    finally:
        if launcher.poll() is None:
            launcher.kill()
        for pid in ranks(token):
            os.kill(pid, signal.SIGKILL)

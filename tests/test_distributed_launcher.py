"""The launcher: failures stop the whole job within seconds, name the rank that failed first, leave no process
behind, whoever dies (a rank, the launcher); signals and restarts follow torchrun's conventions."""

import os
import re
import select
import signal
import subprocess
import sys
import time
import uuid

import pytest

pytest.importorskip("mpi4py")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "dist_scripts")
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")
LAUNCHER = [sys.executable, "-m", "ember.distributed.run"]
ENV = {**os.environ, "PYTHONPATH": ROOT}


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


def parent(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rpartition(")")[2].split()[1])


def wait_until(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def assert_nothing_left(token, detail=""):
    # mpiexec's cleanup of killed ranks is asynchronous: give it a moment
    deadline = time.monotonic() + 5
    while processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not processes_with(token), f"processes left behind: {processes_with(token)}\n{detail}"


def launch(*args, nproc=2, timeout=60, direct=False, flags=()):
    """Run fail.py under the launcher (or mpiexec directly); return (rc, stderr, seconds)."""
    token = uuid.uuid4().hex
    script = [os.path.join(SCRIPTS, "fail.py"), *map(str, args), token]
    if direct:
        cmd = [MPIEXEC, "-n", str(nproc), sys.executable, *script]
    else:
        cmd = [*LAUNCHER, "--nproc-per-node", str(nproc), "--timeout", "40", *flags, *script]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=timeout)
    elapsed = time.monotonic() - start
    assert_nothing_left(token, proc.stderr)
    return proc.returncode, proc.stderr, elapsed


@pytest.mark.parametrize("mode,nproc,bad,reason", [
    ("raise", 2, 1, "ValueError: rank 1 gave up"),
    ("raise2", 2, 1, "ValueError: rank 1 gave up on two lines"),
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
    assert "BAD TERMINATION" not in err, err  # the launcher's report replaces MPICH's banner
    assert "MPI_Abort" not in err, err  # and MPICH's "Abort(1) on node ..." line, which only repeats it
    assert "_bootstrap.py" not in err and "runpy" not in err, err  # the traceback starts in the user's script


def test_rank_report_reaches_the_console_even_when_mpiexec_does_not_forward_it():
    # The race behind a flaky report: a rank prints its report and aborts MPI; mpiexec may be stopped before it
    # forwards the lines. With the rank's stderr sent to a log file, mpiexec never forwards them at all: the
    # launcher must print the report from the rank's record.
    rc, err, _ = launch("exit", 0, flags=("--redirects", "0:2"))
    assert rc == 3, err
    assert "[ember rank 0] exited with code 3\n" in err, err
    assert err.count("[ember rank 0] exited with code 3") == 1, err


def test_report_is_printed_once_when_mpiexec_forwarded_it():
    rc, err, _ = launch("raise", 1)
    assert err.count("[ember rank 1] ValueError: rank 1 gave up") == 1, err


def test_killed_rank_is_named_first_with_its_signal():
    rc, err, seconds = launch("killpost", 1)
    assert rc == 128 + signal.SIGKILL, err
    assert "rank 1 failed: killed by signal SIGKILL (the first rank to fail)" in err, err
    assert "rank(s) [0] were stopped because rank 1 failed" in err, err
    assert "rank 0 failed" not in err and "BAD TERMINATION" not in err, err
    assert seconds < 15


def test_rank_killed_before_init_is_named():
    rc, err, seconds = launch("kill", 1)
    assert rc == 128 + signal.SIGKILL and "rank 1 failed: killed by signal SIGKILL" in err, err
    assert "rank 0 failed" not in err and seconds < 15, err


def test_rank_that_vanishes_with_exit_0_after_init_is_named():
    rc, err, seconds = launch("_exit0", 1)
    assert rc == 1, err
    assert "rank 1 failed: exited with code 0 without returning from the script" in err, err
    assert "rank 0 failed" not in err and seconds < 15, err


def test_last_rank_ending_with_os_exit_0_is_a_success():
    rc, err, _ = launch("last_exit0", 0)
    assert rc == 0 and "failed" not in err, err


def test_rank_that_exits_0_before_init_does_not_hang_the_others():
    # Before: rank 0 spun in MPI initialisation forever, waiting for rank 1 (its timeout is 30 s here).
    rc, err, seconds = launch("exit0pre", 1)
    assert rc == 1, err
    assert "rank 1 failed: exited with code 0 before calling init_process_group, while rank(s) [0] wait" in err, err
    assert seconds < 15, seconds


def test_stuck_rank_is_reported_by_the_waiting_rank():
    rc, err, seconds = launch("stuck", 1)  # process-group timeout 1.5 s
    assert rc != 0, err
    assert re.search(r"rank 0 failed: RuntimeError: ember.distributed: all_reduce.* timed out after 1.5 s on rank 0", err), err
    assert "rank(s) [1] were stopped because rank 0 failed" in err, err
    assert seconds < 15


def test_job_timeout_stops_everything_without_mpich_banner():
    rc, err, seconds = launch("sleep", 0, flags=("--timeout", "3"))
    assert rc == 124 and "exceeded --timeout 3 s" in err, err
    assert "BAD TERMINATION" not in err and "ranks still running: [0, 1]" in err, err
    # stopped by the 3 s timeout, long before the ranks' 60 s sleep ends (start-up and teardown of two ranks took
    # 12.1 s on a loaded 2-CPU machine: a 12 s bound measured the machine, not the launcher)
    assert seconds < 30, seconds


def test_output_filter_holds_back_only_mpich_banner():
    from ember.distributed._job import _Forward

    banner = ("\n" + "=" * 83 + "\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 1 RUNNING AT vm\n"
              "=   EXIT CODE: 9\n" + "=" * 83 + "\nYOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\n"
              "This typically refers to a problem with your application.\n"
              "Please see the FAQ page for debugging suggestions\n")
    user = "epoch 1\n" + "=" * 83 + "\n= a user's boxed line =\n\nYOUR APPLICATION is mine\n"
    forward = _Forward(None, None)
    lines = (user + banner + "done\n").encode().split(b"\n")[:-1]
    assert b"".join(forward._lines(lines)).decode() == user + "done\n"
    assert b"".join(forward.banner).decode() == banner


def test_output_filter_keeps_partial_lines_in_order():
    """A line that arrives in pieces (a progress line, MPI's forwarding) is written as it comes, and the
    newline that ends it is not taken for an empty line (which could begin the banner) and held back."""
    from ember.distributed._job import _Forward

    forward = _Forward(None, None)
    pieces = [b"  step 2/8, loss 2.3", b"\n  step 4/8", b", loss 2.1\n", b"epoch 1 done\n", b"\n", b"next\n"]
    written = b"".join(forward._chunk(p) for p in pieces) + forward._end()
    assert written == b"".join(pieces)


def test_direct_mpiexec_uses_the_excepthook():
    rc, err, seconds = launch("raise", 1, direct=True)
    assert rc != 0 and "[ember rank 1] ValueError: rank 1 gave up" in err, err
    assert seconds < 15


_REPORTING_RANK = """
import ember.distributed._errors as errors
print("start", flush=True)
try:
    raise ValueError("rank 1 gave up")
except ValueError as exc:
    errors.report_failure(1, exc)  # MPI is not initialised: the abort after the report does nothing
print("aborting", flush=True)
"""


def test_a_rank_under_plain_mpiexec_aborts_once_its_report_is_read():
    """MPICH's mpiexec exits on the first MPI_Abort it hears of, dropping what a rank's output pipe still holds (an
    empty standard error, now and then, on a loaded machine). A failing rank aborts only once its report has been
    read from the pipe: here nobody reads it for 2 s, and the rank must wait that long."""
    env = {k: v for k, v in ENV.items() if k != "EMBER_RUN_DIR"}  # a plain mpiexec: no launcher's directory
    proc = subprocess.Popen([sys.executable, "-c", _REPORTING_RANK], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        out = b""
        while b"start\n" not in out:
            chunk = os.read(proc.stdout.fileno(), 1024)
            assert chunk, proc.communicate()
            out += chunk
        waiting, _, _ = select.select([proc.stdout], [], [], 2.0)
        assert out == b"start\n" and not waiting, "the rank went on to abort with its report unread"
        report = b""
        while b"ValueError: rank 1 gave up" not in report:
            chunk = os.read(proc.stderr.fileno(), 1 << 16)
            assert chunk, report
            report += chunk
        assert report.startswith(b"[ember rank 1] Traceback"), report
        rest, _ = proc.communicate(timeout=60)
        assert rest == b"aborting\n" and proc.returncode == 0
    finally:
        proc.kill()
        proc.communicate()


def _start(mode, token, *flags, tmpdir=None, args=()):
    env = ENV if tmpdir is None else {**ENV, "TMPDIR": str(tmpdir)}
    script = [os.path.join(SCRIPTS, "fail.py"), mode, "0", token] if not args else list(args)
    return subprocess.Popen([*LAUNCHER, "--nproc-per-node", "2", "--timeout", "60", *flags, *script], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ranks(token, kind=b"ember.distributed._bootstrap"):
    found = []
    for pid in processes_with(token):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if kind in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def test_sigkill_to_the_launcher_leaves_no_process_and_no_directory(tmp_path):
    token = uuid.uuid4().hex
    launcher = _start("sleepchild", token, tmpdir=tmp_path)
    try:
        wait_until(lambda: len(_ranks(token)) == 2 and len(_ranks(token, b"import time")) == 2
                   and os.listdir(tmp_path), 30, "both ranks and their children")
        time.sleep(0.5)
        ours = processes_with(token)
        proxies = {parent(parent(rank)) for rank in _ranks(token)}  # rank <- supervisor <- mpiexec's proxy
        launcher.kill()
        launcher.communicate(timeout=30)
        assert_nothing_left(token)
        wait_until(lambda: not any(os.path.exists(f"/proc/{p}") for p in proxies | set(ours)), 5, "the proxies")
        wait_until(lambda: not os.listdir(tmp_path), 5, "the temporary directory to be removed")
    finally:
        for pid in processes_with(token):
            os.kill(pid, signal.SIGKILL)


def test_ctrl_c_stops_the_ranks_quietly_with_130():
    token = uuid.uuid4().hex
    launcher = _start("interrupt", token)
    wait_until(lambda: len(_ranks(token)) == 2, 30, "both ranks")
    time.sleep(1.0)  # into their sleep
    start = time.monotonic()
    launcher.send_signal(signal.SIGINT)
    out, err = launcher.communicate(timeout=30)
    assert launcher.returncode == 130, err
    assert "Traceback" not in err and "BAD TERMINATION" not in err, err
    assert "received SIGINT" in err and "stopped by SIGINT" in err, err
    assert time.monotonic() - start < 10
    assert_nothing_left(token, err)


def test_sigterm_gives_the_ranks_a_grace_period_to_save(tmp_path):
    launcher = _start("", "", "--grace-period", "20",
                      args=(os.path.join(SCRIPTS, "graceful.py"), str(tmp_path), "handler"))
    wait_until(lambda: {"ready-0", "ready-1"} <= set(os.listdir(tmp_path)), 30, "both ranks")
    start = time.monotonic()
    launcher.send_signal(signal.SIGTERM)
    out, err = launcher.communicate(timeout=40)
    assert launcher.returncode == 128 + signal.SIGTERM, err
    for rank in (0, 1):
        assert (tmp_path / f"final-{rank}").read_text() == f"saved on signal {int(signal.SIGTERM)}"
    assert time.monotonic() - start < 10, "ranks that stopped by themselves must not wait for the grace period"
    assert "Traceback" not in err, err


def test_ranks_ignoring_sigterm_are_killed_after_the_grace_period(tmp_path):
    launcher = _start("", "", "--grace-period", "1",
                      args=(os.path.join(SCRIPTS, "graceful.py"), str(tmp_path), "ignore"))
    wait_until(lambda: {"ready-0", "ready-1"} <= set(os.listdir(tmp_path)), 30, "both ranks")
    start = time.monotonic()
    launcher.send_signal(signal.SIGTERM)
    out, err = launcher.communicate(timeout=40)
    assert launcher.returncode == 128 + signal.SIGTERM, err
    assert 1 <= time.monotonic() - start < 8
    assert "killed the ranks still running: [0, 1]" in err, err


def test_a_second_signal_kills_the_ranks_at_once(tmp_path):
    launcher = _start("", "", "--grace-period", "60",
                      args=(os.path.join(SCRIPTS, "graceful.py"), str(tmp_path), "ignore"))
    wait_until(lambda: {"ready-0", "ready-1"} <= set(os.listdir(tmp_path)), 30, "both ranks")
    start = time.monotonic()
    launcher.send_signal(signal.SIGINT)
    time.sleep(0.5)
    launcher.send_signal(signal.SIGINT)
    out, err = launcher.communicate(timeout=40)
    assert launcher.returncode == 130 and time.monotonic() - start < 8, err


def test_launcher_errors():
    run = lambda *a: subprocess.run([*LAUNCHER, *a], cwd=ROOT, capture_output=True, text=True, timeout=30)
    p = run("--nproc-per-node", "0", "x.py")
    assert p.returncode != 0 and "--nproc-per-node must be >= 1" in p.stderr
    p = run("--mpiexec", "/nonexistent/mpiexec", "x.py")
    assert p.returncode != 0 and "is not an executable" in p.stderr
    p = run("--nnodes", "2", "x.py")
    assert p.returncode != 0 and "needs --hosts" in p.stderr


def test_module_mode_runs_a_pytorch_script_unmodified():
    # -m runs a module as `python -m` would: here ember.compat, which runs a PyTorch DDP program on ember
    p = subprocess.run([*LAUNCHER, "--nproc-per-node", "2", "--timeout", "40", "-m", "ember.compat",
                        os.path.join(SCRIPTS, "torch_ddp.py")], cwd=ROOT, env=ENV, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and "torch_ddp: world=2 replicas identical" in p.stdout, p.stdout + p.stderr

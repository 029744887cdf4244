"""bench/run_all.py: options it cannot honour are usage errors, before any child process runs; the timing child's
blocks, rounds measured again and their order, on a fake clock."""

import os
import subprocess
import sys

import pytest
from conftest import ROOT


def test_processes_below_one_is_a_usage_error():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run_all.py"), "--processes", "0",
                          "--threads", "1"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--processes must be at least 1, got 0" in out.stderr, out.stderr[-500:]


def test_cpu_share_above_one_is_a_usage_error():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run_all.py"), "--min-cpu-share", "1.5",
                          "--threads", "1"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--min-cpu-share must be between 0 and 1, got 1.5" in out.stderr, out.stderr[-500:]


def test_cpu_share_window_accounts_missing_ticks_and_other_processes(monkeypatch):
    """The gate's arithmetic: ticks the kernel never accounted lower the share; busy ticks beyond the process's own
    CPU time are the other processes'."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import _cpu_share
    finally:
        sys.path.pop(0)
    ticks = iter([(1000, 400), (1060, 430)])  # 60 ticks accounted of 100 (0.5 s on 2 CPUs at 100 Hz), 30 busy
    own = iter([2.0, 2.1])  # the process itself: 0.1 s = 10 ticks of the 30 busy ones
    clock = iter([10.0, 10.5])
    monkeypatch.setattr(_cpu_share, "_ticks", lambda: next(ticks))
    monkeypatch.setattr(_cpu_share, "_own_seconds", lambda: next(own))
    monkeypatch.setattr(_cpu_share.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(_cpu_share.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_cpu_share.os, "sysconf", lambda name: 100)
    share, others = _cpu_share.Window().measure()
    assert abs(share - 0.6) < 1e-12 and abs(others - 0.2) < 1e-12


def _run_all(monkeypatch, window_shares):
    """bench/run_all.py as a module, its children's workloads replaced by one step function per framework that
    advances a fake clock (the first step by 0.25 s: compilation, the others by 2^-10 s, binary fractions so that
    the arithmetic is exact) and records which framework ran; ``window_shares``: what each timing block's window
    reports in turn: the CPU share, a pair (the share, the other processes' part), or None (no /proc/stat)."""
    import types

    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import run_all
    finally:
        sys.path.pop(0)
    now = [0.0]
    calls: list[str] = []

    def build(fw, batch):
        steps_run = []

        def step(i):
            now[0] += 2**-10 if steps_run else 0.25
            steps_run.append(i)
            calls.append(fw.__name__)
        return step

    shares = iter(window_shares)

    class Window:
        def measure(self):
            share = next(shares)
            return share if share is None or isinstance(share, tuple) else (share, 0.0)

    monkeypatch.setitem(sys.modules, "workloads", types.SimpleNamespace(WORKLOADS={"fake": (build, 1, "fake")}))
    def settle():
        calls.append("settle")

    monkeypatch.setitem(sys.modules, "_cpu_share", types.SimpleNamespace(Window=Window, settle=settle))
    monkeypatch.setattr(run_all.time, "perf_counter", lambda: now[0])
    monkeypatch.setenv("OMP_NUM_THREADS", str(__import__("torch").get_num_threads()))
    monkeypatch.setenv("EMBER_BENCH_MIN_SHARE", "0.9")
    monkeypatch.setenv("EMBER_BENCH_MIN_BLOCK_S", str(50 * 2**-10))
    return run_all, calls


def test_blocks_last_min_block_s_whatever_the_first_step_took(monkeypatch):
    """A first step that takes 0.25 s (a kernel compiled) does not shorten the blocks: ~1 ms steps, blocks of at
    least 50 of them (an average over the warm-up gave 4 steps, 4 ms: less than a tick on two CPUs)."""
    run_all, _ = _run_all(monkeypatch, [1.0] * 4)
    result = run_all.child_steps(["fake"], rounds=2, steps=4)["fake"]
    assert result["steps"] == 50 and result["kept"] == 2 and result["discarded"] == 0
    assert result["torch"] == result["ember"] == 1000 * 2**-10


def test_rounds_measured_again_keep_alternating_which_framework_runs_first(monkeypatch):
    """Every other attempt is discarded (a low share in its first block): the four rounds kept still run PyTorch
    first, ember first, PyTorch first, ember first."""
    shares = [1.0, 1.0, 0.5, 1.0] * 4
    run_all, calls = _run_all(monkeypatch, shares)
    result = run_all.child_steps(["fake"], rounds=4, steps=4)["fake"]
    assert result["kept"] == 4 and result["discarded"] == 3
    calls = [c for c in calls if c != "settle"]
    firsts = calls[10::50]  # after the two warm-ups (5 steps each), the first framework of each 50-step block
    kept_firsts = [first for k, first in enumerate(firsts[::2]) if k % 2 == 0]
    assert kept_firsts == ["torch", "ember", "torch", "ember"], firsts


def test_no_round_kept_is_an_error_that_says_why(monkeypatch):
    run_all, _ = _run_all(monkeypatch, [0.5] * 16)
    with pytest.raises(RuntimeError, match=r"fake: no round ran with 0.90 of the CPUs to itself \(median accounted "
                                           r"share 0.50"):
        run_all.child_steps(["fake"], rounds=2, steps=4)


def test_without_proc_stat_every_round_is_kept(monkeypatch):
    run_all, _ = _run_all(monkeypatch, [None] * 4)
    result = run_all.child_steps(["fake"], rounds=2, steps=4)["fake"]
    assert result["kept"] == 2 and result["discarded"] == 0 and result["share"] is None


@pytest.mark.parametrize("option, value, message", [
    ("--min-block-s", "nan", "--min-block-s must be a finite number of seconds, 0 or more, got nan"),
    ("--min-block-s", "inf", "--min-block-s must be a finite number of seconds, 0 or more, got inf"),
    ("--min-block-s", "-1", "--min-block-s must be a finite number of seconds, 0 or more, got -1.0"),
    ("--rounds", "0", "--rounds must be at least 1, got 0"),
    ("--steps", "0", "--steps must be at least 1, got 0"),
])
def test_block_rounds_and_steps_it_cannot_honour_are_usage_errors(option, value, message):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run_all.py"), option, value, "--threads", "1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and message in out.stderr, out.stderr[-500:]


def test_other_processes_busy_in_a_block_measure_the_round_again(monkeypatch):
    """All the ticks accounted, but other processes used 0.4 of the CPUs (above ``OTHERS_LIMIT``) in one block."""
    run_all, _ = _run_all(monkeypatch, [(1.0, 0.0), (1.0, 0.4), (1.0, 0.2), (1.0, 0.0), (1.0, 0.0), (1.0, 0.0)])
    result = run_all.child_steps(["fake"], rounds=2, steps=4)["fake"]
    assert result["kept"] == 2 and result["discarded"] == 1


def test_cpu_time_rounds_are_never_measured_again(monkeypatch):
    """(The process's CPU time does not count the time the host stopped it, nor other processes'.)"""
    run_all, _ = _run_all(monkeypatch, [(0.5, 0.6)] * 4)
    monkeypatch.setenv("EMBER_BENCH_CPU_TIME", "1")
    result = run_all.child_steps(["fake"], rounds=2, steps=4)["fake"]
    assert result["kept"] == 2 and result["discarded"] == 0


def test_every_block_starts_after_the_other_threads_settle(monkeypatch):
    """Each timed block (both frameworks, every round) starts only once the process's other threads are quiet: a
    two-thread PyTorch block leaves its OpenMP worker spinning for milliseconds into the next block, ember's."""
    run_all, calls = _run_all(monkeypatch, [1.0] * 4)
    run_all.child_steps(["fake"], rounds=2, steps=4)
    timed = calls[10:]  # after the two warm-ups (5 steps each)
    assert timed.count("settle") == 4
    assert [k for k, c in enumerate(timed) if c == "settle"] == [0, 51, 102, 153], timed


def test_settle_waits_for_a_spinning_thread_and_not_longer():
    """``settle`` returns once no other thread of the process has used CPU for a while: after a thread that spins
    for 0.15 s has stopped, and at once (well under its limit) when nothing spins."""
    import threading
    import time

    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import _cpu_share
    finally:
        sys.path.pop(0)
    if not os.path.exists("/proc/self/task"):
        pytest.skip("no /proc: nothing to wait on")
    end = time.perf_counter() + 0.15
    stopped = []

    def spin():
        while time.perf_counter() < end:
            pass
        stopped.append(time.perf_counter())

    spinner = threading.Thread(target=spin)
    spinner.start()
    waited = _cpu_share.settle()
    assert stopped and time.perf_counter() >= stopped[0], "settle returned while the other thread still spun"
    spinner.join()
    assert waited < 1.0
    assert _cpu_share.settle() < 0.2

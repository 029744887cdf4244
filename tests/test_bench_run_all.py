"""bench/run_all.py's command line: options it cannot honour are usage errors, before any child process runs."""

import os
import subprocess
import sys

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

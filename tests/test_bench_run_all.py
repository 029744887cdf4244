"""bench/run_all.py's command line: options it cannot honour are usage errors, before any child process runs."""

import os
import subprocess
import sys

from conftest import ROOT


def test_processes_below_one_is_a_usage_error():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run_all.py"), "--processes", "0",
                          "--threads", "1"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--processes must be at least 1, got 0" in out.stderr, out.stderr[-500:]

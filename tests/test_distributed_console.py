"""What a 2-rank job shows on the console: each rank's lines whole (never run into another rank's, though print
writes a line's text and its newline apart under PYTHONUNBUFFERED=1, as mpiexec then passes them on), the tee log
the same lines; and a rank stuck in a collective reported as stuck in what the program called."""

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")

from conftest import ROOT  # noqa: E402

SCRIPT = os.path.join("tests", "dist_scripts", "console_lines.py")


def launch(mode, *flags, env=(), timeout=90):
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", "--timeout", str(timeout - 20),
           *flags, SCRIPT, mode]
    return subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT, **dict(env)}, capture_output=True,
                          text=True, timeout=timeout)


def whole_lines(text: str, kind: str, fill: str, count: int) -> None:
    lines = text.splitlines()
    broken = [line for line in lines if not re.fullmatch(rf"rank [01] {kind} \d+ {fill}{{40}}", line)]
    assert not broken, f"lines run together: {broken[:3]}"
    for rank in (0, 1):
        assert [int(line.split()[3]) for line in lines if line.startswith(f"rank {rank} ")] == list(range(count))


def test_each_ranks_lines_arrive_whole_under_pythonunbuffered():
    proc = launch("lines", env={"PYTHONUNBUFFERED": "1"})
    assert proc.returncode == 0, proc.stderr
    whole_lines(proc.stdout, "line", "x", 2200)
    whole_lines(proc.stderr, "err", "y", 2000)


def test_tee_copies_whole_lines_to_the_console_and_the_logs(tmp_path):
    proc = launch("lines", "--log-dir", str(tmp_path), "--tee", "3", env={"PYTHONUNBUFFERED": "1"})
    assert proc.returncode == 0, proc.stderr
    whole_lines(proc.stdout, "line", "x", 2200)
    for rank in (0, 1):
        logs = [os.path.join(root, f) for root, _, files in os.walk(tmp_path) for f in files
                if f == "stdout.log" and os.path.basename(root) == str(rank)]
        assert len(logs) == 1, logs
        with open(logs[0]) as f:
            text = f.read()
        assert text.splitlines() == [f"rank {rank} line {i} " + "x" * 40 for i in range(2200)]


@pytest.mark.parametrize("call", ["all_reduce", "all_gather_object", "all_gather_single",
                                  "ZeroRedundancyOptimizer.consolidate_state_dict", "ZeroRedundancyOptimizer.step",
                                  "checkpoint.save"])
@pytest.mark.parametrize("checks", ["1", "0"], ids=["checked", "unchecked"])
def test_stuck_rank_timeout_names_the_programs_collective(call, checks):
    # ZeRO's step and dcp.save named their inner broadcast / all_gather_object; with the argument checks off
    # (EMBER_COLLECTIVE_CHECKS=0), every call named the collective that carried its payload
    if checks == "0" and call in ("all_reduce", "all_gather_single"):
        pytest.skip("named alike either way: the call is the collective")
    proc = launch(f"stuck_{call}", env={"EMBER_COLLECTIVE_CHECKS": checks})
    assert proc.returncode != 0
    assert f"rank 0 failed: RuntimeError: ember.distributed: {call} timed out after 1.5 s on rank 0" in proc.stderr, \
        proc.stderr
    assert "argument check" not in proc.stderr, proc.stderr

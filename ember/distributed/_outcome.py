"""Reading the ranks' records (``_records.py``): which rank failed first, how, and which ranks it took down.

A rank has failed when it raised or exited non-zero (its own ``error`` record), was
killed by a signal or ended without returning from the script (``os._exit``; its
supervisor's ``exit`` record), or its supervisor vanished. A rank that exited 0
before ``init_process_group`` while another waits there fails the job too: MPI
initialisation needs every rank, so the waiting rank would spin forever.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass

from . import _records


@dataclass
class Failure:
    rank: int
    time: float
    code: int          # the launcher's exit code for it: the rank's code, or 128 + signal
    reason: str        # one line: "ValueError: ...", "killed by signal SIGKILL", ...
    report: str = ""   # what the rank printed (its [ember rank R] traceback), if it recorded it
    own: bool = False  # the rank reported it itself (raised, or exited non-zero)
    soft: bool = False  # exit 0 without returning from the script: no failure if every other rank finished


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def _ended(run_dir: str, rank: int) -> tuple[int, float] | None:
    record = _records.read(run_dir, rank, "exit")
    if record is None:
        return None
    code, when = record.split()
    return int(code), float(when)


def _failure(run_dir: str, rank: int, python: bool, agent_gone: bool) -> Failure | None:
    error = _records.read(run_dir, rank, "error")
    if error is not None:
        head, reason, report = (error.split("\n", 2) + ["", ""])[:3]
        code, when = head.split()
        return Failure(rank, float(when), int(code), reason, report, own=True)
    ended = _ended(run_dir, rank)
    if python and _records.read(run_dir, rank, "done") is not None and (ended is None or ended[0] <= 0):
        return None  # its script finished: stopped in MPI's teardown because of another rank, not a failure
    if ended is None:
        if agent_gone:
            return Failure(rank, time.monotonic(), 1, "its process and supervisor were killed (by a signal or "
                                                      "an out-of-memory kill)")
        return None
    code, when = ended
    if code < 0:
        return Failure(rank, when, 128 - code, f"killed by signal {_signal_name(-code)}")
    if code > 0:
        return Failure(rank, when, code, f"exited with code {code}")
    if python and _records.read(run_dir, rank, "done") is None:
        return Failure(rank, when, 1, "exited with code 0 without returning from the script (os._exit?) while "
                                      "the other ranks were running", soft=True)
    return None


def _stalled_init(run_dir: str, world: int, python: bool) -> Failure | None:
    """A rank gone without MPI (exit 0 before init) while another waits in init_process_group for it."""
    if not python:
        return None
    waiting = [r for r in range(world)
               if _records.read(run_dir, r, "init") is not None and _ended(run_dir, r) is None]
    if not waiting:
        return None
    for rank in range(world):
        ended = _ended(run_dir, rank)
        if ended is not None and ended[0] == 0 and _records.read(run_dir, rank, "init") is None:
            timeout = float(_records.read(run_dir, waiting[0], "init").split()[0])
            return Failure(rank, ended[1], 1, (
                f"exited with code 0 before calling init_process_group, while rank(s) {waiting} wait for it in "
                "init_process_group: MPI initialisation needs every rank, so they could never continue (the "
                f"job was stopped now instead of after their {timeout:g} s timeout); every rank must call "
                "init_process_group, or none"))
    return None


def failures(run_dir: str, world: int, python: bool, gone: set[int] = frozenset()) -> list[Failure]:
    """Every failed rank, earliest first (``gone``: ranks whose supervisor vanished without a record)."""
    found = [f for r in range(world) if (f := _failure(run_dir, r, python, r in gone)) is not None]
    finished = {r for r in range(world) if _records.read(run_dir, r, "done") is not None}
    if all(f.soft for f in found) and finished | {f.rank for f in found} == set(range(world)):
        found = []  # the others finished their script, these ended it with os._exit(0): a success
    if not found and (stalled := _stalled_init(run_dir, world, python)) is not None:
        found = [stalled]
    return sorted(found, key=lambda f: f.time)


def all_finished(run_dir: str, world: int) -> bool:
    """Every rank's script returned or it exited with 0: mpiexec's own code does not matter then (MPICH kills
    ranks still in MPI's teardown when one ends with os._exit(0), and reports that)."""
    return all(_records.read(run_dir, r, "done") is not None or (_ended(run_dir, r) or (1,))[0] == 0
               for r in range(world))


def ended_without_finalising(run_dir: str, world: int) -> list[int]:
    """The ranks that exited with 0 without returning from the script (os._exit(0)): they never finalised MPI."""
    return [r for r in range(world)
            if _records.read(run_dir, r, "done") is None and (_ended(run_dir, r) or (1,))[0] == 0]


def all_finalizing(run_dir: str, ranks: list[int]) -> bool:
    """Every one of ``ranks`` is in MPI's finalisation: its script and its threads have ended."""
    return all(_records.read(run_dir, r, "finalizing") is not None for r in ranks)


def describe(found: list[Failure], run_dir: str, world: int) -> list[str]:
    """The launcher's lines: the first failure, then what happened to the others because of it."""
    first, later = found[0], [f for f in found[1:] if f.own]
    lines = [f"rank {first.rank} failed: {first.reason} (the first rank to fail)"]
    for other in later:
        delay = other.time - first.time
        lines.append(f"rank {other.rank} also reported a failure, {delay:.2f} s later: {other.reason}")
    stopped = [r for r in range(world) if r not in {f.rank for f in [first, *later]}
               and _records.read(run_dir, r, "done") is None]
    if stopped:
        lines.append(f"rank(s) {stopped} were stopped because rank {first.rank} failed")
    return lines

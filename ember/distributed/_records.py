"""Small files through which the ranks tell ``ember.distributed.run`` how they are doing.

Standard library only: the per-rank supervisor (``_agent.py``) imports it by file,
without importing ember. The launcher sets ``EMBER_RUN_DIR`` to a directory of its
own (one per restart attempt); each rank R writes there:

- ``R.pid``    (supervisor) "host supervisor_pid parent_pid rank_pid": what to stop;
- ``R.init``   (rank) ``init_process_group`` started: "timeout_s time";
- ``R.error``  (rank) the script raised or exited non-zero: "code time", the one-line
  reason, then the report the rank printed (``[ember rank R] ...`` lines);
- ``R.done``   (rank) the script returned (or exited 0): "time", then a JSON line: per communicator (creation
  number) how many collectives it issued there and the last one's name (``done_text``);
- ``R.finalizing`` (rank) MPI's finalisation starts (the script and its threads have ended): "time";
- ``R.exit``   (supervisor) the rank's process ended: "returncode time" (a negative
  code is the signal that killed it, as in ``subprocess``).

Times are ``time.monotonic()``: one clock for every process of a host, so records
tell which rank failed first. Outside the launcher (plain mpiexec) nothing is written.
"""

from __future__ import annotations

import json
import os
import time

RUN_DIR_VAR = "EMBER_RUN_DIR"


def record_path(run_dir: str, rank: int, kind: str) -> str:
    return os.path.join(run_dir, f"{rank}.{kind}")


def run_dir() -> str | None:
    """The launcher's record directory, when this process can see it (None outside the launcher or on another node)."""
    path = os.environ.get(RUN_DIR_VAR)
    return path if path and os.path.isdir(path) else None


def write(rank: int, kind: str, text: str) -> bool:
    """Leave ``text`` for the launcher; False when there is no launcher to read it."""
    where = run_dir()
    if where is None:
        return False
    path = record_path(where, rank, kind)
    try:
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)  # the launcher never reads a half-written record
    except OSError:  # the launcher removed the directory while we stopped: nobody will read it
        return False
    return True


def write_rank(kind: str, text: str) -> bool:
    """``write`` for this process's ``RANK`` (set by the launcher before the script runs)."""
    rank = os.environ.get("RANK")
    return rank is not None and write(int(rank), kind, text)


def read(run_dir: str, rank: int, kind: str) -> str | None:
    try:
        with open(record_path(run_dir, rank, kind)) as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def now() -> str:
    return repr(time.monotonic())


def done_text(issued: dict) -> str:
    """A ``done`` record: the time, then ``issued`` ({communicator number: (collectives issued, last one's name)})."""
    return f"{now()}\n{json.dumps({str(index): list(state) for index, state in issued.items()})}"


def done_counts(record: str) -> dict:
    """``done_text``'s ``issued`` back from a record ({} for a record without it)."""
    try:
        return {int(index): tuple(state) for index, state in json.loads(record.split("\n", 1)[1]).items()}
    except (IndexError, ValueError, TypeError, AttributeError):
        return {}

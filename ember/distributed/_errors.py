"""What a failing rank does so that the whole job stops promptly and says why.

It prints its traceback with each line prefixed ``[ember rank R]``, leaves a short
record for the launcher (``ember.distributed.run`` sets ``EMBER_RUN_DIR``: one
``rankR.pid`` file written at start, one ``rankR.exit`` file with the exit code and
the exception), and ends the job with MPI_Abort so that no other rank waits for it.
"""

from __future__ import annotations

import os
import socket
import sys
import traceback

from . import comm

RUN_DIR_VAR = "EMBER_RUN_DIR"


def record_path(run_dir: str, rank: int, kind: str) -> str:
    return os.path.join(run_dir, f"rank{rank}.{kind}")


def write_record(rank: int, kind: str, text: str) -> None:
    """Leave ``text`` for the launcher (nothing when not started by it)."""
    run_dir = os.environ.get(RUN_DIR_VAR)
    if not run_dir or not os.path.isdir(run_dir):  # not under the launcher, or on another node
        return
    path = record_path(run_dir, rank, kind)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)  # the launcher never reads a half-written record


def record_start(rank: int) -> None:
    write_record(rank, "pid", f"{socket.gethostname()} {os.getpid()}")


def report_failure(rank: int, exc: BaseException, code: int = 1) -> None:
    """Print the traceback prefixed with the rank, record it, and abort the MPI job."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip("\n")
    sys.stdout.flush()
    sys.stderr.write("".join(f"[ember rank {rank}] {line}\n" for line in text.split("\n")))
    sys.stderr.flush()
    write_record(rank, "exit", f"{code}\n{type(exc).__name__}: {exc}")
    comm.abort(code)


def report_exit(rank: int, code: int) -> None:
    """A non-zero exit (``sys.exit(n)``) fails the job like an exception does."""
    sys.stdout.flush()
    print(f"[ember rank {rank}] exited with code {code}", file=sys.stderr, flush=True)
    write_record(rank, "exit", f"{code}\nSystemExit: exited with code {code}")
    comm.abort(code)


def install_excepthook(rank: int) -> None:
    """Report an uncaught exception as above (for scripts started by mpiexec directly)."""

    def hook(exc_type, exc, tb):
        report_failure(rank, exc.with_traceback(tb))

    sys.excepthook = hook

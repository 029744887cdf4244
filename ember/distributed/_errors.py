"""What a failing rank does so that the whole job stops promptly and says why.

It prints its traceback with each line prefixed ``[ember rank R]``, leaves a record
for the launcher (``_records.py``: the exit code, the exception, the printed report,
so the launcher can show it even if mpiexec did not forward it in time), and ends the
job with MPI_Abort so that no other rank waits for it.
"""

from __future__ import annotations

import os
import stat
import sys
import time
import traceback

from . import _records, comm
from ._records import RUN_DIR_VAR, record_path  # noqa: F401  (the launcher's names for them)

_BOOTSTRAP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bootstrap.py")


def _report(rank: int, code: int, reason: str, text: str) -> None:
    """Print ``text`` prefixed with the rank and record it with the code and one-line reason."""
    lines = "".join(f"[ember rank {rank}] {line}\n" for line in text.split("\n"))
    sys.stdout.flush()
    sys.stderr.write(lines)
    sys.stderr.flush()
    one_line = " ".join(reason.split("\n"))  # the record's second line (a message may span several)
    _records.write(rank, "error", f"{code} {_records.now()}\n{one_line}\n{lines}")


def _script_frames(tb):
    """``tb`` from the script's first frame on: the frames of the rank's start-up (``_bootstrap``, the compat
    runner, runpy) are ember's, not the user's."""
    from ..compat import program_frames

    return program_frames(tb, (_BOOTSTRAP,))


def report_failure(rank: int, exc: BaseException, code: int = 1) -> None:
    """Print the traceback prefixed with the rank, record it, and abort the MPI job."""
    text = "".join(traceback.format_exception(type(exc), exc, _script_frames(exc.__traceback__))).rstrip("\n")
    _report(rank, code, f"{type(exc).__name__}: {exc}", text)
    _abort(code)


def report_exit(rank: int, code: int) -> None:
    """A non-zero exit (``sys.exit(n)``) fails the job like an exception does."""
    _report(rank, code, f"SystemExit: exited with code {code}", f"exited with code {code}")
    _abort(code)


# How long a failing rank started by a plain mpiexec waits for its report to be read before it aborts the job.
_REPORT_READ_S = 10.0


def _abort(code: int) -> None:
    """MPI_Abort, after the report above. Under ember's launcher MPICH's own "Abort(1) on node ..." banner would
    only repeat the report (which the launcher also reads from the rank's record, should mpiexec not forward
    it), so standard error is closed to it; under a plain mpiexec the stream stays as it is, the console being
    the report's only way out, and the abort waits until the report has been read from it."""
    if comm.is_initialized() and os.environ.get(RUN_DIR_VAR):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    elif not os.environ.get(RUN_DIR_VAR):
        _wait_until_read((1, 2), _REPORT_READ_S)
    comm.abort(code)


def _wait_until_read(fds: tuple[int, ...], seconds: float) -> None:
    """Return once the pipes among ``fds`` hold nothing unread (at most ``seconds``).

    MPICH's mpiexec ends the job on the first MPI_Abort it hears of: it kills its proxies and exits at once, and
    what a proxy had not yet taken from a rank's output pipe is never shown. The report is written before the
    abort, but the two reach the proxy by different channels (a pipe, a socket) that nothing orders: a proxy not
    scheduled in between (a loaded machine) can find both waiting and pass the abort on first, and the job ends
    with an empty standard error. Once the pipe is empty the proxy has read the report, before the abort."""
    try:
        import fcntl
        import termios
    except ImportError:  # not a POSIX system: nothing to ask
        return
    deadline = time.monotonic() + seconds
    for fd in fds:
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):  # a terminal or a file: written is shown
                continue
            unread = bytearray(4)
            while True:
                fcntl.ioctl(fd, termios.FIONREAD, unread)
                if int.from_bytes(unread, sys.byteorder) == 0 or time.monotonic() >= deadline:
                    break
                time.sleep(0.01)
        except OSError:  # closed, or a system whose pipes do not answer FIONREAD: nothing to wait for
            continue


def report_interrupt(rank: int) -> None:
    """KeyboardInterrupt (Ctrl-C, or SIGINT forwarded by the launcher): one line, no traceback, exit 130.

    MPI is neither aborted nor finalized: the others were interrupted too (or are stopped
    by the launcher), and finalizing would wait for them.
    """
    _report(rank, 130, "KeyboardInterrupt", "interrupted (KeyboardInterrupt)")
    os._exit(130)


def record_init(timeout_s: float) -> None:
    """``init_process_group`` starts: MPI initialisation needs every rank (the launcher watches for ones gone)."""
    _records.write_rank("init", f"{timeout_s!r} {_records.now()}")


def record_done(rank: int) -> None:
    """The script returned (or exited 0); with how far it went on each communicator, which lets a rank still waiting
    for it in a collective fail at once (``watchdog.finished_without``)."""
    _records.write(rank, "done", _records.done_text(comm.operations_issued()))


def install_excepthook(rank: int) -> None:
    """Report an uncaught exception as above (for scripts started by mpiexec directly)."""

    def hook(exc_type, exc, tb):
        report_failure(rank, exc.with_traceback(tb))

    sys.excepthook = hook

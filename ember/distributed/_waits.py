"""How long this thread has waited, in two kinds: blocked in communication (for other ranks), and ready to run while
the operating system ran other processes (for a core).

The straggler rule (``straggler.py``) needs both. The first is what a slower rank costs the others. The second is
time a rank did not spend on its own work: on a loaded or oversubscribed machine every rank loses such time, now
one, now another, and the others then wait for it although its program is no slower than theirs. Linux counts the
second for each thread as its run-queue delay, the second number of ``/proc/thread-self/schedstat``
(nanoseconds spent runnable but not running); where that file is missing (another system, a kernel built without
scheduler statistics) it reads as zero, and only the communication waits are known.

Counters are per thread: a DDP model's iterations run on one thread, while the watchdog's responder and a user's
own threads communicate on theirs.
"""

from __future__ import annotations

import os
import threading
import time

_SCHEDSTAT = "/proc/thread-self/schedstat"


class _Schedstat:
    """This thread's schedstat file, open (``/proc/thread-self`` names the opening thread), closed when the thread
    ends: its ``threading.local`` value is dropped then, and with it this object."""
    __slots__ = ("fd",)

    def __init__(self) -> None:
        self.fd = os.open(_SCHEDSTAT, os.O_RDONLY)

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


class _Counters(threading.local):
    def __init__(self) -> None:
        self.blocked_ns = 0  # wall time spent in communication waits
        self.queued_in_waits_ns = 0  # run-queue delay during those waits
        self.file: _Schedstat | None = None


_here = _Counters()
_available = os.path.exists(_SCHEDSTAT)
if hasattr(os, "register_at_fork"):  # (a forked child's copy names the parent's thread: its own is opened anew)
    os.register_at_fork(after_in_child=lambda: setattr(_here, "file", None))


def run_queue_ns() -> int:
    """This thread's run-queue delay so far (nanoseconds runnable but not running); 0 where it is not known."""
    global _available
    if not _available:
        return 0
    try:
        if _here.file is None:
            _here.file = _Schedstat()
        return int(os.pread(_here.file.fd, 128, 0).split()[1])
    except (OSError, IndexError, ValueError):  # (not Linux's format after all: stop asking)
        _available = False
        return 0


def begin() -> tuple[int, int]:
    """Mark the start of a communication wait; pass the result to ``end``."""
    return time.perf_counter_ns(), run_queue_ns()


def end(began: tuple[int, int]) -> None:
    """Count a communication wait that ``begin`` marked the start of."""
    now, queued = time.perf_counter_ns(), run_queue_ns()
    _here.blocked_ns += now - began[0]
    _here.queued_in_waits_ns += queued - began[1]


def snapshot() -> tuple[int, int, int, int]:
    """(now, blocked in communication, run-queue delay during those waits, run-queue delay in all), this thread's
    totals in nanoseconds: the difference of two snapshots is what happened between them."""
    return time.perf_counter_ns(), _here.blocked_ns, _here.queued_in_waits_ns, run_queue_ns()

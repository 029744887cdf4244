"""How ``Work.wait`` polls an operation that is not complete yet (ember/distributed/comm.py): flat out (yielding the
core now and then) for its first 50 ms, then sleeping between polls, 1 ms at most while the wait is young and 5 ms
once it has lasted 100 ms (a late rank: polling less often costs less CPU per second waited). One process, a fake
MPI request that completes at a set time."""

import time

from ember.distributed import comm


class _Request:
    def __init__(self, after_s: float) -> None:
        self.done_at = time.monotonic() + after_s
        self.tests = 0

    def Test(self) -> bool:  # noqa: N802  (mpi4py's spelling)
        self.tests += 1
        return time.monotonic() >= self.done_at


class _Comm:
    """The communicator fields a Work reads (a point-to-point one: no collective numbering, no watchdog)."""
    timeout = 30.0
    waiting = None
    issued = 0
    world_rank = 0
    size = 2


def _wait(after_s: float, monkeypatch) -> tuple[list[tuple[float, float]], int]:
    """Wait for a request that completes ``after_s`` from now: each sleep's (start, counted from the wait's, and
    length), and how many times the request was tested."""
    pauses: list[tuple[float, float]] = []
    sleep = time.sleep
    began = time.monotonic()

    def recorded(seconds):
        pauses.append((time.monotonic() - began, seconds))
        sleep(seconds)

    monkeypatch.setattr(comm.time, "sleep", recorded)
    request = _Request(after_s)
    work = comm.Work(request, "send", _Comm())
    assert work.wait() is True
    return pauses, request.tests


def test_a_long_wait_polls_every_5_ms(monkeypatch):
    pauses, _ = _wait(0.4, monkeypatch)
    lengths = [length for _, length in pauses]
    assert max(lengths) == 5e-3, sorted(set(lengths))
    # 1 ms at most while the wait is young; 5 ms ones only after 100 ms (the clock read before the first sleep)
    assert all(length <= 1e-3 for at, length in pauses if at < 0.1), pauses
    # Past the spin: about 0.05 s / 1 ms polls, then 0.3 s / 5 ms ones (1 ms polls throughout were 350; a loaded
    # machine, whose sleeps run long, makes fewer)
    assert len(pauses) < 200, len(pauses)


def test_a_short_wait_is_polled_flat_out(monkeypatch):
    pauses, tests = _wait(0.01, monkeypatch)
    # (no sleep before the 50 ms of polling have passed: a machine that kept this process waiting longer may see one)
    assert tests > 1 and all(at >= 0.05 for at, _ in pauses), (pauses, tests)

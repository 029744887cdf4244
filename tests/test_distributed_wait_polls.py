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


def _wait(after_s: float, monkeypatch) -> tuple[list[float], int, float]:
    pauses: list[float] = []
    sleep = time.sleep

    def recorded(seconds):
        pauses.append(seconds)
        sleep(seconds)

    monkeypatch.setattr(comm.time, "sleep", recorded)
    request = _Request(after_s)
    work = comm.Work(request, "send", _Comm())
    began = time.monotonic()
    assert work.wait() is True
    return pauses, request.tests, time.monotonic() - began


def test_a_long_wait_polls_every_5_ms(monkeypatch):
    pauses, tests, took = _wait(0.4, monkeypatch)
    assert max(pauses) == 5e-3, sorted(set(pauses))
    assert all(p <= 1e-3 for p in pauses[:20]), pauses[:20]  # (1 ms at most while the wait is young)
    # Past the spin: about 0.05 s / 1 ms polls, then 0.3 s / 5 ms ones (1 ms polls throughout were 350)
    assert len(pauses) < 200, len(pauses)
    assert took < 0.4 + 0.1, took  # (a sleep is at most 5 ms: the completion is seen soon after)


def test_a_short_wait_is_polled_flat_out(monkeypatch):
    pauses, tests, took = _wait(0.01, monkeypatch)
    assert pauses == [] and tests > 1 and took < 0.05, (pauses, tests, took)
